#include "fft.hpp"

#include "../core/errors.hpp"

#include <cmath>
#include <string>
#include <utility>

namespace attn::audio {

std::vector<std::complex<double>> fft(std::vector<std::complex<double>> x) {
  const std::size_t N = x.size();
  if (N == 0 || (N & (N - 1)) != 0)
    throw ValueError("audio::fft: the length must be a power of two, got " + std::to_string(N));
  // Bit reversal: element n goes where the reverse of n's log2 N bits points, so that each pass
  // below combines neighbours.
  for (std::size_t n = 1, j = 0; n < N; ++n) {
    std::size_t bit = N >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (n < j) std::swap(x[n], x[j]);
  }
  const double pi = std::acos(-1.0);
  // Pass by pass, transforms of length `len` from pairs of transforms of length len / 2.
  for (std::size_t len = 2; len <= N; len <<= 1) {
    const std::size_t half = len / 2;
    for (std::size_t start = 0; start < N; start += len)
      for (std::size_t k = 0; k < half; ++k) {
        // The twiddle factor exp(-2 pi i k / len), computed directly: a running product would
        // gather rounding error along the pass.
        const std::complex<double> w = std::polar(1.0, -2.0 * pi * double(k) / double(len));
        const std::complex<double> even = x[start + k], odd = w * x[start + k + half];
        x[start + k] = even + odd;         // X[k]
        x[start + k + half] = even - odd;  // X[k + len/2]
      }
  }
  return x;
}

xt::xarray<double> power_spectrum(const xt::xarray<double>& frame) {
  if (frame.dimension() != 1)
    throw ShapeError("audio::power_spectrum: expected one frame [N], got " + std::to_string(frame.dimension()) +
                     " dimensions");
  const std::size_t N = frame.size();
  std::vector<std::complex<double>> x(N);
  for (std::size_t n = 0; n < N; ++n) x[n] = frame(n);
  const std::vector<std::complex<double>> X = fft(std::move(x));
  xt::xarray<double> power = xt::zeros<double>({N / 2 + 1});
  for (std::size_t k = 0; k <= N / 2; ++k) power(k) = std::norm(X[k]);  // |X[k]|^2
  return power;
}

}  // namespace attn::audio
