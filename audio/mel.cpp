#include "mel.hpp"

#include "../core/errors.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace attn::audio {

double hz_to_mel(double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); }
double mel_to_hz(double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0); }

xt::xarray<double> mel_filterbank(std::size_t n_fft, double sample_rate, std::size_t n_mels, double f_min,
                                  double f_max) {
  const std::string op = "audio::mel_filterbank";
  if (f_max < 0) f_max = sample_rate / 2;
  if (n_mels == 0) throw ValueError(op + ": n_mels must be positive");
  if (n_fft < 2) throw ValueError(op + ": n_fft must be at least 2, got " + std::to_string(n_fft));
  if (!(sample_rate > 0) || !(0 <= f_min && f_min < f_max && f_max <= sample_rate / 2))
    throw ValueError(op + ": expected 0 <= f_min < f_max <= sample_rate / 2, got f_min " + std::to_string(f_min) +
                     ", f_max " + std::to_string(f_max) + ", sample_rate " + std::to_string(sample_rate));
  const std::size_t n_freqs = n_fft / 2 + 1;
  // The bins' frequencies, 0 .. sample_rate / 2 in n_freqs even steps (torchaudio takes
  // sample_rate // 2 as the top: the same for an even rate).
  const double top = std::floor(sample_rate / 2);
  std::vector<double> freq(n_freqs);
  for (std::size_t k = 0; k < n_freqs; ++k) freq[k] = top * double(k) / double(n_freqs - 1);
  // M + 2 points evenly spaced in mel, back in Hz.
  const double m_lo = hz_to_mel(f_min), m_hi = hz_to_mel(f_max);
  std::vector<double> point(n_mels + 2);
  for (std::size_t i = 0; i < n_mels + 2; ++i)
    point[i] = mel_to_hz(m_lo + (m_hi - m_lo) * double(i) / double(n_mels + 1));
  xt::xarray<double> bank = xt::zeros<double>({n_freqs, n_mels});
  for (std::size_t m = 0; m < n_mels; ++m)
    for (std::size_t k = 0; k < n_freqs; ++k) {
      const double rise = (freq[k] - point[m]) / (point[m + 1] - point[m]);      // 0 at point m, 1 at m + 1
      const double fall = (point[m + 2] - freq[k]) / (point[m + 2] - point[m + 1]);  // 1 at m + 1, 0 at m + 2
      bank(k, m) = std::max(0.0, std::min(rise, fall));
    }
  return bank;
}

}  // namespace attn::audio
