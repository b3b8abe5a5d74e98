// Accuracy, exact match, accuracy by source length and the alignment metric on
// hand-made cases whose answers are counted by hand in the comments.
#include "../helpers.hpp"

#include "eval/alignment_accuracy.hpp"

#include <xtensor/xview.hpp>

using attn::Index;
using attn::Tensor;
using namespace attn::models;

TEST_CASE("sentence_ids cuts at <eos> and drops <pad> and <bos>") {
  CHECK(sentence_ids({1, 5, 6, 2, 7, 0}) == Ids{5, 6});
  CHECK(sentence_ids({5, 0, 6}) == Ids{5, 6});
  CHECK(sentence_ids({2, 5}).empty());
  const Index padded = {{5, 6, 2, 0}, {7, 2, 0, 0}};
  CHECK(sentences_of(padded) == std::vector<Ids>{{5, 6}, {7}});
}

TEST_CASE("compare: exact match and token accuracy, <eos> counted as a token") {
  const std::vector<Ids> gold = {{4, 7, 9}, {5, 6}, {8}};
  const std::vector<Ids> predicted = {
      {4, 7, 2},        // 4 7 <eos> vs 4 7 9 <eos>: 2 of 4 tokens, not exact
      {5, 6, 2, 9, 9},  // right; what follows <eos> is ignored: 3 of 3
      {8, 8, 2},        // 8 8 <eos> vs 8 <eos>: 1 of 2
  };
  const Counts c = compare(predicted, gold);
  CHECK(c.sentences == 3);
  CHECK(c.exact == 1);
  CHECK(c.tokens == 4 + 3 + 2);
  CHECK(c.correct == 2 + 3 + 1);
  CHECK(exact_match(predicted, gold) == doctest::Approx(1.0 / 3));
  CHECK(token_accuracy(predicted, gold) == doctest::Approx(6.0 / 9));
  // Gold given with <eos> and padding (a tgt_out row) counts the same.
  CHECK(compare({{5, 6}}, {{5, 6, 2, 0, 0}}).exact == 1);
  CHECK_THROWS_WITH_SUBSTR(compare({{1}}, {}), attn::ValueError, "1 predicted sentences but 0 gold");
  CHECK(Counts().exact_match() == 0.0);
}

TEST_CASE("token_accuracy under teacher forcing ignores padding") {
  // logits [1, 3, 4]: argmax 1, 3, 0; targets 1, 2, <pad>: 1 of 2 counted.
  Tensor logits = attn::tensor({{{0.0, 5.0, 1.0, 2.0}, {0.0, 1.0, 2.0, 3.0}, {9.0, 0.0, 0.0, 0.0}}});
  const Index targets = {{1, 2, 0}};
  CHECK(token_accuracy(logits, targets) == 0.5);
  const Index wrong = {{1, 2}};
  CHECK_THROWS_WITH_SUBSTR(token_accuracy(logits, wrong), attn::ShapeError, "logits [B, T, V] and targets [B, T]");
}

TEST_CASE("accuracy_by_length, buckets and the table") {
  const std::vector<Ids> gold = {{4}, {4, 5}, {5, 4}, {4, 5, 6}};
  const std::vector<Ids> predicted = {{4}, {4, 5}, {5, 5}, {4}};
  const auto table = accuracy_by_length(predicted, gold, {1, 2, 2, 3});
  REQUIRE(table.size() == 3);
  CHECK(table.at(1).exact_match() == 1.0);
  CHECK(table.at(2).exact_match() == 0.5);
  CHECK(table.at(2).token_accuracy() == doctest::Approx(5.0 / 6));  // 3 of 3, then 2 of 3
  CHECK(table.at(3).exact_match() == 0.0);
  const auto buckets = bucket_by_length(table, 2);  // {0, 1} -> 0, {2, 3} -> 2
  CHECK(buckets.size() == 2);
  CHECK(buckets.at(2).sentences == 3);
  CHECK(buckets.at(2).exact == 1);
  const std::string text = format_length_table({{"plain", table}, {"bahdanau", buckets}});
  INFO(text);
  CHECK(text.find("plain") != std::string::npos);
  CHECK(text.find("bahdanau") != std::string::npos);
  CHECK(text.find("50.0") != std::string::npos);   // plain at length 2
  CHECK(text.find("33.3") != std::string::npos);   // bahdanau's bucket 2
  CHECK_THROWS_WITH_SUBSTR(accuracy_by_length(predicted, gold, {1}), attn::ValueError, "source lengths");
}

TEST_CASE("alignment_accuracy: peak on the gold position, off by one, weight on gold") {
  // Reversal of a 3-token source: gold alignment 2 1 0, then <eos> (-1).
  const xt::xarray<double> weights = {
      {0.1, 0.2, 0.7, 0.0},  // peak 2 = gold: hit
      {0.6, 0.3, 0.1, 0.0},  // peak 0, gold 1: off by one
      {0.2, 0.1, 0.3, 0.4},  // padding (j = 3) is never the peak: peak 2, gold 0: a miss by 2
      {0.3, 0.3, 0.4, 0.0},  // <eos>: no gold position, skipped
  };
  const AlignmentStats a = alignment_accuracy(weights, 3, {2, 1, 0, -1});
  CHECK(a.steps == 3);
  CHECK(a.hits == 1);
  CHECK(a.off_by_one == 1);
  CHECK(a.hit_rate() == doctest::Approx(1.0 / 3));
  CHECK(a.off_by_one_rate() == doctest::Approx(1.0 / 3));
  CHECK(a.mean_gold_weight() == doctest::Approx((0.7 + 0.3 + 0.2) / 3));

  // The batched form: [B, T, S] with per-sentence lengths and alignments.
  xt::xarray<double> batch = xt::zeros<double>({2, 4, 4});
  xt::view(batch, 0) = weights;
  batch(1, 0, 0) = 1.0;  // sentence 1: one step, gold 0: hit
  const AlignmentStats both = alignment_accuracy(Tensor(batch), {3, 1}, {{2, 1, 0, -1}, {0}});
  CHECK(both.steps == 4);
  CHECK(both.hits == 2);
  CHECK_THROWS_WITH_SUBSTR(alignment_accuracy(weights, 2, {2}), attn::ValueError, "past the source length");
  CHECK_THROWS_WITH_SUBSTR(alignment_accuracy(Tensor(batch), {3}, {{0}}), attn::ShapeError, "attention [B, T, S]");
}

TEST_CASE("alignment_accuracy of decoded hypotheses, heads averaged") {
  Hypothesis h;
  h.tokens = {5, 2};
  h.attention["attention"] = {attn::tensor({0.0, 1.0}), attn::tensor({0.5, 0.5})};
  h.attention["heads"] = {attn::tensor({{0.0, 1.0}, {0.6, 0.4}}), attn::tensor({{1.0, 0.0}, {1.0, 0.0}})};
  const AlignmentStats a = alignment_accuracy({h}, "attention", {2}, {{1, -1}});
  CHECK(a.steps == 1);
  CHECK(a.hits == 1);
  const AlignmentStats heads = alignment_accuracy({h}, "heads", {2}, {{1, 0}});  // means {0.3, 0.7}, {1, 0}
  CHECK(heads.hits == 2);
  CHECK(hypothesis_tokens({h}) == std::vector<Ids>{{5, 2}});
}
