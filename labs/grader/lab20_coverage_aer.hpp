// Lab 20's grader: chapter 9's coverage penalty (the training loss), GNMT's coverage penalty
// (beam search's), and the alignment error rate of attention's peaks (labs/20_coverage_aer/README.md).
//
//   lab::coverage_aer::grade(lab::coverage_aer::CoverageAer{coverage_penalty, coverage_score,
//                                                           attention_links, aer});
//   // "lab 20: k of M checks pass"
#pragma once

#include "lab.hpp"

#include <set>
#include <utility>

namespace lab {
namespace coverage_aer {

using Link = std::pair<std::size_t, std::size_t>;  // (target step t, source position j), both from 0
using Links = std::set<Link>;                       // as attn::models::AlignmentLinks

struct CoverageAer {
  // attention [B, T, S], steps (B values: the target steps t < steps[b] count), src_lengths (the source
  // positions j < src_lengths[b] count) -> P [B], built from attn's ops (it is a training loss):
  //   cov_bj = sum_{t < steps[b]} a_btj,   P_b = sum_{j < src_lengths[b]} (1 - cov_bj)^2.
  std::function<Tensor(const Tensor& attention, const std::vector<std::size_t>& steps,
                       const std::vector<std::size_t>& src_lengths)>
      coverage_penalty;
  // weights [T, S] of one output, src_length, beta -> GNMT's penalty (a number, for ranking beams):
  //   beta * sum_{j < src_length} log(max(min(c_j, 1), 1e-10)),   c_j = sum_t a_tj.
  std::function<double(const Tensor& weights, std::size_t src_length, double beta)> coverage_score;
  // weights [T, S] of one output -> the links (t, argmax_{j < src_length} a_tj) for t < steps (the first maximum).
  std::function<Links(const Tensor& weights, std::size_t src_length, std::size_t steps)> attention_links;
  // One Links per sentence of a corpus: A, the sure links S and the possible links (P = possible ∪ S) ->
  //   AER = 1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|), the counts summed over the corpus first; 0 when |A| + |S| = 0.
  std::function<double(const std::vector<Links>& a, const std::vector<Links>& sure, const std::vector<Links>& possible)>
      aer;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const CoverageAer& c, std::ostream& os = std::cout);

}  // namespace coverage_aer
}  // namespace lab
