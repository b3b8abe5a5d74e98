// Lab 11's worked solution (the library's own: nn/transformer_encoder.cpp).
#pragma once

#include "labs/grader/lab11_encoder_layer.hpp"

#include <cmath>

namespace lab {
namespace solutions {
namespace encoder {

using attn::Mask;
using attn::Tensor;
using lab::encoder::Params;

inline Tensor self_attention(const Tensor& x, const Mask& pad, const Params& p) {
  std::size_t B = x.size(0), T = x.size(1), D = x.size(2), H = p.num_heads;
  std::vector<Tensor> qkv = attn::chunk(attn::linear(x, p.in_proj_weight, p.in_proj_bias), 3, 2);  // [B, T, D] each
  Tensor q = attn::split_heads(qkv[0], H), k = attn::split_heads(qkv[1], H), v = attn::split_heads(qkv[2], H);
  Tensor scores = attn::matmul(q, attn::transpose(k, 2, 3)) / std::sqrt(double(D) / double(H));  // [B, H, T, T]
  Mask blocked = Mask::from_shape({B, 1, 1, T});  // the same padded keys for every head and query
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t j = 0; j < T; ++j) blocked(b, 0, 0, j) = pad(b, j);
  Tensor w = attn::softmax(attn::masked_fill(scores, blocked, -1e30), -1);
  return attn::linear(attn::merge_heads(attn::matmul(w, v)), p.out_proj_weight, p.out_proj_bias);  // [B, T, D]
}

inline Tensor encoder_layer(const Tensor& x, const Mask& pad, const Params& p) {
  std::size_t D = x.size(2);
  // post-norm: each sublayer's output is added to its input, then normalized
  Tensor y = attn::layer_norm(x + self_attention(x, pad, p), {D}, p.norm1_weight, p.norm1_bias, 1e-5);
  Tensor ff = attn::linear(attn::relu(attn::linear(y, p.linear1_weight, p.linear1_bias)), p.linear2_weight,
                           p.linear2_bias);
  return attn::layer_norm(y + ff, {D}, p.norm2_weight, p.norm2_bias, 1e-5);
}

inline lab::encoder::EncoderLayer solution() { return {encoder_layer}; }

}  // namespace encoder
}  // namespace solutions
}  // namespace lab
