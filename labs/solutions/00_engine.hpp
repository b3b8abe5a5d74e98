// Lab 0's worked solution: the backward rules the library's own ops use
// (core/ops/elementwise.cpp, core/ops/matmul.cpp, sum_to_shape in core/ops/shape.cpp).
#pragma once

#include "labs/grader/lab00_engine.hpp"

namespace lab {
namespace solutions {
namespace engine {

using attn::Shape;
using attn::Tensor;

// Sum the axes broadcasting added (leading), then the stretched size-1 axes, keeping them.
inline Tensor unbroadcast(const Tensor& g, const Shape& shape) {
  Tensor out = g;
  std::size_t added = g.dim() - shape.size();
  if (added > 0) {
    std::vector<long> leading;
    for (std::size_t d = 0; d < added; ++d) leading.push_back(static_cast<long>(d));
    out = attn::sum(out, leading);  // [..., shape] -> the target's rank
  }
  std::vector<long> stretched;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (shape[d] == 1 && out.size(static_cast<long>(d)) != 1) stretched.push_back(static_cast<long>(d));
  if (!stretched.empty()) out = attn::sum(out, stretched, /*keepdim=*/true);
  return out;
}

// d(a*b)/da = b, d(a*b)/db = a
inline std::pair<Tensor, Tensor> mul_backward(const Tensor& a, const Tensor& b, const Tensor& g) {
  return {unbroadcast(g * b, a.shape()), unbroadcast(g * a, b.shape())};
}

// d(a/b)/da = 1/b, d(a/b)/db = -a/b^2
inline std::pair<Tensor, Tensor> div_backward(const Tensor& a, const Tensor& b, const Tensor& g) {
  return {unbroadcast(g / b, a.shape()), unbroadcast(-(g * a) / (b * b), b.shape())};
}

// d exp(x)/dx = exp(x) = y
inline Tensor exp_backward(const Tensor& x, const Tensor& y, const Tensor& g) { return g * y; }

// d tanh(x)/dx = 1 - y^2
inline Tensor tanh_backward(const Tensor& x, const Tensor& y, const Tensor& g) { return g * (1.0 - y * y); }

// dA = G B^T, dB = A^T G
inline std::pair<Tensor, Tensor> matmul_backward(const Tensor& a, const Tensor& b, const Tensor& g) {
  return {attn::matmul(g, attn::transpose(b, 0, 1)),   // [n, m] x [m, k]
          attn::matmul(attn::transpose(a, 0, 1), g)};  // [k, n] x [n, m]
}

inline lab::engine::Engine solution() {
  return {unbroadcast, mul_backward, div_backward, exp_backward, tanh_backward, matmul_backward};
}

}  // namespace engine
}  // namespace solutions
}  // namespace lab
