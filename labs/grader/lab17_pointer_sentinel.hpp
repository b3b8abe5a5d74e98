// Lab 17's grader: the pointer sentinel's mixture (Merity et al. 2016; labs/17_pointer_sentinel/README.md).
//
//   lab::pointer_sentinel::grade(lab::pointer_sentinel::PointerSentinel{mixture, log_prob});
//   // "lab 17: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace pointer_sentinel {

using attn::Index;

struct PointerSentinel {
  // logits [B, V] (the softmax's scores over the vocabulary), scores [B, L] (the pointer's, one per window
  // slot), sentinel [B, 1] (the sentinel's score), window [B, L] (the word id at each slot, 0 .. V-1)
  // -> p [B, V]: [a ; g] = softmax([scores ; sentinel]) (one softmax over L + 1 slots),
  //    p(w) = g softmax(logits)(w) + sum over the slots j holding w of a_j.
  std::function<Tensor(const Tensor& logits, const Tensor& scores, const Tensor& sentinel, const Index& window)>
      mixture;
  // The same inputs and targets [B] -> log p(y) [B], from log weights (log_softmax, logsumexp): finite
  // where p(y) rounds to 0.
  std::function<Tensor(const Tensor& logits, const Tensor& scores, const Tensor& sentinel, const Index& window,
                       const Index& targets)>
      log_prob;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const PointerSentinel& p, std::ostream& os = std::cout);

}  // namespace pointer_sentinel
}  // namespace lab
