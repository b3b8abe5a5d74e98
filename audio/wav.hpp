// Reading WAV files: the RIFF container with 16-bit integer PCM, what `espeak-ng -w` and
// `espeak-ng --stdout` write (mono, 22,050 samples per second).
//
//   attn::audio::Wave w = attn::audio::read_wav("seven.wav");
//   w.sample_rate;   // 22050
//   w.samples;       // [S] in [-1, 1): each 16-bit sample / 32768, channels averaged
#pragma once

#include <string>
#include <xtensor/xarray.hpp>

namespace attn::audio {

struct Wave {
  double sample_rate = 0;
  xt::xarray<double> samples;  // [S], one channel
};

// The bytes of a WAV file; `where` names them in errors. IOError on anything but 16-bit PCM
// in a well-formed RIFF/WAVE container (the message says what is wrong and at which byte).
Wave parse_wav(const std::string& bytes, const std::string& where);
Wave read_wav(const std::string& path);

}  // namespace attn::audio
