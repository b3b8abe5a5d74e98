// Lab 5's worked solution (the library's own: nn/attention/attention.cpp, nn/attention/masks.cpp).
#pragma once

#include "labs/grader/lab05_sdpa.hpp"

#include <cmath>

namespace lab {
namespace solutions {
namespace sdpa {

using attn::Mask;
using attn::Tensor;

inline Mask causal_mask(std::size_t T) {
  Mask m = Mask::from_shape({T, T});
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j < T; ++j) m(i, j) = j > i;  // the future is blocked, the present is not
  return m;
}

inline Mask padding_mask(const std::vector<std::size_t>& lengths, std::size_t T) {
  Mask m = Mask::from_shape({lengths.size(), T});
  for (std::size_t b = 0; b < lengths.size(); ++b)
    for (std::size_t j = 0; j < T; ++j) m(b, j) = j >= lengths[b];
  return m;
}

inline std::pair<Tensor, Tensor> attention(const Tensor& q, const Tensor& k, const Tensor& v, const Mask& mask) {
  double d = static_cast<double>(q.size(-1));
  Tensor scores = attn::matmul(q, attn::transpose(k, 1, 2)) / std::sqrt(d);  // [B, Tq, D] x [B, D, Tk]
  // -1e30: exp() makes it exactly 0; a row blocked entirely comes out uniform ...
  Tensor weights = attn::softmax(attn::masked_fill(scores, mask, -1e30), -1);
  weights = attn::masked_fill(weights, mask, 0.0);  // ... until its blocked weights are set to 0 here
  return {attn::matmul(weights, v), weights};       // [B, Tq, Tk] x [B, Tk, Dv]
}

inline lab::sdpa::Attention solution() { return {causal_mask, padding_mask, attention}; }

}  // namespace sdpa
}  // namespace solutions
}  // namespace lab
