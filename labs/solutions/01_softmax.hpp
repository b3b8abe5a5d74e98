// Lab 1's worked solution (the library's own: core/ops/softmax.cpp).
#pragma once

#include "labs/grader/lab01_softmax.hpp"

namespace lab {
namespace solutions {
namespace softmax {

using attn::Tensor;

// exp(x - max) / sum: the max makes the largest exponent 0, so nothing overflows.
inline Tensor softmax(const Tensor& x) {
  Tensor e = attn::exp(x - attn::max(x, -1, /*keepdim=*/true));
  return e / attn::sum(e, {-1}, /*keepdim=*/true);
}

// dx_i = y_i (g_i - sum_j g_j y_j)
inline Tensor softmax_backward(const Tensor& y, const Tensor& g) {
  return y * (g - attn::sum(g * y, {-1}, /*keepdim=*/true));
}

// (x - max) - log sum exp(x - max)
inline Tensor log_softmax(const Tensor& x) {
  Tensor shifted = x - attn::max(x, -1, /*keepdim=*/true);
  return shifted - attn::log(attn::sum(attn::exp(shifted), {-1}, /*keepdim=*/true));
}

// dx_i = g_i - softmax_i sum_j g_j, softmax = exp(y)
inline Tensor log_softmax_backward(const Tensor& y, const Tensor& g) {
  return g - attn::exp(y) * attn::sum(g, {-1}, /*keepdim=*/true);
}

inline lab::softmax::Softmax solution() { return {softmax, softmax_backward, log_softmax, log_softmax_backward}; }

}  // namespace softmax
}  // namespace solutions
}  // namespace lab
