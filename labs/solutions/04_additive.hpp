// Lab 4's worked solution (the library's own: nn/attention/score.cpp, the fused attn::additive_score).
#pragma once

#include "labs/grader/lab04_additive.hpp"

namespace lab {
namespace solutions {
namespace additive {

using attn::Mask;
using attn::Tensor;

inline std::pair<Tensor, Tensor> additive_attention(const Tensor& s, const Tensor& h, const Tensor& W,
                                                    const Tensor& U, const Tensor& v, const Mask& mask) {
  Tensor query = attn::unsqueeze(attn::linear(s, W), 1);  // [B, 1, A]: one query against every key
  Tensor keys = attn::linear(h, U);                       // [B, T, A]
  Tensor e = attn::matmul(attn::tanh(query + keys), v);   // [B, T, A] x [A] -> [B, T]
  // -1e30 rather than -inf: exp() makes it exactly 0, and a row with every position padded
  // stays finite (uniform), where -inf would give 0 / 0.
  Tensor weights = attn::softmax(attn::masked_fill(e, mask, -1e30), -1);
  Tensor context = attn::squeeze(attn::matmul(attn::unsqueeze(weights, 1), h), 1);  // [B, 1, T] x [B, T, He]
  return {weights, context};
}

inline lab::additive::Additive solution() { return {additive_attention}; }

}  // namespace additive
}  // namespace solutions
}  // namespace lab
