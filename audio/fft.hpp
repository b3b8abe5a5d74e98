// The discrete Fourier transform by the radix-2 fast Fourier transform (Cooley & Tukey, 1965):
//
//   X[k] = sum_{n=0}^{N-1} x[n] exp(-2 pi i k n / N),   k = 0 .. N - 1,
//
// computed in N log2 N operations instead of N^2 by splitting the sum into even and odd n,
// two transforms of half the length, X[k] = E[k] + exp(-2 pi i k / N) O[k] and
// X[k + N/2] = E[k] - exp(-2 pi i k / N) O[k], recursively, here in place and without recursion
// (inputs in bit-reversed order, then log2 N passes of these "butterflies").
//
//   std::vector<std::complex<double>> X = attn::audio::fft(x);   // x.size() a power of two
//   xt::xarray<double> P = attn::audio::power_spectrum(frame);    // |X[k]|^2, k = 0 .. N/2
#pragma once

#include <complex>
#include <cstddef>
#include <vector>
#include <xtensor/xarray.hpp>

namespace attn::audio {

// The DFT of x; x.size() must be a power of two (ValueError otherwise).
std::vector<std::complex<double>> fft(std::vector<std::complex<double>> x);

// |X[k]|^2 for k = 0 .. N/2 of a real frame of N samples (N a power of two): the half of the
// spectrum a real signal needs, since X[N - k] is the conjugate of X[k]. [N/2 + 1].
xt::xarray<double> power_spectrum(const xt::xarray<double>& frame);

}  // namespace attn::audio
