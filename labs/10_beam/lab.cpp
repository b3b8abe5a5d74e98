// Lab 10: one decoding step of beam search.
// What to write: labs/10_beam/README.md. Check it: tools/lab.sh 10 (your copy is labs/work/10_beam.cpp).
#include "labs/grader/lab10_beam.hpp"

using Array = xt::xarray<double>;
using lab::beam::Candidate;

// ---- your code ----
// scores [K], log_probs [K, V] -> the min(beam, K * V) best {hypothesis, token, score}, best first,
// score = scores[h] + log_probs[h, token]; equal scores in the order of h * V + token.
// Tools: log_probs.shape()[0], log_probs(h, t), std::stable_sort.
std::vector<Candidate> beam_step(const Array& scores, const Array& log_probs, std::size_t beam) {
  lab::not_implemented("beam_step");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::beam::BeamStep mine{beam_step};
  return lab::beam::grade(mine).exit_code();
}
#endif
