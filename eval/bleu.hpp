// BLEU (Papineni et al. 2002): how many of a translation's n-grams appear in a
// reference, for n = 1..4, with a penalty for translations shorter than the reference.
//
//   // references first, then hypotheses, as in NLTK
//   Bleu b = corpus_bleu(std::vector<Tokens>{{"le", "chat", "dort", "ici"}}, {{"le", "chat", "dort", "ici"}});
//   b.score == 1.0
//   double s = sentence_bleu({{"le", "chat", "dort", "ici"}}, {"le", "chat", "dort"});  // smoothed: 0.60
//
// Corpus BLEU: for each order n, p_n = (n-grams of the hypotheses also in their
// references, each clipped to its count in the reference) / (n-grams of the
// hypotheses), summed over the whole corpus before dividing; then
//   BLEU = BP * exp(sum_n log(p_n) / N),  BP = 1 if c > r, else exp(1 - r / c),
// c the total hypothesis length, r the total length of the references closest
// in length to each hypothesis (the shorter one on a tie). BLEU is 0 when any
// p_n is 0 or the hypotheses are empty.
//
// NLTK (nltk.translate.bleu_score) counts one thing differently: its
// modified_precision divides by max(1, n-grams), so a hypothesis shorter than n
// adds one n-gram of order n that never matches. attn counts as NLTK does by
// default (nltk_counts = true), so that the BLEU it reports is the one a user
// recomputes with NLTK's corpus_bleu from the same words; nltk_counts = false
// gives Papineni et al.'s counts (and sacreBLEU's), which are never lower.
#pragma once

#include "../data/example.hpp"

#include <cstddef>
#include <vector>

namespace attn::models {

// Chen & Cherry (2014)'s smoothings, by their names in NLTK's SmoothingFunction.
enum class Smoothing {
  None,          // method0: a zero p_n makes BLEU 0
  Epsilon,       // method1: a zero p_n becomes epsilon / count
  NistGeometric  // method3 (mteval-v13a): the k-th zero p_n becomes 1 / (2^k * count)
};

struct BleuOptions {
  std::size_t max_order = 4;              // N: orders 1..N, each weighted 1/N
  Smoothing smoothing = Smoothing::None;
  double epsilon = 0.1;                   // Smoothing::Epsilon only
  bool nltk_counts = true;                // count max(1, n-grams) per sentence, as NLTK does
};

// The counts BLEU needs, which add up over sentences (so corpus BLEU, or BLEU
// over a subset such as one source length, is the BLEU of summed statistics).
struct BleuStats {
  std::vector<std::size_t> matches;  // [n - 1]: clipped matching n-grams
  std::vector<std::size_t> totals;   // [n - 1]: n-grams in the hypotheses
  std::size_t hyp_length = 0;        // c
  std::size_t ref_length = 0;        // r
  BleuStats& operator+=(const BleuStats& other);
};

// One hypothesis against its references (at least one).
BleuStats bleu_stats(const std::vector<data::Tokens>& references, const data::Tokens& hypothesis,
                     const BleuOptions& options = {});

struct Bleu {
  double score = 0.0;                 // in [0, 1]
  std::vector<double> precisions;     // p_n after smoothing, n = 1..N
  double brevity_penalty = 0.0;
  std::size_t hyp_length = 0, ref_length = 0;
};

Bleu bleu_from_stats(const BleuStats& stats, const BleuOptions& options = {});

// references[i] are the references of hypotheses[i] (ValueError if the sizes differ or a list is empty).
Bleu corpus_bleu(const std::vector<std::vector<data::Tokens>>& references, const std::vector<data::Tokens>& hypotheses,
                 const BleuOptions& options = {});
// One reference per hypothesis.
Bleu corpus_bleu(const std::vector<data::Tokens>& references, const std::vector<data::Tokens>& hypotheses,
                 const BleuOptions& options = {});

// NLTK's sentence_bleu(references, hypothesis, smoothing_function=method3): BLEU of
// one sentence, smoothed so that a sentence without a matching 4-gram still scores.
// Counts as NLTK does (nltk_counts), whatever `options` says.
double sentence_bleu(const std::vector<data::Tokens>& references, const data::Tokens& hypothesis,
                     BleuOptions options = {4, Smoothing::NistGeometric});

}  // namespace attn::models
