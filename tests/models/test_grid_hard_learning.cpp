// Chapter 4: hard attention learns too. Each word is written from ONE cell of
// the grid, sampled from a_t in training; the attention MLP gets no gradient
// through that choice and learns only from the REINFORCE estimator (reward
// log p(caption | cells), moving-average baseline, entropy bonus).
#include "grids.hpp"

TEST_CASE("GridCaptioner with hard attention, trained by REINFORCE, learns the captions and where to look") {
  const test::Learned r = test::learn_grids(attn::models::GridAttention::Hard, 1000);
  const auto& e = r.eval;
  MESSAGE("hard attention (REINFORCE), 1000 steps: exact match " << e.overall.exact_match() << ", token accuracy "
          << e.overall.token_accuracy() << ", the chosen cell is the gold cell " << e.alignment.hit_rate()
          << " (teacher forced), " << e.decoded_alignment.hit_rate() << " (greedy), " << r.seconds << " s");
  CHECK(e.overall.sentences == 200);
  CHECK(e.overall.exact_match() >= 0.6);
  CHECK(e.overall.token_accuracy() >= 0.85);
  CHECK(e.alignment.steps > 1400);
  CHECK(e.alignment.hit_rate() > 0.7);
  // One cell per word: the weight on the chosen cell is 1, so the mean gold weight is the hit rate.
  CHECK(e.alignment.mean_gold_weight() == doctest::Approx(e.alignment.hit_rate()).epsilon(1e-6));
}
