// Wrong solutions of lab 10; labs/tests/test_lab10.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/10_beam.hpp"

#include <algorithm>

namespace lab {
namespace planted {
namespace beam {

using Array = xt::xarray<double>;
using lab::beam::Candidate;

struct Options {
  bool per_hypothesis = false, no_prefix_score = false, divide_by_k = false, unstable = false, std_sort = false;
};

inline std::vector<Candidate> step(const Options& o, const Array& scores, const Array& log_probs, std::size_t beam) {
  std::size_t K = log_probs.shape()[0], V = log_probs.shape()[1];
  std::vector<Candidate> all;
  for (std::size_t h = 0; h < K; ++h) {
    std::vector<Candidate> row;
    for (std::size_t t = 0; t < V; ++t) {
      std::size_t flat = h * V + t;
      std::size_t hyp = o.divide_by_k ? flat / K : h, tok = o.divide_by_k ? flat % K : t;
      row.push_back({hyp, tok, (o.no_prefix_score ? 0.0 : scores(h)) + log_probs(h, t)});
    }
    if (o.per_hypothesis) {  // only the best token of each hypothesis goes on
      std::stable_sort(row.begin(), row.end(), [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
      row.resize(1);
    }
    all.insert(all.end(), row.begin(), row.end());
  }
  auto better = [](const Candidate& a, const Candidate& b) { return a.score > b.score; };
  if (o.unstable) {  // ties in reverse flat order
    std::reverse(all.begin(), all.end());
    std::stable_sort(all.begin(), all.end(), better);
  } else if (o.std_sort) {  // not stable: ties stay in order only while libstdc++ insertion-sorts (16 or fewer)
    std::sort(all.begin(), all.end(), better);
  } else {
    std::stable_sort(all.begin(), all.end(), better);
  }
  all.resize(std::min(beam, all.size()));
  return all;
}

inline std::vector<Planted<lab::beam::BeamStep>> all() {
  auto make = [](Options o) {
    return lab::beam::BeamStep{[o](const Array& s, const Array& l, std::size_t b) { return step(o, s, l, b); }};
  };
  std::vector<Planted<lab::beam::BeamStep>> out;
  Options o;
  o.per_hypothesis = true;
  out.push_back({"only the best token of each hypothesis competes", make(o), "all together"});
  o = {};
  o.no_prefix_score = true;
  out.push_back({"the hypotheses' scores so far left out", make(o), "scores[h] + log_probs[h, token]"});
  o = {};
  o.divide_by_k = true;
  out.push_back({"the flat index decoded with K instead of V", make(o), "hypothesis = flat index / V"});
  o = {};
  o.unstable = true;
  out.push_back({"ties in reverse order", make(o), "a stable sort"});
  o = {};
  o.std_sort = true;
  out.push_back({"std::sort instead of std::stable_sort", make(o), "a stable sort"});
  return out;
}

}  // namespace beam
}  // namespace planted
}  // namespace lab
