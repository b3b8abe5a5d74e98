// A language model as the command line trains it: whatever its layers, it scores the next token of
// every step of a batch of chunks (data/language_model.hpp) and gives its whole distribution. Two
// models of the course are language models:
//   "pointer-sentinel"  chapter 20's LSTM with the pointer sentinel mixture (pointer_sentinel.hpp) over
//                       words; with pointer = false, the plain LSTM language model it is measured against;
//   "transformer-lm"    chapter 15's causal character model: chapter 8's Transformer whose source is one
//                       constant token, so its decoder alone reads the text (a causal mask), with any of
//                       the chapter's positions (sinusoidal, learned, rotary, ALiBi).
//
//   nlohmann::json config = default_language_model_config("pointer-sentinel");   // registry.hpp
//   std::unique_ptr<LanguageModel> lm = make_language_model(config, vocab.size());
//   Tensor loss = lm->loss(batch.inputs, batch.targets);           // [B, T] each; 0-dim
//   double nll = lm->nll_sum(batch.inputs, batch.targets, &count);  // sum of -log p(y_t) over non-<pad> targets
//   xt::xarray<double> logp = lm->next_log_probs(batch.inputs);     // [B, T, V]
//
// module() is the chapter's own module (a PointerSentinelLM, a TransformerSeq2Seq), so a checkpoint
// holds the names a notebook's model has (state_dict()).
#pragma once

#include "pointer_sentinel.hpp"
#include "transformer_seq2seq.hpp"

#include <memory>
#include <string>
#include <vector>

namespace attn::models {

class LanguageModel {
 public:
  virtual ~LanguageModel() = default;
  virtual nn::Module& module() = 0;
  // The loss training minimises for inputs [B, T] and their targets [B, T] (<pad> = 0 ignored): the mean of
  // -log p(y_t) over the targets, plus the pointer's own term for the pointer sentinel. 0-dim. With
  // `cross_entropy`, also that mean of -log p(y_t) alone (what a perplexity is made of), as a number.
  virtual Tensor loss(const Index& inputs, const Index& targets, double* cross_entropy = nullptr) = 0;
  // sum of -log p(y_t) over the targets that are not <pad>, without gradients, and how many there are:
  // perplexity = exp(sum / count) over a whole set.
  virtual double nll_sum(const Index& inputs, const Index& targets, std::size_t* count) = 0;
  // log p(w | x_1..x_t) for every step and every word: [B, T, V], without gradients.
  virtual xt::xarray<double> next_log_probs(const Index& inputs) = 0;
  // log p(w | text) of the word after one row of text [1, T]: [V], without gradients, for writing one
  // token at a time (decode/generate.hpp). `carry` is what the previous call of the same writing kept
  // (empty at the first): a model that can keeps there what lets it read only the tokens `text` adds to
  // that call's (the Transformer, its keys and values); the default reads the whole text again.
  virtual xt::xarray<double> last_log_probs(const Index& text, DecoderState& carry);
  // V: the tokens it reads and predicts.
  virtual std::size_t vocab_size() const = 0;
  // The most tokens one row may hold (a Transformer's positions table; 0: no limit).
  virtual std::size_t max_length() const { return 0; }
};

// Chapter 20's model (pointer = false: the plain LSTM language model).
class PointerSentinelLanguageModel : public LanguageModel {
 public:
  explicit PointerSentinelLanguageModel(const PointerSentinelConfig& config) : lm(config) {}
  nn::Module& module() override { return lm; }
  Tensor loss(const Index& inputs, const Index& targets, double* cross_entropy = nullptr) override;
  double nll_sum(const Index& inputs, const Index& targets, std::size_t* count) override;
  xt::xarray<double> next_log_probs(const Index& inputs) override;
  std::size_t vocab_size() const override { return lm.config.vocab; }

  PointerSentinelLM lm;
};

// Chapter 15's: a TransformerSeq2Seq whose source, for every row, is the one token kSourceToken of a
// source vocabulary of kSourceVocab (the four special tokens and it); config.src_vocab is set to that.
class TransformerLanguageModel : public LanguageModel {
 public:
  static constexpr std::int64_t kSourceToken = 4;
  static constexpr std::size_t kSourceVocab = 5;
  explicit TransformerLanguageModel(TransformerConfig config);
  nn::Module& module() override { return transformer; }
  Tensor loss(const Index& inputs, const Index& targets, double* cross_entropy = nullptr) override;
  double nll_sum(const Index& inputs, const Index& targets, std::size_t* count) override;
  xt::xarray<double> next_log_probs(const Index& inputs) override;
  // Through TransformerSeq2Seq::step: when `text` extends the previous call's by one token, only that
  // token runs through the decoder, against the cached keys and values (the same values to rounding).
  xt::xarray<double> last_log_probs(const Index& text, DecoderState& carry) override;
  std::size_t vocab_size() const override { return transformer.config.tgt_vocab; }
  std::size_t max_length() const override { return transformer.config.max_len; }

  TransformerSeq2Seq transformer;

 private:
  Tensor logits(const Index& inputs);  // [B, T, V]
  Index source(std::size_t B) const;   // [B, 1], every row kSourceToken
};

// The model names, their defaults and how to build one from a config.json are the registry's
// (registry.hpp: default_language_model_config, make_language_model).

}  // namespace attn::models
