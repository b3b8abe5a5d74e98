// Lab 12's worked solution (the library's own: models/luong.cpp, nn/attention/score.cpp).
#pragma once

#include "labs/grader/lab12_luong.hpp"

namespace lab {
namespace solutions {
namespace luong {

using attn::Mask;
using attn::Tensor;
using lab::luong::Params;
using lab::luong::Step;

inline Step luong_step(const Tensor& y, const Tensor& h_tilde, const Tensor& h, const Tensor& c, const Tensor& hs,
                       const Mask& mask, const Params& p) {
  // input feeding: the cell also reads the previous attentional vector, so it knows what was attended
  Tensor gates = attn::linear(attn::concat({y, h_tilde}, 1), p.w_ih, p.b_ih) + attn::linear(h, p.w_hh, p.b_hh);
  Tensor c1 = attn::lstm_cell_c(gates, c);
  Tensor h1 = attn::lstm_cell_h(gates, c1);
  // general score of the new state: e[b, s] = h1[b] . (W_a hs[b, s])
  Tensor e = attn::squeeze(attn::matmul(attn::linear(hs, p.W_a), attn::unsqueeze(h1, 2)), 2);  // [B, S, H] x [B, H, 1]
  Tensor weights = attn::softmax(attn::masked_fill(e, mask, -1e30), -1);                         // [B, S]
  Tensor context = attn::squeeze(attn::matmul(attn::unsqueeze(weights, 1), hs), 1);              // [B, H]
  Tensor out = attn::tanh(attn::linear(attn::concat({context, h1}, 1), p.W_c));                  // [B, H]
  return {out, h1, c1, weights};
}

inline lab::luong::Luong solution() { return {luong_step}; }

}  // namespace luong
}  // namespace solutions
}  // namespace lab
