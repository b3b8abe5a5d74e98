// What `train` and `eval` report about a held-out set, on words: exact match and
// corpus BLEU of the greedy outputs, overall and by source length (in words).
// The outputs of a run trained with --bpe are joined back into words first.
//
// BLEU is exactly NLTK's corpus_bleu (default weights, no smoothing) over the same
// words: each hypothesis shorter than n counts one n-gram of order n that never
// matches (NLTK's max(1, n-grams) in modified_precision; eval/bleu.hpp's
// nltk_counts), so `eval --predictions FILE` lets anyone recompute the printed number.
#pragma once

#include "../data/bpe.hpp"
#include "../eval/bleu.hpp"
#include "../eval/evaluate.hpp"

#include <map>
#include <vector>

namespace attn::cli {

struct WordCounts {
  std::size_t sentences = 0, exact = 0;  // sentences, and those whose words are the reference's
  models::BleuStats bleu;
  double exact_match() const { return sentences ? double(exact) / double(sentences) : 0.0; }
  double bleu_percent() const;  // 100 * NLTK's corpus BLEU of these sentences
};

struct WordScores {
  WordCounts overall;
  std::map<std::size_t, WordCounts> by_length;  // by the source's length in words
};

// The words of a sentence of the run's tokens (subwords joined when `bpe`).
data::Tokens words_of(const data::Tokens& tokens, const data::Bpe* bpe);

// From an evaluation made with keep_predictions over `examples` (ValueError otherwise).
WordScores word_scores(const models::Evaluation& evaluation, const std::vector<data::Example>& examples,
                       const data::Bpe* bpe);

}  // namespace attn::cli
