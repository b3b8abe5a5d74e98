// Lab 22's worked solution (nn/attention/convolutional.cpp computes the same for a batch, with
// features() split off so that a decoder computes the first two convolutions once per source).
#pragma once

#include "labs/grader/lab22_conv_copy.hpp"

namespace lab {
namespace solutions {
namespace conv_copy {

using attn::Index;
using attn::Tensor;
using lab::conv_copy::Attention;
using lab::conv_copy::Cell;
using lab::conv_copy::Kernels;
using lab::conv_copy::Step;

inline Attention attention(const Tensor& E, const std::vector<std::size_t>& lengths, const Tensor& h,
                           const Kernels& k) {
  const long B = long(E.size(0)), S = long(E.size(1)), T = long(h.size(1)), H = long(h.size(2));
  // true at each row's padding, [B, 1, S]: broadcast over the channels, then over the decoder steps.
  attn::Mask pad = xt::zeros<bool>({std::size_t(B), std::size_t(1), std::size_t(S)});
  for (long b = 0; b < B; ++b)
    for (long j = long(lengths[b]); j < S; ++j) pad(b, 0, j) = true;
  // Every convolution "same" (S positions in, S out), and the padding zeroed before the next one reads it:
  // conv1's bias makes it non-zero, and a window at a row's last real positions would read it.
  const Tensor x = attn::masked_fill(attn::transpose(E, 1, 2), pad, 0.0);                           // [B, D, S]
  const Tensor l1 = attn::masked_fill(attn::relu(attn::conv1d(x, k.k1_w, k.k1_b, "same")), pad, 0.0);  // [B, k1, S]
  const Tensor f = attn::masked_fill(attn::conv1d(l1, k.k2_w, k.k2_b, "same"), pad, 0.0);              // [B, H, S]
  // Every decoder state gates every position: [B, 1, S, H] * [B, T, 1, H]; then each position's row to length 1.
  const Tensor l2 = attn::unsqueeze(attn::transpose(f, 1, 2), 1) * attn::unsqueeze(h, 2);  // [B, T, S, H]
  const Tensor lfeat = l2 / attn::sqrt(attn::sum(l2 * l2, {-1}, true) + 1e-12);
  // One score per position: a convolution over the positions of each (b, t)'s [H, S] matrix.
  const Tensor rows = attn::transpose(attn::reshape(lfeat, {B * T, S, H}), 1, 2);  // [B*T, H, S]
  auto score = [&](const Tensor& w, const Tensor& bias) {
    return attn::reshape(attn::conv1d(rows, w, bias, "same"), {B, T, S});
  };
  Attention out;
  out.weights = attn::softmax(attn::masked_fill(score(k.att_w, k.att_b), pad, -1e30), -1);
  out.context = attn::matmul(out.weights, E);  // [B, T, S] x [B, S, D]
  out.copy_weights = attn::softmax(attn::masked_fill(score(k.copy_w, k.copy_b), pad, -1e30), -1);
  // The gate: a sigmoid is > 0, so a padded position set to 0 never wins the max.
  out.copy_gate = attn::max(attn::masked_fill(attn::sigmoid(score(k.gate_w, k.gate_b)), pad, 0.0), -1, true);
  return out;
}

inline Tensor mixture(const Tensor& p_gen, const Tensor& kappa, const Tensor& lambda, const Index& copy_ids,
                      std::size_t extended_vocab) {
  const std::size_t B = p_gen.size(0), T = p_gen.size(1), V = p_gen.size(2);
  // Generation has no mass on the source-only ids V .. extended_vocab-1.
  Tensor gen = p_gen;
  if (extended_vocab > V) gen = attn::concat({p_gen, attn::zeros({B, T, extended_vocab - V})}, -1);
  // Each position's copy weight added to its word: a word held twice gets both ([B, T, S] x [B, S, ext]).
  const Tensor copied = attn::matmul(kappa, attn::one_hot(copy_ids, extended_vocab));
  return lambda * gen + (1.0 - lambda) * copied;  // probabilities, mixed: lambda generates
}

// Chapter 12's order: the cell reads y_{t-1} first, and the new state h_t gates the attention.
inline Step step(const Tensor& E, const std::vector<std::size_t>& lengths, const Tensor& y_prev, const Tensor& h_prev,
                 const Cell& cell, const Kernels& k) {
  const Tensor h = cell(y_prev, h_prev);
  return {h, attention(E, lengths, attn::unsqueeze(h, 1), k)};
}

inline lab::conv_copy::ConvCopy solution() { return {attention, mixture, step}; }

}  // namespace conv_copy
}  // namespace solutions
}  // namespace lab
