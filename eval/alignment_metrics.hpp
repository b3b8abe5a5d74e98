// The alignment error rate (Och & Ney 2003, "A Systematic Comparison of Various
// Statistical Alignment Models", section 5): how well a set of links A between
// target and source positions matches a gold alignment with sure links S and
// possible links P (S a subset of P):
//
//   precision = |A ∩ P| / |A|,   recall = |A ∩ S| / |S|,
//   AER = 1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|)
//
// 0 is perfect; a link in A that is not even possible counts against it, and a
// sure link A misses counts against it. With no possible-only links (P = S) AER
// is 1 - F1 of A against S.
//
//   AlignmentLinks a = attention_links(weights, src_lengths, steps);  // argmax_j a_tj per step
//   AerCounts c = alignment_error_counts(a, sure, possible);
//   c.aer();
#pragma once

#include "../core/tensor.hpp"

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace attn::models {

// One link: (target position t, source position j), both from 0.
using AlignmentLink = std::pair<std::size_t, std::size_t>;
using AlignmentLinks = std::set<AlignmentLink>;

struct AerCounts {
  std::size_t a = 0, s = 0;                    // |A|, |S|
  std::size_t a_and_s = 0, a_and_p = 0;        // |A ∩ S|, |A ∩ P|
  double precision() const { return a ? double(a_and_p) / double(a) : 0.0; }
  double recall() const { return s ? double(a_and_s) / double(s) : 0.0; }
  // 1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|); 0 when A and S are both empty.
  double aer() const { return a + s ? 1.0 - double(a_and_s + a_and_p) / double(a + s) : 0.0; }
  AerCounts& operator+=(const AerCounts& other);  // corpus level: counts add up, then one ratio
};

// Counts for one sentence. Every sure link must also be possible: P is taken as
// possible ∪ sure, as Och & Ney define it (S ⊆ P).
AerCounts alignment_error_counts(const AlignmentLinks& a, const AlignmentLinks& sure, const AlignmentLinks& possible = {});

// The links of gold positions gold[t] (-1: target t comes from no source position).
AlignmentLinks gold_links(const std::vector<std::int64_t>& gold);

// A hard alignment read off attention weights [T, S] of one sentence: the link
// (t, argmax_j a_tj) for every t < steps, over the first src_length source
// positions. ValueError if steps or src_length do not fit.
AlignmentLinks attention_links(const Tensor& weights, std::size_t src_length, std::size_t steps);
// The same for every sentence b of weights [B, T, S].
std::vector<AlignmentLinks> attention_links(const Tensor& weights, const std::vector<std::size_t>& src_lengths,
                                            const std::vector<std::size_t>& steps);

}  // namespace attn::models
