#include "word_scores.hpp"

#include "../core/errors.hpp"

namespace attn::cli {

namespace {
models::BleuOptions nltk_options() {
  models::BleuOptions options;  // 4-grams, weights 1/4, no smoothing: corpus_bleu's defaults
  options.nltk_counts = true;
  return options;
}
}  // namespace

double WordCounts::bleu_percent() const {
  if (bleu.matches.empty()) return 0.0;
  return 100 * models::bleu_from_stats(bleu, nltk_options()).score;
}

data::Tokens words_of(const data::Tokens& tokens, const data::Bpe* bpe) {
  return bpe ? data::Bpe::decode(tokens) : tokens;
}

WordScores word_scores(const models::Evaluation& evaluation, const std::vector<data::Example>& examples,
                       const data::Bpe* bpe) {
  if (evaluation.predictions.size() != examples.size())
    throw ValueError("word_scores: " + std::to_string(evaluation.predictions.size()) + " predictions for " +
                     std::to_string(examples.size()) + " examples (evaluate with keep_predictions)");
  WordScores s;
  for (const models::Prediction& p : evaluation.predictions) {
    const data::Example& example = examples.at(p.index);
    const data::Tokens hypothesis = words_of(p.hypothesis, bpe), reference = words_of(example.tgt, bpe);
    WordCounts one;
    one.sentences = 1;
    one.exact = hypothesis == reference ? 1 : 0;
    one.bleu = models::bleu_stats({reference}, hypothesis, nltk_options());
    for (WordCounts* c : {&s.overall, &s.by_length[words_of(example.src, bpe).size()]}) {
      c->sentences += one.sentences;
      c->exact += one.exact;
      c->bleu += one.bleu;
    }
  }
  return s;
}

}  // namespace attn::cli
