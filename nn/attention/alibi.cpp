#include "alibi.hpp"

#include "../../core/ops.hpp"

#include <cmath>
#include <string>

namespace attn::nn {

namespace {

// 2^(-8 h / n), h = 1..n, for n a power of two.
std::vector<double> power_of_two_slopes(std::size_t n) {
  std::vector<double> m(n);
  for (std::size_t h = 0; h < n; ++h) m[h] = std::pow(2.0, -8.0 * double(h + 1) / double(n));
  return m;
}

}  // namespace

std::vector<double> alibi_slopes(std::size_t num_heads) {
  if (num_heads == 0) throw ValueError("alibi_slopes: num_heads must be positive");
  std::size_t below = 1;  // the largest power of two <= num_heads
  while (below * 2 <= num_heads) below *= 2;
  std::vector<double> m = power_of_two_slopes(below);
  if (below == num_heads) return m;
  // The paper's code for other counts: every other slope of 2 * below, as many as are missing.
  const std::vector<double> above = power_of_two_slopes(2 * below);
  for (std::size_t k = 0; m.size() < num_heads; k += 2) m.push_back(above[k]);
  return m;
}

Tensor alibi_bias(std::size_t num_heads, std::size_t Tq, std::size_t q0, std::size_t Tk, std::size_t k0,
                  Dtype dtype) {
  const std::vector<double> m = alibi_slopes(num_heads);
  xt::xarray<double> b = xt::zeros<double>({num_heads, Tq, Tk});
  for (std::size_t h = 0; h < num_heads; ++h)
    for (std::size_t i = 0; i < Tq; ++i)
      for (std::size_t j = 0; j < Tk; ++j) {
        const double qi = double(q0 + i), kj = double(k0 + j);
        b(h, i, j) = -m[h] * std::abs(qi - kj);
      }
  return tensor(b).to(dtype);  // [H, Tq, Tk]
}

}  // namespace attn::nn
