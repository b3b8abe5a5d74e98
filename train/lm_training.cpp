#include "lm_training.hpp"

#include <memory>
#include <numeric>

namespace attn::models {

LanguageModelScore evaluate_language_model(LanguageModel& model, const std::vector<data::Tokens>& chunks,
                                           const data::Vocab& vocab, std::size_t batch_size) {
  if (chunks.empty()) throw ValueError("evaluate_language_model: expected chunks to score, got none");
  if (batch_size == 0) throw ValueError("evaluate_language_model: batch_size must be at least 1");
  nn::Module& m = model.module();
  const bool was_training = m.is_training();
  m.eval();
  LanguageModelScore score;
  for (std::size_t begin = 0; begin < chunks.size(); begin += batch_size) {
    std::vector<std::size_t> indices(std::min(batch_size, chunks.size() - begin));
    std::iota(indices.begin(), indices.end(), begin);
    const data::LMBatch batch = data::make_lm_batch(chunks, indices, vocab);
    std::size_t n = 0;
    score.nll += model.nll_sum(batch.inputs, batch.targets, &n);
    score.tokens += n;
  }
  m.train(was_training);
  return score;
}

EpochFamily language_model_family(LanguageModel& model, const std::vector<data::Tokens>& train,
                                  const std::vector<data::Tokens>& valid, const data::Vocab& vocab,
                                  std::size_t batch_size) {
  if (train.empty()) throw ValueError("language_model_family: expected training chunks, got none");
  if (batch_size == 0) throw ValueError("language_model_family: batch_size must be at least 1");
  auto epoch = std::make_shared<std::vector<data::LMBatch>>();
  EpochFamily f;
  f.draw_epoch = [&train, &vocab, batch_size, epoch](Generator& order) {
    data::BatchOptions batching;
    batching.batch_size = batch_size;
    *epoch = data::make_lm_batches(train, vocab, batching, order);
    return epoch->size();
  };
  f.step = [&model, epoch](std::size_t i) {
    const data::LMBatch& batch = epoch->at(i);
    EpochStep s;
    s.loss = model.loss(batch.inputs, batch.targets, &s.shown);  // progress shows -log p alone, a perplexity's log
    return s;
  };
  if (!valid.empty())
    f.validate = [&model, &valid, &vocab, batch_size] {
      return evaluate_language_model(model, valid, vocab, batch_size).perplexity();
    };
  return f;
}

}  // namespace attn::models
