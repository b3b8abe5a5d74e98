// Rotary position embedding, RoPE (Su, Lu, Pan, Murtadha, Wen & Liu, 2021, "RoFormer: Enhanced
// Transformer with Rotary Position Embedding", https://arxiv.org/abs/2104.09864): instead of adding a
// position vector to the token, each query and key is rotated by angles proportional to its position,
// so that the score q_i . k_j depends on the positions only through the offset i - j.
//
// A head's d features (d even) form d / 2 pairs, feature k with feature k + d / 2 (the "rotate-half"
// layout of GPT-NeoX's and Hugging Face's Llama code; Meta's own Llama code, like the paper, pairs 2k
// with 2k + 1, the same rotation with the features permuted). Pair k at position p turns by the angle
// p * theta_k, theta_k = base^(-2k / d):
//
//   out[k]         = x[k] cos(p theta_k) - x[k + d/2] sin(p theta_k)        k < d / 2
//   out[k + d/2]   = x[k + d/2] cos(p theta_k) + x[k] sin(p theta_k)
//
// A rotation preserves dot products, and R(p)^T R(p') = R(p' - p), so
// rotary(q, i) . rotary(k, j) = q . R(j - i) k: a function of j - i. The derivative of a rotation
// is the rotation back, which autograd finds from the composed ops (narrow, mul, add, concat).
//
//   Tensor q_rot = nn::rotary_embedding(q, /*start=*/0);   // q [B, H, T, d]: positions 0..T-1
#pragma once

#include "../../core/tensor.hpp"

#include <cstddef>

namespace attn::nn {

// x [..., T, d] with d even -> [..., T, d], row t rotated as position start + t.
Tensor rotary_embedding(const Tensor& x, std::size_t start = 0, double base = 10000.0);

}  // namespace attn::nn
