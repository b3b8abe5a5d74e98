// The mel scale and a mel filterbank, as torchaudio builds them (melscale_fbanks with
// mel_scale="htk", norm=None).
//
// The mel scale (Stevens, Volkmann & Newman, 1937; the formula of the HTK toolkit) spaces
// frequencies as pitch is heard, evenly below about 1 kHz and logarithmically above:
//
//   mel(f) = 2595 log10(1 + f / 700),   f(mel) = 700 (10^(mel / 2595) - 1).
//
// A filterbank of M filters puts M + 2 points evenly on the mel scale between f_min and f_max;
// filter m is a triangle over the spectrum's bins, rising from point m to point m + 1 and falling
// to point m + 2 (in Hz), with height 1 at its peak. A frame's power spectrum P [N/2 + 1] times the
// bank [N/2 + 1, M] gives its energy in each band, [M].
//
//   xt::xarray<double> bank = attn::audio::mel_filterbank(512, 16000, 40);   // [257, 40]
#pragma once

#include <cstddef>
#include <xtensor/xarray.hpp>

namespace attn::audio {

double hz_to_mel(double hz);
double mel_to_hz(double mel);

// [n_fft / 2 + 1, n_mels]: column m is filter m over the bins k, at frequency k * sample_rate / n_fft.
// f_max < 0 means sample_rate / 2. ValueError on n_mels == 0, n_fft < 2, or not
// 0 <= f_min < f_max <= sample_rate / 2.
xt::xarray<double> mel_filterbank(std::size_t n_fft, double sample_rate, std::size_t n_mels, double f_min = 0.0,
                                  double f_max = -1.0);

}  // namespace attn::audio
