// The alignment error rate (Och & Ney 2003) against cases counted by hand.
#include "../helpers.hpp"

#include "eval/alignment_metrics.hpp"

namespace models = attn::models;
using attn::Tensor;

TEST_CASE("AER of one sentence with sure and possible links, by hand") {
  // sure S = {(0,0), (1,2), (2,3)}, possible-only (1,1), so P = S + {(1,1)}
  const models::AlignmentLinks sure = {{0, 0}, {1, 2}, {2, 3}}, possible = {{1, 1}};
  const models::AlignmentLinks a = {{0, 0}, {1, 1}, {2, 2}, {3, 3}};
  // |A| = 4, |S| = 3, A ∩ S = {(0,0)}, A ∩ P = {(0,0), (1,1)}: AER = 1 - (1 + 2) / (4 + 3) = 4/7
  models::AerCounts c = models::alignment_error_counts(a, sure, possible);
  CHECK(c.a == 4);
  CHECK(c.s == 3);
  CHECK(c.a_and_s == 1);
  CHECK(c.a_and_p == 2);
  CHECK(c.aer() == doctest::Approx(4.0 / 7.0).epsilon(1e-15));
  CHECK(c.precision() == doctest::Approx(0.5).epsilon(1e-15));
  CHECK(c.recall() == doctest::Approx(1.0 / 3.0).epsilon(1e-15));

  // A perfect alignment has AER 0; with P = S, AER = 1 - F1.
  CHECK(models::alignment_error_counts(sure, sure).aer() == 0.0);
  models::AerCounts f = models::alignment_error_counts(a, sure);  // |A ∩ S| = 1: F1 = 2 * 1 / (4 + 3)
  CHECK(f.aer() == doctest::Approx(1.0 - 2.0 / 7.0).epsilon(1e-15));
  // a sure link listed as possible too changes nothing (S ⊆ P)
  CHECK(models::alignment_error_counts(a, sure, {{1, 1}, {0, 0}}).aer() == doctest::Approx(4.0 / 7.0).epsilon(1e-15));
  CHECK(models::alignment_error_counts({}, {}).aer() == 0.0);
}

TEST_CASE("AER over a corpus adds the counts, then takes one ratio") {
  models::AerCounts total = models::alignment_error_counts({{0, 0}, {1, 1}, {2, 2}, {3, 3}}, {{0, 0}, {1, 2}, {2, 3}}, {{1, 1}});
  total += models::alignment_error_counts({{0, 1}}, {{0, 1}});
  // |A| = 5, |S| = 4, |A ∩ S| = 2, |A ∩ P| = 3: 1 - 5/9 = 4/9 (not the mean of 4/7 and 0)
  CHECK(total.aer() == doctest::Approx(4.0 / 9.0).epsilon(1e-15));
}

TEST_CASE("links from gold positions and from attention weights") {
  CHECK(models::gold_links({2, -1, 0}) == models::AlignmentLinks{{0, 2}, {2, 0}});
  Tensor w = attn::tensor(xt::xarray<double>{{0.1, 0.7, 0.2, 0.9},     // column 3 is padding: not a candidate
                                             {0.4, 0.4, 0.2, 0.0},     // a tie: the first maximum
                                             {0.0, 0.0, 1.0, 0.0}});
  CHECK(models::attention_links(w, 3, 2) == models::AlignmentLinks{{0, 1}, {1, 0}});
  CHECK(models::attention_links(w, 4, 3) == models::AlignmentLinks{{0, 3}, {1, 0}, {2, 2}});
  auto batched = models::attention_links(attn::unsqueeze(w, 0), std::vector<std::size_t>{3}, std::vector<std::size_t>{3});
  REQUIRE(batched.size() == 1);
  CHECK(batched[0] == models::AlignmentLinks{{0, 1}, {1, 0}, {2, 2}});
  CHECK_THROWS_WITH_SUBSTR(models::attention_links(w, 5, 2), attn::ValueError,
                           "attention_links: src_length must be in [1, 4], got 5");
  CHECK_THROWS_WITH_SUBSTR(models::attention_links(w, 3, 4), attn::ValueError,
                           "attention_links: steps must be at most T = 3, got 4");
  CHECK_THROWS_WITH_SUBSTR(models::attention_links(attn::unsqueeze(w, 0), std::vector<std::size_t>{3, 3}, std::vector<std::size_t>{1}), attn::ValueError,
                           "attention_links: expected 1 source lengths and steps, got 2 and 1");
  CHECK_THROWS_WITH_SUBSTR(models::attention_links(attn::unsqueeze(w, 0), 3, 1), attn::ShapeError,
                           "attention_links: expected weights [T, S], got [1, 3, 4]");
}
