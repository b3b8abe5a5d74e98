// Lab 12: one decoder step of Luong attention, general score and input feeding.
// What to write: labs/12_luong/README.md. Check it: tools/lab.sh 12 (your copy is labs/work/12_luong.cpp).
#include "labs/grader/lab12_luong.hpp"

using attn::Mask;
using attn::Tensor;
using lab::luong::Params;
using lab::luong::Step;

// ---- your code ----
// y [B, E], h_tilde [B, H] (previous step's), h, c [B, H], hs [B, S, H], mask [B, S] (true = padded)
// -> {h_tilde, h, c, weights}. c is the cell state m_t, not the context c_t.
// Tools: attn::concat({a, b}, 1), attn::linear, attn::lstm_cell_c(gates, c) and attn::lstm_cell_h(gates, c')
// (lab 3's cell, fused), attn::matmul, attn::unsqueeze / squeeze, attn::masked_fill, attn::softmax, attn::tanh.
Step luong_step(const Tensor& y, const Tensor& h_tilde, const Tensor& h, const Tensor& c, const Tensor& hs,
                const Mask& mask, const Params& p) {
  lab::not_implemented("luong_step");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::luong::Luong mine{luong_step};
  return lab::luong::grade(mine).exit_code();
}
#endif
