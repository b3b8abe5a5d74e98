// Lab 15: monotonic attention's expected alignment, and its hard decoding.
// What to write: labs/15_monotonic/README.md. Check it: tools/lab.sh 15 (your copy is labs/work/15_monotonic.cpp).
#include "labs/grader/lab15_monotonic.hpp"

using attn::Tensor;

// ---- your code ----
// energy [B, Tq, Tk], lengths (B values in 0 .. Tk) -> alpha [B, Tq, Tk], the probability that step t stops at j.
// p = attn::sigmoid(energy), set to 0 on padding (j >= lengths[b]): attn::masked_fill(p, padding, 0.0) with an
// attn::Mask padding = xt::zeros<bool>({B, std::size_t(1), Tk}) set true there. Before the first step all the
// mass sits on position 0 (alpha_{-1} = 1 at j = 0, else 0). Then for each step t, along j = 0 .. Tk - 1:
//   q_tj = (1 - p_{t,j-1}) q_{t,j-1} + alpha_{t-1,j}   (q_t0 = alpha_{t-1,0}),   alpha_tj = p_tj q_tj.
// Build it from attn's ops so that autograd finds the backward: attn::select(x, 1, j) takes x[:, j],
// attn::stack(list, 1) joins a list of [B] tensors into [B, Tk] (and [B, Tk] ones into [B, Tq, Tk]).
Tensor expected_alignment(const Tensor& energy, const std::vector<std::size_t>& lengths) {
  lab::not_implemented("expected_alignment");
}

// energy [B, Tq, Tk], lengths -> out[b][t]: where step t attends. It starts where step t - 1 stopped (the first
// step at 0) and stops at the first j < lengths[b] with energy >= 0 (p >= 0.5); -1 when it runs off the end.
// Read the values with energy.data<double>() (an xt::xarray<double>, e(b, t, j)).
std::vector<std::vector<long>> hard_alignment(const Tensor& energy, const std::vector<std::size_t>& lengths) {
  lab::not_implemented("hard_alignment");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::monotonic::Monotonic mine{expected_alignment, hard_alignment};
  return lab::monotonic::grade(mine).exit_code();
}
#endif
