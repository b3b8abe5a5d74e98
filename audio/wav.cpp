#include "wav.hpp"

#include "../core/errors.hpp"

#include <cstdint>
#include <fstream>
#include <sstream>

namespace attn::audio {

namespace {

std::uint32_t u32(const std::string& b, std::size_t at) {
  return std::uint32_t(std::uint8_t(b[at])) | std::uint32_t(std::uint8_t(b[at + 1])) << 8 |
         std::uint32_t(std::uint8_t(b[at + 2])) << 16 | std::uint32_t(std::uint8_t(b[at + 3])) << 24;
}
std::uint16_t u16(const std::string& b, std::size_t at) {
  return std::uint16_t(std::uint8_t(b[at]) | std::uint8_t(b[at + 1]) << 8);
}

}  // namespace

Wave parse_wav(const std::string& b, const std::string& where) {
  auto fail = [&](const std::string& what) { return IOError("audio::read_wav: " + where + ": " + what); };
  if (b.size() < 12 || b.compare(0, 4, "RIFF") != 0 || b.compare(8, 4, "WAVE") != 0)
    throw fail("not a WAV file (no RIFF/WAVE header in the first 12 bytes)");
  std::size_t channels = 0, bits = 0;
  double rate = 0;
  // Chunks follow the header: a 4-byte id, a 4-byte size, the data, padded to an even size.
  // A writer to a pipe cannot seek back to write the data's size, so it writes a placeholder:
  // espeak-ng --stdout 0x7FFFF000, others 0xFFFFFFFF. Such a size means "to the end".
  for (std::size_t at = 12; at + 8 <= b.size();) {
    const std::string id = b.substr(at, 4);
    const std::uint32_t size = u32(b, at + 4);
    const std::size_t body = at + 8;
    if (id == "fmt ") {
      if (size < 16 || body + 16 > b.size()) throw fail("a 'fmt ' chunk too short at byte " + std::to_string(at));
      const std::uint16_t format = u16(b, body);
      channels = u16(b, body + 2);
      rate = double(u32(b, body + 4));
      bits = u16(b, body + 14);
      if (format != 1 || bits != 16)
        throw fail("only 16-bit integer PCM is read, got format " + std::to_string(format) + " with " +
                   std::to_string(bits) + " bits per sample");
      if (channels == 0 || rate <= 0) throw fail("no channels or no sample rate in 'fmt '");
    } else if (id == "data") {
      if (!channels) throw fail("a 'data' chunk before the 'fmt ' chunk, at byte " + std::to_string(at));
      const std::size_t available = b.size() - body;
      const bool streamed = size >= 0x7FFF0000u && size > available;  // a placeholder, not a size
      const std::size_t bytes = streamed ? available : std::size_t(size);
      if (bytes > available)
        throw fail("the 'data' chunk claims " + std::to_string(bytes) + " bytes, the file holds " +
                   std::to_string(available) + " after byte " + std::to_string(body) + " (truncated?)");
      const std::size_t frames = bytes / (2 * channels);
      Wave w;
      w.sample_rate = rate;
      w.samples = xt::zeros<double>({frames});
      for (std::size_t i = 0; i < frames; ++i) {
        double sum = 0;
        for (std::size_t c = 0; c < channels; ++c) sum += double(std::int16_t(u16(b, body + 2 * (i * channels + c))));
        w.samples(i) = sum / double(channels) / 32768.0;
      }
      return w;
    }
    at = body + size + (size & 1);
  }
  throw fail("no 'data' chunk");
}

Wave read_wav(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError("audio::read_wav: cannot open '" + path + "'");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return parse_wav(bytes.str(), "'" + path + "'");
}

}  // namespace attn::audio
