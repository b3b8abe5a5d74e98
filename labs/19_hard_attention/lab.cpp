// Lab 19: hard attention, sampled context and REINFORCE (Xu et al. 2015, section 4.1).
// What to write: labs/19_hard_attention/README.md. Check it: tools/lab.sh 19 (your copy is labs/work/19_hard_attention.cpp).
#include "labs/grader/lab19_hard_attention.hpp"

using attn::Index;
using attn::Tensor;
using lab::hard_attention::Baseline;
using lab::hard_attention::Draws;
using lab::hard_attention::Options;

// ---- your code ----
// scores e [B, N] (the attention's scores), u [B] (one uniform draw in [0, 1) per row) -> k [B], an attn::Index:
//   a = softmax(e) (attn::softmax(scores, -1).to_array() gives its values); k_b = the first cell k whose cumulative
//   weight a_b0 + ... + a_bk exceeds u_b (strictly); the last cell, N - 1, when rounding leaves u_b above every sum.
// Make it with Index cells = Index::from_shape({B}); cells(b) = k;
Index sample(const Tensor& scores, const Draws& u) {
  lab::not_implemented("sample");
}

// scores e [B, N], u [B], features h [B, N, H] -> c [B, H]: c_b = h[b, k_b], k = sample(scores, u), built as
// attn::one_hot(k, N, features.dtype()) [B, N] times the features (attn::unsqueeze(..., 1), attn::matmul,
// attn::squeeze(..., 1)), so that the gradient reaches the sampled cell's features.
Tensor context(const Tensor& scores, const Draws& u, const Tensor& features) {
  lab::not_implemented("context");
}

// scores e [B, N], the sampled cells k [B], rewards R [B] (log p(y | k): tensors that carry gradients), the
// baseline (read, then updated), the options -> the scalar loss
//   L = (1/B) sum_b [ -R_b - lambda_r (R_b - b) log a_{b,k_b} - lambda_e H(a_b) ]
// a = softmax(e), log a from attn::log_softmax(scores, -1), H(a) = -sum_j a_j log a_j; the advantage R_b - b is a
// constant (from rewards.detach().to_array(): only log a_k carries its gradient). b is baseline.value, or, when
// !baseline.started, the batch's mean reward (then started = true); after it is used,
//   baseline.value = decay * b + (1 - decay) * mean_b R_b     (decay = options.baseline_decay).
Tensor surrogate(const Tensor& scores, const Index& cells, const Tensor& rewards, Baseline& baseline,
                 const Options& options) {
  lab::not_implemented("surrogate");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::hard_attention::HardAttention mine{sample, context, surrogate};
  return lab::hard_attention::grade(mine).exit_code();
}
#endif
