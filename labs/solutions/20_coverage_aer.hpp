// Lab 20's worked solution (the chapter's notebook's coverage_penalty; the library's coverage_score,
// decode/decode.cpp, and attention_links and alignment_error_counts, eval/alignment_metrics.cpp).
#pragma once

#include "labs/grader/lab20_coverage_aer.hpp"

#include <algorithm>
#include <cmath>

namespace lab {
namespace solutions {
namespace coverage_aer {

using attn::Tensor;
using lab::coverage_aer::Links;

inline Tensor coverage_penalty(const Tensor& attention, const std::vector<std::size_t>& steps,
                               const std::vector<std::size_t>& src_lengths) {
  const std::size_t B = attention.size(0), T = attention.size(1), S = attention.size(2);
  // Constant masks: the steps that count (a model attends at padded target steps too) and the real source positions.
  xt::xarray<double> rows = xt::zeros<double>({B, T, std::size_t(1)}), cols = xt::zeros<double>({B, S});
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t t = 0; t < std::min(T, steps[b]); ++t) rows(b, t, 0) = 1.0;
    for (std::size_t j = 0; j < std::min(S, src_lengths[b]); ++j) cols(b, j) = 1.0;
  }
  Tensor row_mask(rows), col_mask(cols);
  // cov_j sums over the target steps (axis 1): how much attention source word j got over the whole output.
  Tensor coverage = attn::sum(attention * row_mask, {1}) * col_mask;    // [B, S]
  return attn::sum(attn::pow(1.0 - coverage, 2.0) * col_mask, {1});  // [B]: padding is no word to cover
}

inline double coverage_score(const Tensor& weights, std::size_t src_length, double beta) {
  const xt::xarray<double> w = weights.data<double>();  // [T, S]
  double total = 0.0;
  for (std::size_t j = 0; j < src_length; ++j) {
    double c = 0.0;  // c_j: the weight word j got over all the steps
    for (std::size_t t = 0; t < w.shape()[0]; ++t) c += w(t, j);
    // min: attention beyond 1 earns nothing (the penalty is one-sided); the floor keeps a word never attended finite.
    total += std::log(std::max(std::min(c, 1.0), 1e-10));
  }
  return beta * total;
}

inline Links attention_links(const Tensor& weights, std::size_t src_length, std::size_t steps) {
  const xt::xarray<double> w = weights.data<double>();  // [T, S]
  Links links;
  for (std::size_t t = 0; t < steps; ++t) {
    std::size_t best = 0;  // the first maximum, over the real positions only
    for (std::size_t j = 1; j < src_length; ++j)
      if (w(t, j) > w(t, best)) best = j;
    links.insert({t, best});
  }
  return links;
}

inline double aer(const std::vector<Links>& a, const std::vector<Links>& sure, const std::vector<Links>& possible) {
  std::size_t n_a = 0, n_s = 0, a_and_s = 0, a_and_p = 0;  // counts add up over the corpus, then one ratio
  for (std::size_t k = 0; k < a.size(); ++k) {
    n_a += a[k].size();
    n_s += sure[k].size();
    for (const auto& link : a[k]) {
      const bool is_sure = sure[k].count(link) > 0;
      a_and_s += is_sure;
      a_and_p += is_sure || possible[k].count(link) > 0;  // P = possible ∪ S: a sure link is possible too
    }
  }
  return n_a + n_s ? 1.0 - double(a_and_s + a_and_p) / double(n_a + n_s) : 0.0;
}

inline lab::coverage_aer::CoverageAer solution() { return {coverage_penalty, coverage_score, attention_links, aer}; }

}  // namespace coverage_aer
}  // namespace solutions
}  // namespace lab
