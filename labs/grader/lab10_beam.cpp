// The checks of lab10_beam.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab10_beam.hpp"

#include "labs/grader/grader.hpp"

#include <algorithm>
#include <numeric>

namespace lab {
namespace beam {

namespace hint {
inline const char* step =
    "score every one of the K * V continuations, scores[h] + log_probs[h, token], all together (not the best few "
    "of each hypothesis), keep the beam best, best (largest score) first; hypothesis = flat index / V, "
    "token = flat index % V";
inline const char* count = "min(beam, K * V) candidates: a beam wider than the continuations keeps them all";
inline const char* ties = "equal scores keep the order of the flat index h * V + token: a stable sort";
}  // namespace hint

// The plain reference: every continuation, sorted by score (stable, so ties keep the flat order).
inline std::vector<Candidate> reference(const Array& scores, const Array& log_probs, std::size_t beam) {
  std::size_t K = log_probs.shape()[0], V = log_probs.shape()[1];
  std::vector<Candidate> all;
  for (std::size_t h = 0; h < K; ++h)
    for (std::size_t t = 0; t < V; ++t) all.push_back({h, t, scores(h) + log_probs(h, t)});
  std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  all.resize(std::min(beam, all.size()));
  return all;
}

inline void expect_candidates(const std::vector<Candidate>& expected, const std::vector<Candidate>& got,
                              const std::string& inputs) {
  if (got.size() != expected.size())
    throw Mismatch("returned " + std::to_string(got.size()) + " candidates, expected " + std::to_string(expected.size()) +
                   " (" + inputs + ")");
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const Candidate &e = expected[i], &g = got[i];
    if (e.hypothesis != g.hypothesis || e.token != g.token || std::abs(e.score - g.score) > 1e-12)
      throw Mismatch("candidate " + std::to_string(i) + " (" + inputs + "): expected hypothesis " +
                     std::to_string(e.hypothesis) + ", token " + std::to_string(e.token) + ", score " +
                     num_str(e.score) + "; received hypothesis " + std::to_string(g.hypothesis) + ", token " +
                     std::to_string(g.token) + ", score " + num_str(g.score));
  }
}

inline std::string sizes(std::size_t K, std::size_t V, std::size_t beam) {
  return "K " + std::to_string(K) + ", V " + std::to_string(V) + ", beam " + std::to_string(beam);
}

Result grade(const BeamStep& m, std::ostream& os) {
  Grader grader(10, "one decoding step of beam search", os);
  Reference ref("lab10_beam");
  auto fixed = [&](const std::string& c) {
    Array scores = ref.array(c, "scores"), log_probs = ref.array(c, "log_probs");
    std::size_t beam = static_cast<std::size_t>(ref.scalar(c, "beam"));
    Array top = ref.array(c, "top_scores"), hyp = ref.array(c, "hypothesis"), tok = ref.array(c, "token");
    std::vector<Candidate> expected;
    for (std::size_t i = 0; i < top.size(); ++i)
      expected.push_back({static_cast<std::size_t>(hyp(i)), static_cast<std::size_t>(tok(i)), top(i)});
    expect_candidates(expected, m.step(scores, log_probs, beam),
                      sizes(log_probs.shape()[0], log_probs.shape()[1], beam));
  };
  grader.check("a step vs PyTorch's topk (K 3, V 5, beam 3)", hint::step, [&] { fixed("step"); });
  grader.check("the first step, one hypothesis (K 1, V 6, beam 4) vs PyTorch", hint::step, [&] { fixed("first"); });
  grader.check("random K, V and beam vs every continuation sorted", hint::step, [&] {
    Random rng(10000);
    for (int trial = 0; trial < 12; ++trial) {
      std::size_t K = rng.integer(1, 5), V = rng.integer(1, 7), beam = rng.integer(1, std::min<std::size_t>(K * V, 6));
      Array scores = rng.array({K}, -5.0, 0.0), log_probs = rng.array({K, V}, -6.0, 0.0);
      expect_candidates(reference(scores, log_probs, beam), m.step(scores, log_probs, beam), sizes(K, V, beam));
    }
  });
  grader.check("a beam wider than K * V keeps every continuation", hint::count, [&] {
    Random rng(10100);
    Array scores = rng.array({2}, -2.0, 0.0), log_probs = rng.array({2, 2}, -3.0, 0.0);
    expect_candidates(reference(scores, log_probs, 9), m.step(scores, log_probs, 9), sizes(2, 2, 9));
  });
  grader.check("equal scores keep the flat order", hint::ties, [&] {
    Array scores = {-1.0, -1.0}, log_probs = {{-0.5, -0.25, -0.5}, {-0.25, -0.5, -0.25}};
    expect_candidates(reference(scores, log_probs, 5), m.step(scores, log_probs, 5), sizes(2, 3, 5));
    // 24 continuations taking 3 scores: more than 16, where libstdc++'s std::sort stops
    // insertion-sorting (stable by accident) and reorders ties.
    Array wide_scores = {-1.0, -1.0, -1.0, -1.0}, wide = Array::from_shape({4, 6});
    for (std::size_t f = 0; f < wide.size(); ++f) wide.flat(f) = -0.25 * static_cast<double>(1 + f % 3);
    expect_candidates(reference(wide_scores, wide, 24), m.step(wide_scores, wide, 24), sizes(4, 6, 24));
  });
  return grader.finish();
}

}  // namespace beam
}  // namespace lab
