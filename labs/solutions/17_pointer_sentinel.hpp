// Lab 17's worked solution (models/pointer_sentinel.cpp computes the same from its LSTM's states).
#pragma once

#include "labs/grader/lab17_pointer_sentinel.hpp"

namespace lab {
namespace solutions {
namespace pointer_sentinel {

using attn::Index;
using attn::Tensor;

inline Tensor mixture(const Tensor& logits, const Tensor& scores, const Tensor& sentinel, const Index& window) {
  const std::size_t L = scores.size(-1), V = logits.size(-1);
  // One softmax over the window's slots and the sentinel: the weights of all L + 1 sum to 1.
  Tensor w = attn::softmax(attn::concat({scores, sentinel}, -1), -1);  // [B, L + 1]
  Tensor a = attn::narrow(w, -1, 0, L), g = attn::narrow(w, -1, L, 1);  // [B, L], [B, 1]
  // The scatter-add as a product: row j of one_hot(window) is slot j's word, so a [B, 1, L] times
  // [B, L, V] adds every slot's weight to its word, repeated words summed.
  Tensor copies = attn::squeeze(attn::matmul(attn::unsqueeze(a, 1), attn::one_hot(window, V)), 1);  // [B, V]
  return g * attn::softmax(logits, -1) + copies;
}

inline Tensor log_prob(const Tensor& logits, const Tensor& scores, const Tensor& sentinel, const Index& window,
                       const Index& targets) {
  const std::size_t B = scores.size(0), L = scores.size(-1), V = logits.size(-1);
  Tensor log_w = attn::log_softmax(attn::concat({scores, sentinel}, -1), -1);  // [B, L + 1]
  // log p_vocab(y): the target's entry of the log-softmax, picked by a one-hot row.
  Tensor log_pv = attn::sum(attn::log_softmax(logits, -1) * attn::one_hot(targets, V), {-1}, true);  // [B, 1]
  // The slots that do not hold y (and the sentinel's, which enters through log g + log p_vocab(y)) blocked.
  attn::Mask not_copy = xt::ones<bool>({B, L + 1});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t j = 0; j < L; ++j) not_copy(b, j) = window(b, j) != targets(b);
  Tensor log_copies = attn::masked_fill(log_w, not_copy, -1e30);  // [B, L + 1]
  Tensor log_gate = attn::narrow(log_w, -1, L, 1);                // [B, 1]
  // log(g p_vocab(y) + sum over copies of a_j) as one logsumexp: no probability is ever formed.
  return attn::logsumexp(attn::concat({log_gate + log_pv, log_copies}, -1), -1);  // [B]
}

inline lab::pointer_sentinel::PointerSentinel solution() { return {mixture, log_prob}; }

}  // namespace pointer_sentinel
}  // namespace solutions
}  // namespace lab
