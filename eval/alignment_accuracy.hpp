// Chapter 9's question: does the attention peak sit on the source token that
// the target token really comes from?
//
//   AlignmentStats a = alignment_accuracy(model.last_attention().at("attention"), lengths, alignments);
//   a.hit_rate();   // how often argmax_j a_tj == gold source position of target t
#pragma once

#include "accuracy.hpp"

#include <string>
#include <vector>

namespace attn::models {

// Attention against the gold alignment, over target steps that have a gold
// source position (alignment[t] >= 0).
struct AlignmentStats {
  std::size_t steps = 0;        // target steps with a gold position
  std::size_t hits = 0;         // the peak argmax_j a_tj is the gold position
  std::size_t off_by_one = 0;   // the peak is next to it
  double gold_weight = 0.0;     // sum over steps of a_t,gold: how sharp (not blurred) attention is
  double hit_rate() const { return steps ? double(hits) / double(steps) : 0.0; }
  double off_by_one_rate() const { return steps ? double(off_by_one) / double(steps) : 0.0; }
  double mean_gold_weight() const { return steps ? gold_weight / double(steps) : 0.0; }
  AlignmentStats& operator+=(const AlignmentStats& other);
};

// One sentence: weights [T, S] (row t: step t), its source length, its gold alignment.
// Steps past either T or the alignment are skipped, so are peaks over padding (never argmax there).
AlignmentStats alignment_accuracy(const xt::xarray<double>& weights, std::size_t src_length, const Ids& alignment);
// A batch under teacher forcing: attention [B, T, S] (as last_attention()["attention"]).
AlignmentStats alignment_accuracy(const Tensor& attention, const std::vector<std::size_t>& src_lengths,
                                  const std::vector<Ids>& alignments);
// Decoded hypotheses, under attention `name`; [T, H, S] weights are averaged over heads.
AlignmentStats alignment_accuracy(const std::vector<Hypothesis>& hypotheses, const std::string& name,
                                  const std::vector<std::size_t>& src_lengths, const std::vector<Ids>& alignments);

}  // namespace attn::models
