#include "bleu.hpp"

#include "../core/errors.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace attn::models {

namespace {

using NgramCounts = std::map<data::Tokens, std::size_t>;

// Every n-gram of `tokens` with its count (none when the sentence is shorter than n).
NgramCounts ngrams(const data::Tokens& tokens, std::size_t n) {
  NgramCounts counts;
  for (std::size_t i = 0; i + n <= tokens.size(); ++i)
    ++counts[data::Tokens(tokens.begin() + static_cast<long>(i), tokens.begin() + static_cast<long>(i + n))];
  return counts;
}

void check_order(const char* op, const BleuOptions& options) {
  if (options.max_order == 0) throw ValueError(std::string(op) + ": max_order must be at least 1, got 0");
}

}  // namespace

BleuStats& BleuStats::operator+=(const BleuStats& other) {
  if (matches.empty()) {
    matches.assign(other.matches.size(), 0);
    totals.assign(other.totals.size(), 0);
  }
  if (other.matches.size() != matches.size())
    throw ValueError("BleuStats: cannot add statistics of orders 1.." + std::to_string(other.matches.size()) +
                     " to statistics of orders 1.." + std::to_string(matches.size()));
  for (std::size_t n = 0; n < matches.size(); ++n) {
    matches[n] += other.matches[n];
    totals[n] += other.totals[n];
  }
  hyp_length += other.hyp_length;
  ref_length += other.ref_length;
  return *this;
}

BleuStats bleu_stats(const std::vector<data::Tokens>& references, const data::Tokens& hypothesis,
                     const BleuOptions& options) {
  check_order("bleu_stats", options);
  if (references.empty()) throw ValueError("bleu_stats: expected at least one reference, got none");
  BleuStats s;
  for (std::size_t n = 1; n <= options.max_order; ++n) {
    const NgramCounts hyp = ngrams(hypothesis, n);
    NgramCounts most;  // each n-gram's largest count in any one reference: the clip
    for (const auto& reference : references)
      for (const auto& [gram, count] : ngrams(reference, n))
        if (hyp.count(gram)) most[gram] = std::max(most[gram], count);
    std::size_t matched = 0, total = 0;
    for (const auto& [gram, count] : hyp) {
      total += count;
      const auto clip = most.find(gram);
      matched += clip == most.end() ? 0 : std::min(count, clip->second);
    }
    s.matches.push_back(matched);
    s.totals.push_back(options.nltk_counts ? std::max<std::size_t>(total, 1) : total);
  }
  s.hyp_length = hypothesis.size();
  // The closest reference length; on a tie the shorter one.
  s.ref_length = references.front().size();
  for (const auto& reference : references) {
    const auto distance = [&](std::size_t len) { return len > s.hyp_length ? len - s.hyp_length : s.hyp_length - len; };
    if (distance(reference.size()) < distance(s.ref_length) ||
        (distance(reference.size()) == distance(s.ref_length) && reference.size() < s.ref_length))
      s.ref_length = reference.size();
  }
  return s;
}

Bleu bleu_from_stats(const BleuStats& stats, const BleuOptions& options) {
  check_order("bleu_from_stats", options);
  if (stats.matches.size() != options.max_order || stats.totals.size() != options.max_order)
    throw ValueError("bleu_from_stats: expected statistics of orders 1.." + std::to_string(options.max_order) +
                     ", got 1.." + std::to_string(stats.matches.size()));
  Bleu b;
  b.hyp_length = stats.hyp_length;
  b.ref_length = stats.ref_length;
  const double c = double(stats.hyp_length), r = double(stats.ref_length);
  b.brevity_penalty = c > r ? 1.0 : c == 0 ? 0.0 : std::exp(1.0 - r / c);

  bool zero = stats.matches[0] == 0;  // no word right: 0 even when smoothed (as NLTK)
  double log_sum = 0.0;
  int k = 1;  // NistGeometric: the k-th zero precision becomes 1 / (2^k * count)
  for (std::size_t n = 0; n < options.max_order; ++n) {
    const double m = double(stats.matches[n]), t = double(stats.totals[n]);
    double p = t > 0 ? m / t : 0.0;
    if (m == 0 && t > 0 && options.smoothing == Smoothing::Epsilon) p = options.epsilon / t;
    if (m == 0 && t > 0 && options.smoothing == Smoothing::NistGeometric) p = 1.0 / (std::pow(2.0, k++) * t);
    b.precisions.push_back(p);
    if (p > 0) log_sum += std::log(p);
    else zero = true;
  }
  b.score = zero ? 0.0 : b.brevity_penalty * std::exp(log_sum / double(options.max_order));
  return b;
}

Bleu corpus_bleu(const std::vector<std::vector<data::Tokens>>& references, const std::vector<data::Tokens>& hypotheses,
                 const BleuOptions& options) {
  if (references.size() != hypotheses.size())
    throw ValueError("corpus_bleu: expected one list of references per hypothesis, got " +
                     std::to_string(references.size()) + " lists for " + std::to_string(hypotheses.size()) +
                     " hypotheses");
  check_order("corpus_bleu", options);
  BleuStats total;
  total.matches.assign(options.max_order, 0);
  total.totals.assign(options.max_order, 0);
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    if (references[i].empty())
      throw ValueError("corpus_bleu: hypothesis " + std::to_string(i) + " has no reference");
    total += bleu_stats(references[i], hypotheses[i], options);
  }
  return bleu_from_stats(total, options);
}

Bleu corpus_bleu(const std::vector<data::Tokens>& references, const std::vector<data::Tokens>& hypotheses,
                 const BleuOptions& options) {
  std::vector<std::vector<data::Tokens>> lists;
  for (const auto& reference : references) lists.push_back({reference});
  return corpus_bleu(lists, hypotheses, options);
}

double sentence_bleu(const std::vector<data::Tokens>& references, const data::Tokens& hypothesis, BleuOptions options) {
  options.nltk_counts = true;
  return corpus_bleu(std::vector<std::vector<data::Tokens>>{references}, {hypothesis}, options).score;
}

}  // namespace attn::models
