// Lab 17: the pointer sentinel's mixture (Merity et al. 2016).
// What to write: labs/17_pointer_sentinel/README.md. Check it: tools/lab.sh 17 (your copy is labs/work/17_pointer_sentinel.cpp).
#include "labs/grader/lab17_pointer_sentinel.hpp"

using attn::Index;
using attn::Tensor;

// ---- your code ----
// logits [B, V] (the softmax's scores over the vocabulary), scores [B, L] (the pointer's, one per window slot),
// sentinel [B, 1] (the sentinel's score), window [B, L] (the word id of each slot, 0 .. V-1, words may repeat)
// -> p [B, V]:
//   [a ; g] = softmax([scores ; sentinel])   one softmax over the L + 1 slots: a [B, L], the gate g [B, 1]
//   p(w) = g softmax(logits)(w) + sum over the slots j with window(b, j) = w of a_j     (a scatter-add)
// Build it from attn's ops so that autograd finds the backward: attn::concat({scores, sentinel}, -1),
// attn::softmax(x, -1), attn::narrow(w, -1, start, length); the scatter-add as a product with
// attn::one_hot(window, V) [B, L, V]: attn::matmul(attn::unsqueeze(a, 1), ...) is [B, 1, V], attn::squeeze(..., 1).
Tensor mixture(const Tensor& logits, const Tensor& scores, const Tensor& sentinel, const Index& window) {
  lab::not_implemented("mixture");
}

// The same inputs and targets [B] (word ids) -> log p(y) [B], log of mixture(...)(b, y_b), from log weights so that
// it stays finite where p(y) rounds to 0 in float64:
//   log p(y) = logsumexp( log g + log p_vocab(y),  log a_j for every slot j holding y )
// attn::log_softmax(x, -1) gives the log weights; log p_vocab(y) = attn::sum(log_softmax(logits, -1) *
// attn::one_hot(targets, V), {-1}, true) [B, 1]; the slots not holding y (and the sentinel's own column)
// blocked with attn::masked_fill(x, mask, -1e30) (a fill below every real log weight), mask an attn::Mask
// [B, L + 1] (xt::ones<bool>({B, L + 1})), false at the slots j < L with window(b, j) = targets(b);
// attn::logsumexp(x, -1).
Tensor log_prob(const Tensor& logits, const Tensor& scores, const Tensor& sentinel, const Index& window,
                const Index& targets) {
  lab::not_implemented("log_prob");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::pointer_sentinel::PointerSentinel mine{mixture, log_prob};
  return lab::pointer_sentinel::grade(mine).exit_code();
}
#endif
