// Training a language model (models/language_model.hpp: chapter 20's pointer sentinel, chapter 15's
// character Transformer) with the epoch loop of epoch_trainer.hpp: each epoch the training chunks in a
// new order, in batches of similar length; the model's loss; after each epoch the perplexity on the
// validation chunks, lower being better, so keep_best (with options.lower_is_better) keeps the best epoch.
// A step's loss as progress and the epoch's mean show it is the cross-entropy of the targets (nats per token,
// the log of the training perplexity), without the pointer sentinel's extra term, which training adds.
//
//   std::vector<Tokens> train = data::lm_chunks({split.train}, 64), valid = data::lm_chunks({split.valid}, 64);
//   EpochTrainerOptions o;
//   o.epochs = 3;
//   o.keep_best = o.lower_is_better = true;
//   EpochTrainer trainer(lm->module(), language_model_family(*lm, train, valid, vocab, 32), o);
//   trainer.train();
//   trainer.restore_best();
//   evaluate_language_model(*lm, test, vocab).perplexity();
#pragma once

#include "epoch_trainer.hpp"

#include "../data/language_model.hpp"
#include "../models/language_model.hpp"

#include <cmath>
#include <vector>

namespace attn::models {

// The model's score of a set of chunks: -log p summed over every target token, and how many there are.
struct LanguageModelScore {
  double nll = 0.0;
  std::size_t tokens = 0;
  double cross_entropy() const { return tokens ? nll / double(tokens) : std::nan(""); }  // nats per token
  double perplexity() const { return std::exp(cross_entropy()); }
  double bits_per_token() const { return cross_entropy() / std::log(2.0); }
};

// Every chunk scored, in batches of `batch_size` in order, in eval mode (the model's mode is restored).
// ValueError for no chunks.
LanguageModelScore evaluate_language_model(LanguageModel& model, const std::vector<data::Tokens>& chunks,
                                           const data::Vocab& vocab, std::size_t batch_size = 32);

// The batches, loss and validation (perplexity on `valid`) of a language model. The model, the chunks and the
// vocabulary must outlive the family.
EpochFamily language_model_family(LanguageModel& model, const std::vector<data::Tokens>& train,
                                  const std::vector<data::Tokens>& valid, const data::Vocab& vocab,
                                  std::size_t batch_size);

}  // namespace attn::models
