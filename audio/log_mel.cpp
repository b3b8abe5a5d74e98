#include "log_mel.hpp"

#include "../core/errors.hpp"
#include "../core/ops.hpp"
#include "fft.hpp"
#include "mel.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <xtensor/xview.hpp>

namespace attn::audio {

xt::xarray<double> hann_window(std::size_t length) {
  const double pi = std::acos(-1.0);
  xt::xarray<double> w = xt::zeros<double>({length});
  for (std::size_t n = 0; n < length; ++n) w(n) = 0.5 - 0.5 * std::cos(2.0 * pi * double(n) / double(length));
  return w;
}

xt::xarray<double> log_mel(const xt::xarray<double>& samples, const LogMelOptions& o) {
  const std::string op = "audio::log_mel";
  if (samples.dimension() != 1)
    throw ShapeError(op + ": expected one channel of samples [S], got " + std::to_string(samples.dimension()) +
                     " dimensions");
  if (o.win_length == 0 || o.hop_length == 0)
    throw ValueError(op + ": win_length and hop_length must be positive, got " + std::to_string(o.win_length) +
                     " and " + std::to_string(o.hop_length));
  if ((o.n_fft & (o.n_fft - 1)) != 0 || o.n_fft < o.win_length)
    throw ValueError(op + ": n_fft must be a power of two >= win_length (" + std::to_string(o.win_length) + "), got " +
                     std::to_string(o.n_fft));
  if (!(o.log_floor > 0)) throw ValueError(op + ": log_floor must be positive");
  const xt::xarray<double> bank = mel_filterbank(o.n_fft, o.sample_rate, o.n_mels, o.f_min, o.f_max);  // [K, M]
  const std::size_t S = samples.size();
  const std::size_t T = S < o.n_fft ? 0 : 1 + (S - o.n_fft) / o.hop_length;  // as torch.stft(center=False)
  // The window padded to n_fft, centred as torch.stft centres a shorter window.
  const xt::xarray<double> hann = hann_window(o.win_length);
  const std::size_t left = (o.n_fft - o.win_length) / 2;
  if (T == 0) return xt::zeros<double>({std::size_t(0), o.n_mels});
  xt::xarray<double> power = xt::zeros<double>({T, o.n_fft / 2 + 1});  // [T, K]
  xt::xarray<double> frame = xt::zeros<double>({o.n_fft});
  for (std::size_t t = 0; t < T; ++t) {
    // The frame's n_fft samples from t * hop; the padded window's zeros cancel all but the
    // win_length in its middle.
    frame.fill(0.0);
    for (std::size_t n = 0; n < o.win_length; ++n) frame(left + n) = samples(t * o.hop_length + left + n) * hann(n);
    xt::view(power, t, xt::all()) = power_spectrum(frame);  // [K]
  }
  // [T, K] x [K, M] -> [T, M]: attn's matmul, one BLAS product for all frames
  const xt::xarray<double> energy = matmul(Tensor(std::move(power)), Tensor(bank)).to_array();
  return xt::log(xt::maximum(energy, o.log_floor));
}

}  // namespace attn::audio
