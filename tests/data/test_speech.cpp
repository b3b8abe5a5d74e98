// Spoken digits: espeak-ng's voices exist, the splits keep the held-out voices out of training,
// the same seed gives the same bits at any number of threads, and the features and batches
// have the shapes and statistics data/speech.hpp promises. Needs espeak-ng, as tests/audio/test_speak.cpp.
#include "../helpers.hpp"

#include "data/speech.hpp"

#include <xtensor/xview.hpp>

#include <algorithm>
#include <cmath>
#include <set>

using namespace attn::data;
using attn::audio::Voice;

namespace {

bool same(const SpeechExample& a, const SpeechExample& b) {
  return a.text == b.text && a.voice.language == b.voice.language && a.voice.variant == b.voice.variant &&
         a.voice.speed == b.voice.speed && a.voice.pitch == b.voice.pitch && a.features.shape() == b.features.shape() &&
         a.features == b.features;  // every bit
}

bool same(const std::vector<SpeechExample>& a, const std::vector<SpeechExample>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same(a[i], b[i])) return false;
  return true;
}

bool contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// Sets the number of attn's threads for a scope.
struct Threads {
  explicit Threads(int n) : before(attn::get_num_threads()) { attn::set_num_threads(n); }
  ~Threads() { attn::set_num_threads(before); }
  int before;
};

}  // namespace

TEST_CASE("speech: the fixed lists of words, accents and voices") {
  CHECK(digit_words().size() == 10);
  CHECK(digit_words()[7] == "seven");
  CHECK(speech_languages().size() == 7);
  const auto& train = training_variants();
  const auto& held = held_out_variants();
  CHECK(train.size() == 74);
  CHECK(held.size() == 6);
  CHECK(std::set<std::string>(train.begin(), train.end()).size() == train.size());
  for (const auto& v : held) {
    CAPTURE(v);
    CHECK_FALSE(contains(train, v));
  }
}

TEST_CASE("speech: every accent and every variant named in the source is one espeak-ng has") {
  // espeak-ng says an unknown variant in the plain voice, and an unknown accent in another
  // accent, without an error: so a name exists when its audio differs from the fallback's.
  const auto samples = [](const std::string& language, const std::string& variant) {
    return attn::audio::speak("one", Voice{language, variant, 160, 50}).samples;
  };
  const xt::xarray<double> plain = samples("en-us", "");
  CHECK(samples("en-us", "NoSuchVariant") == plain);  // the check below can fail
  std::vector<std::string> variants = training_variants();
  variants.insert(variants.end(), held_out_variants().begin(), held_out_variants().end());
  for (const auto& v : variants) {
    CAPTURE(v);
    CHECK(samples("en-us", v) != plain);
  }
  std::vector<xt::xarray<double>> accents;
  for (const auto& language : speech_languages()) accents.push_back(samples(language, ""));
  for (std::size_t i = 0; i < accents.size(); ++i)
    for (std::size_t j = i + 1; j < accents.size(); ++j) {
      CAPTURE(speech_languages()[i]);
      CAPTURE(speech_languages()[j]);
      CHECK(accents[i] != accents[j]);
    }
  const xt::xarray<double> unknown = samples("en-nope", "");  // falls back to an accent of the list
  CHECK(std::any_of(accents.begin(), accents.end(), [&](const auto& a) { return a == unknown; }));
}

TEST_CASE("spoken_digits: the same seed gives the same bits, at one thread or two") {
  SpeechSplit a, b;
  {
    Threads one(1);
    a = spoken_digits(6, 2, 2, 5);
  }
  {
    Threads two(2);
    b = spoken_digits(6, 2, 2, 5);
  }
  CHECK(same(a.train, b.train));
  CHECK(same(a.valid, b.valid));
  CHECK(same(a.test, b.test));
  // speak_example computes one utterance as spoken_digits does.
  CHECK(same(speak_example(a.train[0].text, a.train[0].voice), a.train[0]));
  // Each split has its own generator: the test set does not depend on n_train.
  CHECK(same(spoken_digits(2, 2, 2, 5).test, a.test));
  // data/speech.hpp's example: the first training utterance of seed 1, whatever n_train.
  const SpeechExample first = spoken_digits(1, 0, 0, 1).train.at(0);
  CHECK(first.text == "three six four two two");
  CHECK(attn::audio::voice_name(first.voice) == "en-gb-scotland+iven4");
  CHECK(first.voice.speed == 145);
  CHECK(first.voice.pitch == 51);
  const SpeechSplit other = spoken_digits(6, 0, 0, 6);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < 6; ++i) differ += other.train[i].text != a.train[i].text;
  CHECK(differ > 0);
}

TEST_CASE("spoken_digits: held-out variants speak the test split only; transcripts are digit words") {
  SpeechOptions o;
  o.max_words = 4;
  o.min_speed = 140;
  o.max_speed = 150;
  o.min_pitch = 20;
  o.max_pitch = 25;
  const SpeechSplit s = spoken_digits(40, 10, 10, 11, o);
  REQUIRE(s.train.size() == 40);
  REQUIRE(s.valid.size() == 10);
  REQUIRE(s.test.size() == 10);
  std::set<std::string> words_seen, languages_seen;
  for (const auto* part : {&s.train, &s.valid, &s.test})
    for (const SpeechExample& e : *part) {
      CAPTURE(e.text);
      CAPTURE(attn::audio::voice_name(e.voice));
      const bool test = part == &s.test;
      CHECK(contains(test ? held_out_variants() : training_variants(), e.voice.variant));
      CHECK_FALSE(contains(test ? training_variants() : held_out_variants(), e.voice.variant));
      CHECK(contains(speech_languages(), e.voice.language));
      CHECK(e.voice.speed >= 140);
      CHECK(e.voice.speed <= 150);
      CHECK(e.voice.pitch >= 20);
      CHECK(e.voice.pitch <= 25);
      // Words joined by single spaces: no leading, trailing or double space.
      const Tokens words = split_whitespace(e.text);
      CHECK(join(words, " ") == e.text);
      CHECK(words.size() >= 1);
      CHECK(words.size() <= 4);
      for (const auto& w : words) {
        CHECK(contains(digit_words(), w));
        words_seen.insert(w);
      }
      languages_seen.insert(e.voice.language);
      CHECK(e.features.dimension() == 2);
      CHECK(e.features.shape(1) == 40);
    }
  CHECK(words_seen.size() == 10);
  CHECK(languages_seen.size() == speech_languages().size());
}

TEST_CASE("speech features: T frames from the trimmed audio's length, 40 bands, CMVN per band") {
  const Voice voice{"en-gb", "f3", 150, 45};
  const SpeechExample e = speak_example("four two", voice);
  const xt::xarray<double> samples = attn::audio::speak("four two", voice).samples;
  const xt::xarray<double> kept = trim_silence(samples, 60);
  CHECK(kept.size() < samples.size());  // espeak-ng's trailing silence is gone
  REQUIRE(kept.size() >= 1024);
  CHECK(e.features.shape(0) == 1 + (kept.size() - 1024) / 220);
  CHECK(e.features.shape(1) == 40);
  for (std::size_t m = 0; m < 40; ++m) {
    CAPTURE(m);
    const auto band = xt::view(e.features, xt::all(), m);
    const double mean = xt::mean(band)();
    const double sd = std::sqrt(xt::mean(xt::square(band - mean))());
    CHECK(std::abs(mean) < 1e-12);
    CHECK(std::abs(sd - 1.0) < 1e-12);
  }
  // No trimming, no floor, no CMVN: log_mel itself, with T = 1 + (S - 1024) / 220.
  SpeechOptions raw;
  raw.trim_db = 0;
  raw.floor_db = 0;
  raw.normalize = false;
  const SpeechExample r = speak_example("four two", voice, raw);
  CHECK(r.features.shape(0) == 1 + (samples.size() - 1024) / 220);
  CHECK(xt::allclose(r.features, attn::audio::log_mel(samples, speech_log_mel_options()), 1e-12, 1e-12));
  // The floor: nothing more than 80 dB below the loudest value.
  SpeechOptions floored = raw;
  floored.floor_db = 80;
  const xt::xarray<double> f = speak_example("four two", voice, floored).features;
  CHECK(xt::amin(r.features)() < xt::amax(r.features)() - 8 * std::log(10.0));  // the floor has work to do
  CHECK(xt::amin(f)() == doctest::Approx(xt::amax(f)() - 8 * std::log(10.0)).epsilon(1e-12));
}

TEST_CASE("trim_silence keeps the first to the last sample within trim_db of the peak") {
  xt::xarray<double> x = xt::zeros<double>({std::size_t(10)});
  x(3) = 0.5;
  x(4) = -0.0004;  // 62 dB below the peak, but inside
  x(6) = -0.001;   // 54 dB below: the last one kept at 60 dB
  x(8) = 0.0001;   // 74 dB below: trimmed
  CHECK(trim_silence(x, 60) == xt::xarray<double>{0.5, -0.0004, 0.0, -0.001});
  CHECK(trim_silence(x, 80).size() == 6);
  CHECK(trim_silence(x, 0).size() == 10);
  CHECK(trim_silence(xt::zeros<double>({std::size_t(5)}), 60).size() == 0);
  CHECK_THROWS_AS(trim_silence(x, -1), attn::ValueError);
}

TEST_CASE("speech_vocab: the specials, the space and the 15 letters of the ten words") {
  const Vocab v = speech_vocab();
  CHECK(v.size() == 20);
  CHECK(v.token(4) == " ");
  CHECK(v.token(5) == "e");
  CHECK(v.token(19) == "z");
  for (const auto& w : digit_words()) CHECK_NOTHROW(v.encode(split_chars(w + " "), /*strict=*/true));
  CHECK(v == speech_vocab());
}

TEST_CASE("make_speech_batch: zero padding, frame lengths, <bos> + text in, text + <eos> out") {
  const SpeechSplit s = spoken_digits(5, 0, 0, 3);
  const Vocab v = speech_vocab();
  const std::vector<std::size_t> indices{4, 0, 2};
  const SpeechBatch b = make_speech_batch(s.train, indices, v);
  REQUIRE(b.size() == 3);
  CHECK(b.indices == indices);
  std::size_t T = 0, U = 0;
  for (std::size_t i : indices) {
    T = std::max(T, s.train[i].features.shape(0));
    U = std::max(U, s.train[i].text.size() + 1);
  }
  const xt::xarray<double> f = b.features.to_array();
  CHECK(b.features.shape() == attn::Shape{3, T, 40});
  CHECK(attn::Shape(b.tgt_in.shape().begin(), b.tgt_in.shape().end()) == attn::Shape{3, U});
  CHECK(attn::Shape(b.tgt_out.shape().begin(), b.tgt_out.shape().end()) == attn::Shape{3, U});
  for (std::size_t r = 0; r < 3; ++r) {
    const SpeechExample& e = s.train[indices[r]];
    CAPTURE(e.text);
    const std::size_t n = e.features.shape(0);
    CHECK(b.lengths[r] == n);
    CHECK(xt::view(f, r, xt::range(0, n), xt::all()) == e.features);
    CHECK(xt::all(xt::equal(xt::view(f, r, xt::range(n, T), xt::all()), 0.0)));
    const std::size_t chars = e.text.size();  // ASCII: one byte a character
    CHECK(b.tgt_lengths[r] == chars + 1);
    CHECK(b.tgt_in(r, 0) == Vocab::bos_id);
    CHECK(b.tgt_out(r, chars) == Vocab::eos_id);
    for (std::size_t u = 0; u < chars; ++u) {
      CHECK(b.tgt_out(r, u) == v.id(std::string(1, e.text[u])));
      CHECK(b.tgt_in(r, u + 1) == b.tgt_out(r, u));
    }
    for (std::size_t u = chars + 1; u < U; ++u) {
      CHECK(b.tgt_in(r, u) == Vocab::pad_id);
      CHECK(b.tgt_out(r, u) == Vocab::pad_id);
    }
    CHECK(join(v.decode(row_ids(b.tgt_out, r)), "") == e.text);
  }
  CHECK(make_speech_batch(s.train, {0}, v, attn::Dtype::Float32).features.dtype() == attn::Dtype::Float32);
  // An epoch of batches sorted by frames within buckets: every utterance once.
  BatchOptions o;
  o.batch_size = 2;
  o.sort_buckets = 2;
  attn::Generator gen(1);
  std::vector<std::size_t> seen;
  for (const SpeechBatch& batch : make_speech_batches(s.train, v, o, gen))
    seen.insert(seen.end(), batch.indices.begin(), batch.indices.end());
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<std::size_t>{0, 1, 2, 3, 4});
  CHECK_THROWS_WITH_AS(make_speech_batch(s.train, {}, v), doctest::Contains("make_speech_batch: expected at least one"),
                       attn::ValueError);
  CHECK_THROWS_WITH_AS(make_speech_batch(s.train, {5}, v), doctest::Contains("index 5 is out of range for 5"),
                       attn::ValueError);
}

TEST_CASE("spoken_digits and speak_example name what is wrong: a missing espeak-ng, options out of range") {
  SpeechOptions o;
  o.program = "/nonexistent";
  CHECK_THROWS_WITH_AS(spoken_digits(3, 1, 1, 1, o), doctest::Contains("cannot run '/nonexistent'"), attn::IOError);
  CHECK_THROWS_WITH_AS(spoken_digits(3, 1, 1, 1, o), doctest::Contains("spoken_digits: saying '"), attn::IOError);
  CHECK_THROWS_WITH_AS(speak_example("one", Voice{}, o), doctest::Contains("cannot run '/nonexistent'"), attn::IOError);
  SpeechOptions bad;
  bad.min_words = 0;
  CHECK_THROWS_WITH_AS(spoken_digits(1, 0, 0, 1, bad), doctest::Contains("spoken_digits: expected 1 <= min_words"),
                       attn::ValueError);
  bad = {};
  bad.max_speed = 500;
  CHECK_THROWS_WITH_AS(spoken_digits(1, 0, 0, 1, bad), doctest::Contains("speeds must be in 80 .. 450"), attn::ValueError);
  bad = {};
  bad.min_pitch = 80;
  CHECK_THROWS_WITH_AS(spoken_digits(1, 0, 0, 1, bad), doctest::Contains("min_pitch <= max_pitch"), attn::ValueError);
  bad = {};
  bad.features.sample_rate = 16000;
  CHECK_THROWS_WITH_AS(speak_example("one", Voice{}, bad), doctest::Contains("options.features.sample_rate"),
                       attn::ValueError);
  // No words, no audio: espeak-ng's near silence is shorter than a frame once trimmed.
  CHECK_THROWS_WITH_AS(speak_example("", Voice{}), doctest::Contains("speak_example: saying '' in voice en-us"),
                       attn::ValueError);
}
