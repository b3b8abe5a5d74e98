// ALiBi, attention with linear biases (Press, Smith & Lewis, 2022, "Train Short, Test Long: Attention
// with Linear Biases Enables Input Length Extrapolation", https://arxiv.org/abs/2108.12409): no position
// vector at all; each head subtracts from a score a penalty proportional to the distance between
// query and key, with a slope of its own:
//
//   score_h(i, j) = q_i . k_j / sqrt(d) - m_h |i - j|
//
// The slopes are a geometric sequence: for H heads, a power of two, m_h = 2^(-8 h / H), h = 1..H
// (for 8 heads 1/2, 1/4, ..., 1/256); for other H, the paper's code takes the slopes of the power of
// two below H and fills the rest with every other slope of the power of two above. A causal decoder
// sees j <= i only, where the penalty is m_h (i - j), as in the paper; without a causal mask the
// penalty is symmetric in i and j.
//
//   Tensor bias = nn::alibi_bias(8, T, 0, T, 0);   // [8, T, T], added to the scores of 8 heads
#pragma once

#include "../../core/tensor.hpp"

#include <cstddef>
#include <vector>

namespace attn::nn {

// m_1 .. m_H.
std::vector<double> alibi_slopes(std::size_t num_heads);

// -m_h |(q0 + i) - (k0 + j)| for queries at positions q0 .. q0 + Tq - 1 and keys at k0 .. k0 + Tk - 1:
// [H, Tq, Tk], a constant.
Tensor alibi_bias(std::size_t num_heads, std::size_t Tq, std::size_t q0, std::size_t Tk, std::size_t k0,
                  Dtype dtype = Dtype::Float64);

}  // namespace attn::nn
