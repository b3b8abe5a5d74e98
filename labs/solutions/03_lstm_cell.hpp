// Lab 3's worked solution (the library's own: nn/rnn_cell.cpp, through fused lstm_cell_c/h).
#pragma once

#include "labs/grader/lab03_lstm_cell.hpp"

namespace lab {
namespace solutions {
namespace lstm {

using attn::Tensor;

inline std::pair<Tensor, Tensor> lstm_cell(const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& w_ih,
                                           const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  Tensor gates = attn::linear(x, w_ih, b_ih) + attn::linear(h, w_hh, b_hh);  // [B, 4H]
  std::vector<Tensor> q = attn::chunk(gates, 4, 1);                          // i, f, g, o: [B, H] each
  Tensor i = attn::sigmoid(q[0]), f = attn::sigmoid(q[1]), g = attn::tanh(q[2]), o = attn::sigmoid(q[3]);
  Tensor c1 = f * c + i * g;      // forget some of the old cell, write some of the candidate
  Tensor h1 = o * attn::tanh(c1);  // show some of the squashed cell
  return {h1, c1};
}

inline lab::lstm::LSTMCell solution() { return {lstm_cell}; }

}  // namespace lstm
}  // namespace solutions
}  // namespace lab
