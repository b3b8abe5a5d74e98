// Lab 3: one step of an LSTM cell, composed of attn's ops (autograd gives its gradients).
// What to write: labs/03_lstm_cell/README.md. Check it: tools/lab.sh 3 (your copy is labs/work/03_lstm_cell.cpp).
#include "labs/grader/lab03_lstm_cell.hpp"

using attn::Tensor;

// ---- your code ----
// x [B, I], h [B, H], c [B, H], w_ih [4H, I], w_hh [4H, H], b_ih [4H], b_hh [4H] -> {h' [B, H], c' [B, H]}.
// The 4H gate rows are in PyTorch's order: i, f, g, o.
// Tools: attn::linear(x, w, b) (x w^T + b), attn::chunk(t, 4, /*dim=*/1), attn::sigmoid, attn::tanh.
std::pair<Tensor, Tensor> lstm_cell(const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& w_ih,
                                    const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  lab::not_implemented("lstm_cell");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::lstm::LSTMCell mine{lstm_cell};
  return lab::lstm::grade(mine).exit_code();
}
#endif
