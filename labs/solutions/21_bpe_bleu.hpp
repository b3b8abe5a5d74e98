// Lab 21's worked solution (the library's own: data/bpe.cpp learns and applies merges, eval/bleu.cpp
// computes corpus BLEU).
#pragma once

#include "labs/grader/lab21_bpe_bleu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lab {
namespace solutions {
namespace bpe_bleu {

using lab::bpe_bleu::Counts;
using lab::bpe_bleu::Pair;
using lab::bpe_bleu::Symbols;
using lab::bpe_bleu::WordCounts;

// Every occurrence of `pair`, left to right, replaced by one symbol: a a a -> aa a (an occurrence that
// overlaps one just merged has lost its first symbol).
inline Symbols merge_pair(const Symbols& symbols, const Pair& pair) {
  Symbols out;
  for (std::size_t i = 0; i < symbols.size(); ++i) {
    if (i + 1 < symbols.size() && symbols[i] == pair.first && symbols[i + 1] == pair.second) {
      out.push_back(symbols[i] + symbols[i + 1]);
      ++i;  // the pair's second symbol is used up
    } else {
      out.push_back(symbols[i]);
    }
  }
  return out;
}

// A word as Algorithm 1 starts it: its characters (UTF-8: é is one), then the end-of-word mark.
inline Symbols initial_symbols(const std::string& word) {
  Symbols symbols = attn::data::split_chars(word);
  symbols.emplace_back(attn::data::Bpe::end_of_word);
  return symbols;
}

inline std::vector<Pair> learn_merges(const WordCounts& words, std::size_t n) {
  std::vector<std::pair<Symbols, std::int64_t>> vocab;
  for (const auto& [word, count] : words) vocab.push_back({initial_symbols(word), count});
  std::vector<Pair> merges;
  while (merges.size() < n) {
    // Every adjacent pair inside each word, counted as often as the word occurs.
    std::map<Pair, std::int64_t> pairs;
    for (const auto& [symbols, count] : vocab)
      for (std::size_t i = 0; i + 1 < symbols.size(); ++i) pairs[{symbols[i], symbols[i + 1]}] += count;
    if (pairs.empty()) break;  // every word is one symbol
    // The map iterates in string order and only a larger count replaces the best: ties keep the first.
    auto best = pairs.begin();
    for (auto it = pairs.begin(); it != pairs.end(); ++it)
      if (it->second > best->second) best = it;
    merges.push_back(best->first);
    for (auto& entry : vocab) entry.first = merge_pair(entry.first, best->first);
  }
  return merges;
}

inline Symbols apply_merges(const std::vector<Pair>& merges, const std::string& word) {
  Symbols symbols = initial_symbols(word);
  while (symbols.size() > 1) {
    // The earliest-learned merge among the word's adjacent pairs, wherever it is in the word.
    std::size_t best = merges.size();
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i)
      for (std::size_t k = 0; k < best; ++k)
        if (merges[k].first == symbols[i] && merges[k].second == symbols[i + 1]) {
          best = k;
          break;
        }
    if (best == merges.size()) break;
    symbols = merge_pair(symbols, merges[best]);
  }
  return symbols;
}

// Each n-gram of `words` with its count.
inline std::map<Symbols, std::size_t> ngrams(const Symbols& words, std::size_t n) {
  std::map<Symbols, std::size_t> counts;
  for (std::size_t i = 0; i + n <= words.size(); ++i) ++counts[Symbols(words.begin() + long(i), words.begin() + long(i + n))];
  return counts;
}

inline Counts sentence_counts(const std::vector<Symbols>& references, const Symbols& hypothesis) {
  Counts c;
  for (std::size_t n = 1; n <= 4; ++n) {
    // The clip: each n-gram's largest count in any one reference.
    std::map<Symbols, std::size_t> clip;
    for (const Symbols& reference : references)
      for (const auto& [gram, count] : ngrams(reference, n)) clip[gram] = std::max(clip[gram], count);
    for (const auto& [gram, count] : ngrams(hypothesis, n)) {
      c.totals[n - 1] += count;
      auto it = clip.find(gram);
      c.matches[n - 1] += it == clip.end() ? 0 : std::min(count, it->second);
    }
  }
  c.hyp_length = hypothesis.size();
  c.ref_length = references.front().size();
  for (const Symbols& reference : references) {
    auto distance = [&](std::size_t len) { return len > c.hyp_length ? len - c.hyp_length : c.hyp_length - len; };
    const std::size_t len = reference.size();
    if (distance(len) < distance(c.ref_length) || (distance(len) == distance(c.ref_length) && len < c.ref_length))
      c.ref_length = len;
  }
  return c;
}

inline double corpus_bleu(const std::vector<std::vector<Symbols>>& references, const std::vector<Symbols>& hypotheses) {
  // Summed over the corpus first, divided once: a corpus precision, not an average of sentence ones.
  Counts total;
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    Counts s = sentence_counts(references[i], hypotheses[i]);
    for (std::size_t n = 0; n < 4; ++n) total.matches[n] += s.matches[n], total.totals[n] += s.totals[n];
    total.hyp_length += s.hyp_length;
    total.ref_length += s.ref_length;
  }
  double log_sum = 0.0;
  for (std::size_t n = 0; n < 4; ++n) {
    if (total.matches[n] == 0) return 0.0;  // log 0: the geometric mean is 0
    log_sum += std::log(double(total.matches[n]) / double(total.totals[n]));
  }
  const double c = double(total.hyp_length), r = double(total.ref_length);
  const double bp = c > r ? 1.0 : std::exp(1.0 - r / c);  // only a corpus shorter than its references pays
  return bp * std::exp(log_sum / 4.0);
}

inline lab::bpe_bleu::BpeBleu solution() { return {learn_merges, apply_merges, sentence_counts, corpus_bleu}; }

}  // namespace bpe_bleu
}  // namespace solutions
}  // namespace lab
