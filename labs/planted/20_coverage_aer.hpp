// Wrong solutions of lab 20; labs/tests/test_lab20.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/20_coverage_aer.hpp"

#include <cmath>

namespace lab {
namespace planted {
namespace coverage_aer {

using attn::Tensor;
using lab::coverage_aer::Link;
using lab::coverage_aer::Links;
using Sizes = std::vector<std::size_t>;

struct Penalty {
  bool wrong_axis = false, steps_ignored = false, padding_counted = false, absolute = false, mean = false,
       detached = false, padding_zeroed = false, mean_steps = false, unsquared = false, lengths_swapped = false;
};

// A learner's coverage penalty with one mistake; built from attn's ops unless `detached`.
inline Tensor coverage_penalty(const Penalty& o, const Tensor& attention, const Sizes& steps, const Sizes& L) {
  const std::size_t B = attention.size(0), T = attention.size(1), S = attention.size(2);
  xt::xarray<double> rows = xt::zeros<double>({B, T}), cols = xt::zeros<double>({B, S}), n = xt::ones<double>({B}),
                     n_steps = xt::ones<double>({B, std::size_t(1)});
  for (std::size_t b = 0; b < B; ++b) {
    const std::size_t n_t = o.lengths_swapped ? L[b] : steps[b], n_s = o.lengths_swapped ? steps[b] : L[b];
    for (std::size_t t = 0; t < T; ++t) rows(b, t) = o.steps_ignored || t < n_t ? 1.0 : 0.0;
    for (std::size_t j = 0; j < S; ++j) cols(b, j) = o.padding_counted || j < n_s ? 1.0 : 0.0;
    if (o.mean) n(b) = double(std::min(S, L[b]));
    if (o.mean_steps) n_steps(b, 0) = std::max(1.0, double(std::min(T, steps[b])));
  }
  Tensor row_mask(rows), col_mask(cols);
  Tensor out;
  if (o.wrong_axis) {  // one coverage per target step, summed over the source
    Tensor cov = attn::sum(attention * attn::unsqueeze(col_mask, 1), {2}) * row_mask;  // [B, T]
    out = attn::sum(attn::pow(1.0 - cov, 2.0) * row_mask, {1});
  } else {
    Tensor cov = attn::sum(attention * attn::unsqueeze(row_mask, 2), {1}) * col_mask / Tensor(n_steps);  // [B, S]
    if (o.padding_zeroed)  // cov masked, the sum over j not: each padding position adds (1 - 0)^2
      return attn::sum(attn::pow(1.0 - cov, 2.0), {1});
    Tensor term = o.absolute ? attn::abs(1.0 - cov) : o.unsquared ? 1.0 - cov : attn::pow(1.0 - cov, 2.0);
    out = attn::sum(term * col_mask, {1}) / Tensor(n);
  }
  return o.detached ? Tensor(out.data<double>()) : out;
}

struct Score {
  bool no_min = false, wrong_axis = false, unguarded = false, skipped = false, padding_counted = false,
       sign = false, no_beta = false, log10 = false, mean_steps = false, mean_words = false, last_word_out = false;
};

inline double coverage_score(const Score& o, const Tensor& weights, std::size_t src_length, double beta) {
  const xt::xarray<double> w = weights.data<double>();
  const std::size_t T = w.shape()[0], S = w.shape()[1];
  double total = 0.0;
  if (o.wrong_axis) {  // the total of each step's row
    for (std::size_t t = 0; t < T; ++t) {
      double c = 0.0;
      for (std::size_t j = 0; j < src_length; ++j) c += w(t, j);
      total += std::log(std::max(std::min(c, 1.0), 1e-10));
    }
    return beta * total;
  }
  const std::size_t n = o.padding_counted ? S : o.last_word_out ? src_length - 1 : src_length;
  for (std::size_t j = 0; j < n; ++j) {
    double c = 0.0;
    for (std::size_t t = 0; t < T; ++t) c += w(t, j);
    if (o.mean_steps) c /= double(T);
    if (o.skipped && c == 0.0) continue;  // "log 0 is undefined: skip it"
    const double capped = o.no_min ? c : std::min(c, 1.0);
    const double x = o.unguarded || o.skipped ? capped : std::max(capped, 1e-10);
    total += o.log10 ? std::log10(x) : std::log(x);
  }
  if (o.no_beta) return total;
  if (o.mean_words) return beta * total / double(n);
  return (o.sign ? -beta : beta) * total;
}

struct Peaks {
  bool wrong_axis = false, one_based = false, padding = false, last_max = false, steps_ignored = false,
       swapped = false, steps_minus_one = false, every_tied_max = false, last_word_out = false;
};

inline Links attention_links(const Peaks& o, const Tensor& weights, std::size_t src_length, std::size_t steps) {
  const xt::xarray<double> w = weights.data<double>();
  const std::size_t T = w.shape()[0], S = w.shape()[1];
  Links out;
  if (o.wrong_axis) {  // argmax over axis 0: the step that attends most to each source position
    for (std::size_t j = 0; j < src_length; ++j) {
      std::size_t best = 0;
      for (std::size_t t = 1; t < steps; ++t)
        if (w(t, j) > w(best, j)) best = t;
      if (steps) out.insert({best, j});
    }
    return out;
  }
  // steps_minus_one: "leave <eos> out" applied to steps, which already leaves it out
  const std::size_t n_t = o.steps_ignored ? T : o.steps_minus_one ? (steps ? steps - 1 : 0) : steps;
  for (std::size_t t = 0; t < n_t; ++t) {
    std::size_t best = 0;
    const std::size_t n_s = o.padding ? S : o.last_word_out ? std::max<std::size_t>(1, src_length - 1) : src_length;
    for (std::size_t j = 1; j < n_s; ++j)
      if (o.last_max ? w(t, j) >= w(t, best) : w(t, j) > w(t, best)) best = j;
    if (o.every_tied_max)  // "the argmax" read as every position holding the row's maximum
      for (std::size_t j = 0; j < n_s; ++j)
        if (w(t, j) == w(t, best)) out.insert({t, j});
    out.insert(o.one_based ? Link{t + 1, best + 1} : o.swapped ? Link{best, t} : Link{t, best});
  }
  return out;
}

struct Rate {
  bool sure_twice = false, p_without_s = false, over_p = false, mean_sentences = false, int_division = false,
       one_minus_f1 = false, sure_and_possible_twice = false, merged = false;
};

inline double aer(const Rate& o, const std::vector<Links>& a, const std::vector<Links>& s,
                  const std::vector<Links>& p) {
  if (o.merged) {  // one set of links for the whole corpus: the same (t, j) of two sentences collapse into one
    Links all_a, all_s, all_p;
    for (std::size_t k = 0; k < a.size(); ++k) {
      all_a.insert(a[k].begin(), a[k].end()), all_s.insert(s[k].begin(), s[k].end());
      all_p.insert(p[k].begin(), p[k].end());
    }
    return aer(Rate{}, {all_a}, {all_s}, {all_p});
  }
  double n_a = 0, n_s = 0, n_p = 0, as = 0, ap = 0, mean = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    Links all_p = p[k];
    all_p.insert(s[k].begin(), s[k].end());
    double kas = 0, kap = 0;
    for (const Link& l : a[k]) {
      kas += s[k].count(l);
      kap += o.p_without_s ? p[k].count(l)
             : o.sure_and_possible_twice ? s[k].count(l) + p[k].count(l)  // a sure link repeated in possible: 2
                                         : all_p.count(l);
    }
    if (o.sure_twice) kap = kas;  // 2 |A ∩ S|: "P = S"
    n_a += a[k].size(), n_s += s[k].size(), n_p += all_p.size(), as += kas, ap += kap;
    const double d = double(a[k].size() + s[k].size());
    mean += d ? 1.0 - (kas + kap) / d : 0.0;
  }
  if (o.mean_sentences) return a.empty() ? 0.0 : mean / double(a.size());
  if (o.int_division) {  // the counts kept as integers: the ratio is truncated to 0 or 1
    const auto num = std::size_t(as + ap), den = std::size_t(n_a + n_s);
    return den ? 1.0 - double(num / den) : 0.0;
  }
  if (o.one_minus_f1) {  // 1 - F1 of precision |A ∩ P| / |A| and recall |A ∩ S| / |S|: AER only when P = S
    const double pr = n_a ? ap / n_a : 0.0, rc = n_s ? as / n_s : 0.0;
    return n_a + n_s == 0 ? 0.0 : pr + rc > 0 ? 1.0 - 2 * pr * rc / (pr + rc) : 1.0;
  }
  const double d = o.over_p ? n_a + n_p : n_a + n_s;
  return d ? 1.0 - (as + ap) / d : 0.0;
}

inline std::vector<Planted<lab::coverage_aer::CoverageAer>> all() {
  using lab::coverage_aer::CoverageAer;
  using S = CoverageAer;
  auto base = [] { return lab::solutions::coverage_aer::solution(); };
  auto pen = [&](Penalty o) {
    S s = base();
    s.coverage_penalty = [o](const Tensor& a, const Sizes& st, const Sizes& L) { return coverage_penalty(o, a, st, L); };
    return s;
  };
  auto score = [&](Score o) {
    S s = base();
    s.coverage_score = [o](const Tensor& w, std::size_t L, double beta) { return coverage_score(o, w, L, beta); };
    return s;
  };
  auto peaks = [&](Peaks o) {
    S s = base();
    s.attention_links = [o](const Tensor& w, std::size_t L, std::size_t n) { return attention_links(o, w, L, n); };
    return s;
  };
  auto rate = [&](Rate o) {
    S s = base();
    s.aer = [o](const std::vector<Links>& a, const std::vector<Links>& sure, const std::vector<Links>& p) {
      return aer(o, a, sure, p);
    };
    return s;
  };
  std::vector<Planted<CoverageAer>> out;
  Penalty p;
  p.wrong_axis = true;
  out.push_back({"coverage summed over the source (per target step)", pen(p),
                 "coverage summed over the source positions (axis 2)", true});
  p = {};
  p.steps_ignored = true;
  out.push_back({"coverage over every target step, steps ignored", pen(p), "the target steps t >= steps[b] counted", true});
  p = {};
  p.padding_counted = true;
  out.push_back({"the padding positions in the penalty", pen(p), "the padding positions j >= src_lengths[b] counted", true});
  p = {};
  p.absolute = true;
  out.push_back({"|1 - cov| instead of (1 - cov)^2", pen(p), "|1 - cov_j| instead of its square", true});
  p = {};
  p.mean = true;
  out.push_back({"the mean over the source positions", pen(p), "the mean over the source positions", true});
  p = {};
  p.detached = true;
  out.push_back({"the penalty copied through an array (no gradient)", pen(p), "does not require grad", true});
  p = {};
  p.padding_zeroed = true;
  out.push_back({"coverage masked, the sum over the padding positions not", pen(p),
                 "the padding positions j >= src_lengths[b] counted", true});
  p = {};
  p.mean_steps = true;
  out.push_back({"coverage the mean over the steps", pen(p), "the mean over the target steps", true});
  p = {};
  p.unsquared = true;
  out.push_back({"1 - cov not squared", pen(p), "1 - cov_j unsquared", true});
  p = {};
  p.lengths_swapped = true;
  out.push_back({"steps and src_lengths swapped", pen(p), "steps and src_lengths swapped", true});
  Score c;
  c.no_min = true;
  out.push_back({"min(c, 1) forgotten", score(c), "the penalty rewards over-attention", true});
  c = {};
  c.wrong_axis = true;
  out.push_back({"c summed along each step's row", score(c), "c summed over the source positions (along a row)", true});
  c = {};
  c.unguarded = true;
  out.push_back({"log 0 of a word never attended, no floor", score(c), "log(0) = -inf for a word no step attended", true});
  c = {};
  c.skipped = true;
  out.push_back({"a word never attended skipped", score(c), "left out of the sum", true});
  c = {};
  c.padding_counted = true;
  out.push_back({"the padding positions in GNMT's penalty", score(c), "the padding positions j >= src_length counted", true});
  c = {};
  c.sign = true;
  out.push_back({"GNMT's penalty with its sign flipped", score(c), "the sign flipped", true});
  c = {};
  c.no_beta = true;
  out.push_back({"GNMT's penalty without beta", score(c), "beta left out", true});
  c = {};
  c.log10 = true;
  out.push_back({"GNMT's penalty with log10", score(c), "log10 instead of the natural log", true});
  c = {};
  c.mean_steps = true;
  out.push_back({"GNMT's c_j the mean over the steps", score(c), "c_j the mean over the steps", true});
  c = {};
  c.mean_words = true;
  out.push_back({"GNMT's penalty the mean over the words", score(c), "the mean over the source words", true});
  c = {};
  c.last_word_out = true;
  out.push_back({"GNMT's penalty over j < src_length - 1", score(c), "the last source word j = src_length - 1 left out", true});
  Peaks k;
  k.wrong_axis = true;
  out.push_back({"argmax over the wrong axis (down each column)", peaks(k), "the argmax taken down a column", true});
  k = {};
  k.one_based = true;
  out.push_back({"links counted from 1", peaks(k), "links counted from 1", true});
  k = {};
  k.padding = true;
  out.push_back({"the argmax over the padding too", peaks(k), "the argmax ran over the padding positions", true});
  k = {};
  k.last_max = true;
  out.push_back({"a tie to the last maximum", peaks(k), "a tie goes to the last maximum", true});
  k = {};
  k.steps_ignored = true;
  out.push_back({"a link for every step, steps ignored", peaks(k), "links for the rows t >= steps", true});
  k = {};
  k.every_tied_max = true;
  out.push_back({"a link to every tied maximum", peaks(k), "a link to every tied maximum", true});
  k = {};
  k.last_word_out = true;
  out.push_back({"the argmax over j < src_length - 1", peaks(k), "the last source word j = src_length - 1 left out", true});
  k = {};
  k.swapped = true;
  out.push_back({"links written (j, t)", peaks(k), "links written (j, t)", true});
  k = {};
  k.steps_minus_one = true;
  out.push_back({"one step too few (<eos> left out twice)", peaks(k), "the last step t = steps - 1 left out", true});
  Rate r;
  r.sure_twice = true;
  out.push_back({"|A ∩ S| counted twice (P ignored)", rate(r), "|A ∩ S| counted twice", true});
  r = {};
  r.p_without_s = true;
  out.push_back({"P taken as the possible links alone, without S", rate(r), "P contains S", true});
  r = {};
  r.over_p = true;
  out.push_back({"divided by |A| + |P|", rate(r), "divided by |A| + |P|", true});
  r = {};
  r.mean_sentences = true;
  out.push_back({"the mean of per-sentence AERs", rate(r), "the mean of the sentences' AERs", true});
  r = {};
  r.int_division = true;
  out.push_back({"the AER's ratio in integer division", rate(r), "integer division", true});
  r = {};
  r.one_minus_f1 = true;
  out.push_back({"1 - F1 of precision and recall", rate(r), "1 - F1", true});
  r = {};
  r.sure_and_possible_twice = true;
  out.push_back({"a sure link repeated in possible counted twice", rate(r), "listed in possible too counted twice", true});
  r = {};
  r.merged = true;
  out.push_back({"the sentences' links merged into one set", rate(r), "merged into one set", true});
  return out;
}

}  // namespace coverage_aer
}  // namespace planted
}  // namespace lab
