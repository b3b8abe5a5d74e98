// Lab 14's worked solution (the library's own: nn/attention/rotary.cpp and nn/attention/alibi.cpp).
#pragma once

#include "labs/grader/lab14_rotary_alibi.hpp"

#include <cmath>

namespace lab {
namespace solutions {
namespace rotary_alibi {

using attn::Tensor;

inline Tensor rotary(const Tensor& x, std::size_t start, double base) {
  const std::size_t T = x.size(-2), d = x.size(-1), half = d / 2;
  // The angles (start + t) theta_k, theta_k = base^(-2k / d): constants [T, d/2], broadcast over x's leading axes.
  xt::xarray<double> c = xt::zeros<double>({T, half}), s = xt::zeros<double>({T, half});
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t k = 0; k < half; ++k) {
      double angle = static_cast<double>(start + t) * std::pow(base, -2.0 * static_cast<double>(k) / static_cast<double>(d));
      c(t, k) = std::cos(angle);
      s(t, k) = std::sin(angle);
    }
  Tensor cos_t(c), sin_t(s);
  // Feature k pairs with k + d/2: the first half is each pair's first coordinate, the second half its second.
  Tensor x1 = attn::narrow(x, -1, 0, half), x2 = attn::narrow(x, -1, half, half);  // [..., T, d/2] each
  // Built from attn's ops, so autograd finds the backward: the rotation back.
  return attn::concat({x1 * cos_t - x2 * sin_t, x2 * cos_t + x1 * sin_t}, -1);
}

inline std::vector<double> alibi_slopes(std::size_t H) {
  // 2^(-8h / n), h = 1..n, for n a power of two: a geometric sequence from 2^(-8/n) down to 2^-8.
  auto power_of_two = [](std::size_t n) {
    std::vector<double> m(n);
    for (std::size_t h = 0; h < n; ++h) m[h] = std::pow(2.0, -8.0 * static_cast<double>(h + 1) / static_cast<double>(n));
    return m;
  };
  std::size_t below = 1;  // the largest power of two <= H
  while (below * 2 <= H) below *= 2;
  std::vector<double> m = power_of_two(below);
  // Other counts: every other slope of 2 * below (those between the ones already taken), as many as are missing.
  const std::vector<double> above = power_of_two(2 * below);
  for (std::size_t k = 0; m.size() < H; k += 2) m.push_back(above[k]);
  return m;
}

inline Tensor alibi_scores(const Tensor& scores, bool causal) {
  const std::size_t H = scores.size(1), T = scores.size(-1);
  const std::vector<double> m = alibi_slopes(H);
  xt::xarray<double> bias = xt::zeros<double>({H, T, T});
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j < T; ++j)
        bias(h, i, j) = -m[h] * std::abs(static_cast<double>(i) - static_cast<double>(j));  // the farther, the lower
  Tensor out = scores + Tensor(bias);  // [B, H, T, T] + [H, T, T]
  return causal ? attn::masked_fill(out, attn::nn::causal_mask(T), -1e30) : out;
}

inline lab::rotary_alibi::RotaryAlibi solution() { return {rotary, alibi_slopes, alibi_scores}; }

}  // namespace rotary_alibi
}  // namespace solutions
}  // namespace lab
