#include "alignment_metrics.hpp"

#include "../core/errors.hpp"

#include <xtensor/xview.hpp>

#include <string>

namespace attn::models {

AerCounts& AerCounts::operator+=(const AerCounts& other) {
  a += other.a;
  s += other.s;
  a_and_s += other.a_and_s;
  a_and_p += other.a_and_p;
  return *this;
}

AerCounts alignment_error_counts(const AlignmentLinks& a, const AlignmentLinks& sure, const AlignmentLinks& possible) {
  AerCounts c;
  c.a = a.size();
  c.s = sure.size();
  for (const AlignmentLink& link : a) {
    const bool is_sure = sure.count(link) > 0;
    c.a_and_s += is_sure;
    c.a_and_p += is_sure || possible.count(link) > 0;  // P = possible ∪ S
  }
  return c;
}

AlignmentLinks gold_links(const std::vector<std::int64_t>& gold) {
  AlignmentLinks links;
  for (std::size_t t = 0; t < gold.size(); ++t)
    if (gold[t] >= 0) links.insert({t, static_cast<std::size_t>(gold[t])});
  return links;
}

namespace {

// Links of rows w[t, :], t < steps, each to its first maximum among the first src_length columns.
template <class Rows>
AlignmentLinks argmax_links(const Rows& w, std::size_t src_length, std::size_t steps) {
  const std::size_t T = w.shape()[0], S = w.shape()[1];
  const std::string op = "attention_links";
  if (src_length == 0 || src_length > S)
    throw ValueError(op + ": src_length must be in [1, " + std::to_string(S) + "], got " + std::to_string(src_length));
  if (steps > T) throw ValueError(op + ": steps must be at most T = " + std::to_string(T) + ", got " + std::to_string(steps));
  AlignmentLinks links;
  for (std::size_t t = 0; t < steps; ++t) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < src_length; ++j)
      if (w(t, j) > w(t, best)) best = j;
    links.insert({t, best});
  }
  return links;
}

}  // namespace

AlignmentLinks attention_links(const Tensor& weights, std::size_t src_length, std::size_t steps) {
  if (!weights.defined() || weights.dim() != 2)
    throw ShapeError("attention_links: expected weights [T, S], got " +
                     (weights.defined() ? shape_str(weights.shape()) : std::string("undefined")));
  return argmax_links(weights.to_array(), src_length, steps);
}

std::vector<AlignmentLinks> attention_links(const Tensor& weights, const std::vector<std::size_t>& src_lengths,
                                            const std::vector<std::size_t>& steps) {
  if (!weights.defined() || weights.dim() != 3)
    throw ShapeError("attention_links: expected weights [B, T, S], got " +
                     (weights.defined() ? shape_str(weights.shape()) : std::string("undefined")));
  const std::size_t B = weights.size(0);
  if (src_lengths.size() != B || steps.size() != B)
    throw ValueError("attention_links: expected " + std::to_string(B) + " source lengths and steps, got " +
                     std::to_string(src_lengths.size()) + " and " + std::to_string(steps.size()));
  const xt::xarray<double> w = weights.to_array();  // [B, T, S]
  std::vector<AlignmentLinks> links;
  for (std::size_t b = 0; b < B; ++b) {
    const xt::xarray<double> rows = xt::view(w, b, xt::all(), xt::all());  // [T, S]
    links.push_back(argmax_links(rows, src_lengths[b], steps[b]));
  }
  return links;
}

}  // namespace attn::models
