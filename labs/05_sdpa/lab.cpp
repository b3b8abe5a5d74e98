// Lab 5: scaled dot-product attention with padding and causal masks.
// What to write: labs/05_sdpa/README.md. Check it: tools/lab.sh 5 (your copy is labs/work/05_sdpa.cpp).
#include "labs/grader/lab05_sdpa.hpp"

using attn::Mask;
using attn::Tensor;

// ---- your code ----
// A Mask is an xtensor array of bool (xt::xarray<bool>): Mask m = Mask::from_shape({T, T});
// m(i, j) = j > i;  // from_shape leaves elements unset: set every one
// [T, T]: true where key j is in query i's future (j > i).
Mask causal_mask(std::size_t T) {
  lab::not_implemented("causal_mask");
}

// [B, T]: true at the padded positions of each sequence (j >= lengths[b]).
Mask padding_mask(const std::vector<std::size_t>& lengths, std::size_t T) {
  lab::not_implemented("padding_mask");
}

// q [B, Tq, D], k [B, Tk, D], v [B, Tk, Dv], mask [B, Tq, Tk] (true = blocked) -> {out [B, Tq, Dv], weights [B, Tq, Tk]}.
// Tools: attn::matmul, attn::transpose(t, 1, 2), attn::masked_fill(t, mask, value), attn::softmax(t, -1).
std::pair<Tensor, Tensor> attention(const Tensor& q, const Tensor& k, const Tensor& v, const Mask& mask) {
  lab::not_implemented("attention");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::sdpa::Attention mine{causal_mask, padding_mask, attention};
  return lab::sdpa::grade(mine).exit_code();
}
#endif
