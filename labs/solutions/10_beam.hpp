// Lab 10's worked solution (the library's beam search: decode/beam_search.cpp).
#pragma once

#include "labs/grader/lab10_beam.hpp"

#include <algorithm>

namespace lab {
namespace solutions {
namespace beam {

using Array = xt::xarray<double>;
using lab::beam::Candidate;

inline std::vector<Candidate> beam_step(const Array& scores, const Array& log_probs, std::size_t beam) {
  std::size_t K = log_probs.shape()[0], V = log_probs.shape()[1];
  std::vector<Candidate> all;  // every continuation, in flat order h * V + token
  for (std::size_t h = 0; h < K; ++h)
    for (std::size_t t = 0; t < V; ++t) all.push_back({h, t, scores(h) + log_probs(h, t)});
  // stable: equal scores keep the flat order, so the result does not depend on the sort's whims
  std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  all.resize(std::min(beam, all.size()));
  return all;
}

inline lab::beam::BeamStep solution() { return {beam_step}; }

}  // namespace beam
}  // namespace solutions
}  // namespace lab
