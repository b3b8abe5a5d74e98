// Attention against the gold alignment (see alignment_accuracy.hpp).
#include "alignment_accuracy.hpp"

#include "../core/ops.hpp"

#include <xtensor/xview.hpp>

#include <algorithm>

namespace attn::models {

namespace {

void check_same_size(const char* op, std::size_t a, std::size_t b, const char* what) {
  if (a != b) throw ValueError(std::string(op) + ": " + std::to_string(a) + " hypotheses but " + std::to_string(b) + " " + what);
}

}  // namespace

AlignmentStats& AlignmentStats::operator+=(const AlignmentStats& other) {
  steps += other.steps;
  hits += other.hits;
  off_by_one += other.off_by_one;
  gold_weight += other.gold_weight;
  return *this;
}

AlignmentStats alignment_accuracy(const xt::xarray<double>& weights, std::size_t src_length, const Ids& alignment) {
  if (weights.dimension() != 2)
    throw ShapeError("alignment_accuracy: expected weights [T, S], got " +
                     shape_str(Shape(weights.shape().begin(), weights.shape().end())));
  const std::size_t steps = std::min<std::size_t>(weights.shape()[0], alignment.size());
  const std::size_t S = std::min<std::size_t>(weights.shape()[1], src_length);
  AlignmentStats stats;
  for (std::size_t t = 0; t < steps; ++t) {
    const std::int64_t gold = alignment[t];
    if (gold < 0) continue;  // this target token comes from no source position
    if (static_cast<std::size_t>(gold) >= S)
      throw ValueError("alignment_accuracy: gold position " + std::to_string(gold) + " at step " + std::to_string(t) +
                       " is past the source length " + std::to_string(S));
    std::size_t peak = 0;  // argmax_j a_tj over the valid source positions
    for (std::size_t j = 1; j < S; ++j)
      if (weights(t, j) > weights(t, peak)) peak = j;
    const std::int64_t distance = std::abs(static_cast<std::int64_t>(peak) - gold);
    ++stats.steps;
    stats.hits += distance == 0 ? 1 : 0;
    stats.off_by_one += distance == 1 ? 1 : 0;
    stats.gold_weight += weights(t, static_cast<std::size_t>(gold));
  }
  return stats;
}

AlignmentStats alignment_accuracy(const Tensor& attention, const std::vector<std::size_t>& src_lengths,
                                  const std::vector<Ids>& alignments) {
  const Shape shape = attention.shape();
  if (shape.size() != 3 || shape[0] != src_lengths.size() || shape[0] != alignments.size())
    throw ShapeError("alignment_accuracy: expected attention [B, T, S] with B = " +
                     std::to_string(src_lengths.size()) + " lengths and " + std::to_string(alignments.size()) +
                     " alignments, got " + shape_str(shape));
  const xt::xarray<double> all = attention.to_array();
  AlignmentStats total;
  for (std::size_t b = 0; b < shape[0]; ++b) {
    xt::xarray<double> weights = xt::view(all, b, xt::all(), xt::all());  // [T, S]
    total += alignment_accuracy(weights, src_lengths[b], alignments[b]);
  }
  return total;
}

AlignmentStats alignment_accuracy(const std::vector<Hypothesis>& hypotheses, const std::string& name,
                                  const std::vector<std::size_t>& src_lengths, const std::vector<Ids>& alignments) {
  check_same_size("alignment_accuracy", hypotheses.size(), src_lengths.size(), "source lengths");
  check_same_size("alignment_accuracy", hypotheses.size(), alignments.size(), "alignments");
  AlignmentStats total;
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    if (hypotheses[i].tokens.empty()) continue;
    Tensor weights = attention_matrix(hypotheses[i], name);     // [T, S] or [T, H, S]
    if (weights.dim() == 3) weights = mean(weights, {1});      // [T, S]: the heads' average
    total += alignment_accuracy(weights.to_array(), src_lengths[i], alignments[i]);
  }
  return total;
}

}  // namespace attn::models
