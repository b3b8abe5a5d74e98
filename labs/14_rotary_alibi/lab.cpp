// Lab 14: rotary position embeddings and ALiBi's linear biases.
// What to write: labs/14_rotary_alibi/README.md. Check it: tools/lab.sh 14 (your copy is labs/work/14_rotary_alibi.cpp).
#include "labs/grader/lab14_rotary_alibi.hpp"

using attn::Tensor;

// ---- your code ----
// x [..., T, d] (any number of leading axes, d even) -> [..., T, d]: row t turned as position p = start + t.
// Feature k pairs with feature k + d/2 (rotate-half), k = 0 .. d/2 - 1, turned by p * theta_k, theta_k = base^(-2k / d):
//   out[k] = x[k] cos - x[k + d/2] sin,   out[k + d/2] = x[k + d/2] cos + x[k] sin.
// Build it from attn's ops so that autograd finds the backward: cos and sin as constants [T, d/2]
// (xt::xarray<double> c = xt::zeros<double>({T, d / 2}); c(t, k) = ...; Tensor(c)), the halves with
// attn::narrow(x, -1, 0, d / 2) and attn::narrow(x, -1, d / 2, d / 2), joined by attn::concat({a, b}, -1).
Tensor rotary(const Tensor& x, std::size_t start, double base) {
  lab::not_implemented("rotary");
}

// m_1 .. m_H. H a power of two: m_h = 2^(-8h / H), h = 1 .. H. Other H: the slopes of the largest power of
// two P below H, then every other slope of 2P (its 1st, 3rd, 5th, ...) until there are H.
std::vector<double> alibi_slopes(std::size_t num_heads) {
  lab::not_implemented("alibi_slopes");
}

// scores [B, H, T, T] (queries and keys at positions 0 .. T - 1) -> scores - m_h |i - j|, with your
// alibi_slopes(H). causal: then the keys after their query (j > i) filled with -1e30:
// attn::masked_fill(s, attn::nn::causal_mask(T), -1e30). Build the bias [H, T, T] as an array, add it as a Tensor.
Tensor alibi_scores(const Tensor& scores, bool causal) {
  lab::not_implemented("alibi_scores");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::rotary_alibi::RotaryAlibi mine{rotary, alibi_slopes, alibi_scores};
  return lab::rotary_alibi::grade(mine).exit_code();
}
#endif
