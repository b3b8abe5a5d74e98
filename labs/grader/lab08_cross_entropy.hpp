// Lab 8's grader: cross-entropy with padding (ignore_index) and label smoothing
// (labs/08_cross_entropy/README.md).
//
//   lab::cross_entropy::grade(lab::cross_entropy::CrossEntropy{cross_entropy});  // "lab 8: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace cross_entropy {

struct CrossEntropy {
  // logits [N, C], targets [N] (class ids, or ignore_index for padding), label smoothing s in [0, 1)
  // -> the mean over the targets that are not ignored of
  //    (1 - s) * (-log p[t]) + (s / C) * sum_c (-log p[c]),  p = softmax(logits row): a scalar.
  std::function<Tensor(const Tensor& logits, const attn::Index& targets, long ignore_index, double label_smoothing)>
      loss;
};

// Runs every check on the learner's function, printing each to `os`.
Result grade(const CrossEntropy& c, std::ostream& os = std::cout);

}  // namespace cross_entropy
}  // namespace lab
