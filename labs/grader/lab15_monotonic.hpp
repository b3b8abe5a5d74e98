// Lab 15's grader: monotonic attention's expected alignment and its hard decoding
// (labs/15_monotonic/README.md).
//
//   lab::monotonic::grade(lab::monotonic::Monotonic{expected_alignment, hard_alignment});
//   // "lab 15: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace monotonic {

struct Monotonic {
  // energy [B, Tq, Tk], lengths (B values in 0 .. Tk) -> alpha [B, Tq, Tk]: p = sigmoid(energy), 0 on padding
  // (j >= lengths[b]); alpha_{-1} all on position 0; for each step t, along j:
  //   q_tj = (1 - p_{t,j-1}) q_{t,j-1} + alpha_{t-1,j}   (q_t0 = alpha_{t-1,0}),   alpha_tj = p_tj q_tj.
  std::function<Tensor(const Tensor& energy, const std::vector<std::size_t>& lengths)> expected_alignment;
  // energy [B, Tq, Tk], lengths -> [B][Tq]: step t stops at the first j from where step t - 1 stopped
  // (0 for the first step) with energy >= 0 (p >= 0.5), j < lengths[b]; -1 when it runs off the end.
  std::function<std::vector<std::vector<long>>(const Tensor& energy, const std::vector<std::size_t>& lengths)>
      hard_alignment;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const Monotonic& m, std::ostream& os = std::cout);

}  // namespace monotonic
}  // namespace lab
