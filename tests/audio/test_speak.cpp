#include "../helpers.hpp"

#include "audio/log_mel.hpp"
#include "audio/speak.hpp"

TEST_CASE("audio::speak: espeak-ng's words read back as a WAV, longer when spoken slower") {
  attn::audio::Voice v{"en-us", "", 160, 50};
  const attn::audio::Wave fast = attn::audio::speak("three seven one", v);
  CHECK(fast.sample_rate == 22050);
  CHECK(fast.samples.size() > 22050 / 2);          // more than half a second of speech
  CHECK(xt::amax(xt::abs(fast.samples))() > 0.05);  // not silence
  v.speed = 100;
  v.variant = "Annie";
  const attn::audio::Wave slow = attn::audio::speak("three seven one", v);
  CHECK(slow.samples.size() > fast.samples.size() * 5 / 4);
  attn::audio::LogMelOptions o;
  o.sample_rate = 22050;
  o.win_length = 551;
  o.hop_length = 220;
  o.n_fft = 1024;
  CHECK(attn::audio::log_mel(slow.samples, o).shape(1) == 40);
}

TEST_CASE("audio::speak names what went wrong: a missing program, an unknown voice, values out of range") {
  using attn::audio::speak;
  using attn::audio::Voice;
  CHECK_THROWS_WITH_AS(speak("one", Voice{}, "no-such-espeak"), doctest::Contains("cannot run 'no-such-espeak'"), attn::IOError);
  CHECK_THROWS_WITH_AS(speak("one", Voice{"xx-nope", "", 160, 50}), doctest::Contains("-v xx-nope"), attn::IOError);
  // espeak-ng's own reason is in the message, not loose on stderr.
  CHECK_THROWS_WITH_AS(speak("one", Voice{"xx-nope", "", 160, 50}), doctest::Contains("voice does not exist"), attn::IOError);
  CHECK_THROWS_AS(speak("one", Voice{"en-us; rm", "", 160, 50}), attn::ValueError);
  CHECK_THROWS_AS(speak("one", Voice{"en-us", "", 20, 50}), attn::ValueError);
  CHECK_THROWS_AS(speak("one", Voice{"en-us", "", 160, 100}), attn::ValueError);
}

// "--" ends espeak-ng's options: a text that starts with '-' is said, not taken for an option.
TEST_CASE("audio::speak says a text that starts with '-'") {
  const attn::audio::Wave w = attn::audio::speak("-v seven", attn::audio::Voice{});
  CHECK(w.samples.size() > 22050 / 2);
  CHECK(xt::amax(xt::abs(w.samples))() > 0.05);
}
