#include "../helpers.hpp"

#include "audio/wav.hpp"

#include <cstdint>
#include <string>

namespace {

void put16(std::string& b, std::uint16_t v) {
  b.push_back(char(v & 0xFF));
  b.push_back(char(v >> 8));
}
void put32(std::string& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(char((v >> (8 * i)) & 0xFF));
}

// A WAV file of 16-bit PCM: `channels` interleaved, `data_size` as written in the data chunk's header.
std::string wav_bytes(const std::vector<std::int16_t>& samples, std::uint16_t channels, std::uint32_t rate,
                      std::uint16_t bits = 16, std::uint32_t data_size = 0, bool extra_chunk = false) {
  std::string fmt, b;
  put16(fmt, 1);  // PCM
  put16(fmt, channels);
  put32(fmt, rate);
  put32(fmt, rate * channels * bits / 8);
  put16(fmt, std::uint16_t(channels * bits / 8));
  put16(fmt, bits);
  std::string data;
  for (std::int16_t s : samples) put16(data, std::uint16_t(s));
  std::string body = "WAVEfmt ";
  put32(body, std::uint32_t(fmt.size()));
  body += fmt;
  if (extra_chunk) {  // a LIST chunk of odd size, padded
    body += "LIST";
    put32(body, 3);
    body += "abc";
    body.push_back('\0');
  }
  body += "data";
  put32(body, data_size ? data_size : std::uint32_t(data.size()));
  body += data;
  b = "RIFF";
  put32(b, std::uint32_t(body.size()));
  return b + body;
}

}  // namespace

TEST_CASE("audio::parse_wav reads 16-bit PCM, mono and stereo, past other chunks") {
  const auto mono = attn::audio::parse_wav(wav_bytes({0, 16384, -32768, 32767}, 1, 22050), "mono");
  CHECK(mono.sample_rate == 22050);
  CHECK(xt::allclose(mono.samples, xt::xarray<double>{0.0, 0.5, -1.0, 32767.0 / 32768.0}, 0.0, 0.0));
  const auto stereo = attn::audio::parse_wav(wav_bytes({100, 300, -200, 0}, 2, 16000, 16, 0, true), "stereo");
  CHECK(xt::allclose(stereo.samples, xt::xarray<double>{200.0 / 32768.0, -100.0 / 32768.0}, 0.0, 0.0));
}

TEST_CASE("audio::parse_wav reads a streamed data chunk, whose size is a placeholder, to the end") {
  for (std::uint32_t placeholder : {0x7FFFF000u, 0xFFFFFFFFu}) {  // espeak-ng --stdout's, and others'
    CAPTURE(placeholder);
    const auto w = attn::audio::parse_wav(wav_bytes({1, 2, 3}, 1, 22050, 16, placeholder), "stdout");
    CHECK(w.samples.size() == 3);
  }
}

TEST_CASE("audio::parse_wav and read_wav name the file and what is wrong") {
  using attn::audio::parse_wav;
  CHECK_THROWS_WITH_AS(parse_wav("hello", "'x.wav'"), doctest::Contains("'x.wav': not a WAV file"), attn::IOError);
  CHECK_THROWS_WITH_AS(parse_wav(wav_bytes({1, 2}, 1, 8000, 8), "a"), doctest::Contains("only 16-bit integer PCM"), attn::IOError);
  CHECK_THROWS_WITH_AS(parse_wav(wav_bytes({1, 2}, 1, 8000, 16, 400), "a"), doctest::Contains("truncated"), attn::IOError);
  std::string no_data = wav_bytes({1, 2}, 1, 8000);
  no_data.resize(no_data.size() - 12);  // cut inside the data chunk's header
  CHECK_THROWS_WITH_AS(parse_wav(no_data, "a"), doctest::Contains("no 'data' chunk"), attn::IOError);
  CHECK_THROWS_WITH_AS(attn::audio::read_wav("/nonexistent/dir/x.wav"), doctest::Contains("cannot open '/nonexistent/dir/x.wav'"), attn::IOError);
}
