// Lab 10's grader: one decoding step of beam search (labs/10_beam/README.md).
//
//   lab::beam::grade(lab::beam::BeamStep{beam_step});  // "lab 10: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace beam {

using Array = xt::xarray<double>;

// One continuation: hypothesis `hypothesis` extended by `token`, with its total log-probability.
struct Candidate {
  std::size_t hypothesis = 0;
  std::size_t token = 0;
  double score = 0.0;
};

struct BeamStep {
  // scores [K] (each hypothesis' log-probability so far), log_probs [K, V] (its next token's)
  // -> the min(beam, K * V) best continuations, best first, score = scores[h] + log_probs[h, token];
  // equal scores: the smaller h * V + token first.
  std::function<std::vector<Candidate>(const Array& scores, const Array& log_probs, std::size_t beam)> step;
};

// Runs every check on the learner's function, printing each to `os`.
Result grade(const BeamStep& b, std::ostream& os = std::cout);

}  // namespace beam
}  // namespace lab
