#include "document_training.hpp"

#include "../core/ops.hpp"
#include "../nn/loss.hpp"

#include <numeric>

namespace attn::models {

namespace {
constexpr std::size_t kEvalBatch = 64;
}

ConfusionMatrix classify_documents(DocumentClassifier& model, const std::vector<data::Document>& docs,
                                   const data::Vocab& vocab, std::size_t classes, std::vector<std::int64_t>* predicted) {
  no_grad guard;
  const bool was_training = model.is_training();
  model.eval();
  ConfusionMatrix m(classes);
  if (predicted) predicted->assign(docs.size(), 0);
  for (std::size_t begin = 0; begin < docs.size(); begin += kEvalBatch) {
    std::vector<std::size_t> indices(std::min(kEvalBatch, docs.size() - begin));
    std::iota(indices.begin(), indices.end(), begin);
    const data::DocumentBatch batch = data::make_document_batch(docs, indices, vocab);
    const Index guess = argmax(model.forward(batch), 1);  // [B]
    m.add(batch.labels, guess);
    if (predicted)
      for (std::size_t i = 0; i < indices.size(); ++i) (*predicted)[indices[i]] = guess(i);
  }
  model.train(was_training);
  return m;
}

EpochFamily document_family(DocumentClassifier& model, const std::vector<data::Document>& train,
                            const std::vector<data::Document>& valid, const data::Vocab& vocab, std::size_t classes,
                            std::size_t batch_size) {
  if (train.empty()) throw ValueError("document_family: expected training documents, got none");
  if (batch_size == 0) throw ValueError("document_family: batch_size must be at least 1");
  auto epoch = std::make_shared<std::vector<data::DocumentBatch>>();
  EpochFamily f;
  f.draw_epoch = [&train, &vocab, batch_size, epoch](Generator& order) {
    data::BatchOptions batching;
    batching.batch_size = batch_size;
    batching.sort_buckets = 4;  // documents of similar padded size together: less padding
    *epoch = data::make_document_batches(train, vocab, batching, order);
    return epoch->size();
  };
  f.step = [&model, epoch](std::size_t i) {
    const data::DocumentBatch& batch = epoch->at(i);
    const Tensor logits = model.forward(batch);  // [B, C]
    EpochStep s;
    s.loss = nn::cross_entropy(logits, batch.labels);
    const Index guess = argmax(logits.detach(), 1);
    for (std::size_t b = 0; b < batch.size(); ++b) s.correct += guess(b) == batch.labels(b);
    s.counted = double(batch.size());
    return s;
  };
  f.validate = [&model, &valid, &vocab, classes] { return classify_documents(model, valid, vocab, classes).accuracy(); };
  return f;
}

}  // namespace attn::models
