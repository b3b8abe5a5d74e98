// What the document classifiers of chapter 18 share: a padded batch of documents in, one
// row of class scores per document out, and the attention weights of the last call.
//
//   words           [B, S, W]  word ids (<pad> = 0): document b, sentence s, word w
//   sentence_counts [B]        the sentences of each document (each 1..S)
//   word_counts     [B * S]    the words of each sentence (row b * S + s; 0 for a padded one)
//   -> logits       [B, C]     log-probabilities up to a constant, for cross_entropy
//
// data::DocumentBatch (data/documents.hpp) holds exactly these; forward(batch) unpacks it.
#pragma once

#include "../data/documents.hpp"
#include "../nn/module.hpp"

#include <map>
#include <string>
#include <vector>

namespace attn::models {

class DocumentClassifier : public nn::Module {
 public:
  using nn::Module::Module;

  virtual Tensor forward(const Index& words, const std::vector<std::size_t>& sentence_counts,
                         const std::vector<std::size_t>& word_counts) = 0;
  Tensor forward(const data::DocumentBatch& batch) {
    return forward(batch.words, batch.sentence_counts, batch.word_counts);
  }

  // The weights of the last forward(), detached, by name (empty for a model without attention):
  // the hierarchical network's "words" [B, S, W] and "sentences" [B, S]; the flat model's
  // "words" [B, T], over the words of flatten_documents().
  const std::map<std::string, Tensor>& last_attention() const { return last_attention_; }

 protected:
  std::map<std::string, Tensor> last_attention_;
};

// ValueError or ShapeError naming `op` unless words is [B, S, W] with B, S, W >= 1, each
// sentence count in 1..S, B * S word counts, each in 1..W for a sentence that exists and 0 after.
void check_documents(const char* op, const Index& words, const std::vector<std::size_t>& sentence_counts,
                     const std::vector<std::size_t>& word_counts);

}  // namespace attn::models
