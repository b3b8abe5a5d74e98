// Lab 8: cross-entropy with padding and label smoothing.
// What to write: labs/08_cross_entropy/README.md. Check it: tools/lab.sh 8 (your copy is labs/work/08_cross_entropy.cpp).
#include "labs/grader/lab08_cross_entropy.hpp"

using attn::Index;
using attn::Tensor;

// ---- your code ----
// logits [N, C], targets [N] (ids, or ignore_index) -> the mean over the targets not ignored of
// (1 - s) * (-log p[t]) + (s / C) * sum_c (-log p[c]).
// Tools: attn::log_softmax(t, -1), attn::one_hot(ids, C) (ids must be valid: replace ignored ones first),
// attn::sum(t, {-1}), attn::Tensor(xt::xarray<double>) for a constant 0/1 weight per target.
Tensor cross_entropy(const Tensor& logits, const Index& targets, long ignore_index, double label_smoothing) {
  lab::not_implemented("cross_entropy");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::cross_entropy::CrossEntropy mine{cross_entropy};
  return lab::cross_entropy::grade(mine).exit_code();
}
#endif
