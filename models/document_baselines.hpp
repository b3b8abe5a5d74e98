// The two baselines chapter 18 measures the hierarchical attention network against, at the
// same sizes, on the same batches (document_classifier.hpp):
//
//   FlatAttentionClassifier  the document's words as one sequence, sentence ends ignored:
//                            h_t = BiGRU(embed(w_t)) [B, T, 2H], v = sum_t a_t h_t with
//                            a_t = softmax_t(u . tanh(W h_t + b)), logits = W_c v + b_c.
//                            The HAN without its sentence level.
//   BagOfWordsClassifier     the mean of the words' embeddings, then a linear layer:
//                            v_b = (1/T_b) sum_{t < T_b} embed(w_t) [B, E], T_b the words of page b,
//                            logits = W_c v + b_c. Word order and attention both gone
//                            (fastText's classifier without its n-grams).
#pragma once

#include "document_classifier.hpp"

#include "../nn/attention/context.hpp"
#include "../nn/embedding.hpp"
#include "../nn/linear.hpp"
#include "../nn/rnn.hpp"

namespace attn::models {

// The words of each document one after another: words [B, S, W] -> [B, T] with T the longest
// document, <pad> after its end; lengths gets each document's number of words. `op` names the
// caller in error messages.
Index flatten_documents(const Index& words, const std::vector<std::size_t>& sentence_counts,
                        const std::vector<std::size_t>& word_counts, std::vector<std::size_t>& lengths,
                        const char* op = "flatten_documents");

struct FlatAttentionConfig {
  std::size_t vocab = 0, classes = 0;
  std::size_t embed_dim = 64, hidden_dim = 32, attention_dim = 64;  // as HANConfig's
};

class FlatAttentionClassifier : public DocumentClassifier {
 public:
  explicit FlatAttentionClassifier(const FlatAttentionConfig& config);

  using DocumentClassifier::forward;
  // last_attention().at("words"): a_t [B, T] over the flattened words (flatten_documents).
  Tensor forward(const Index& words, const std::vector<std::size_t>& sentence_counts,
                 const std::vector<std::size_t>& word_counts) override;

  FlatAttentionConfig config;
  nn::Embedding embedding;
  nn::GRU encoder;                // E -> 2H, bidirectional
  nn::ContextAttention attention;
  nn::Linear classifier;          // [C, 2H]
};

struct BagOfWordsConfig {
  std::size_t vocab = 0, classes = 0;
  std::size_t embed_dim = 64;
};

class BagOfWordsClassifier : public DocumentClassifier {
 public:
  explicit BagOfWordsClassifier(const BagOfWordsConfig& config);

  using DocumentClassifier::forward;
  Tensor forward(const Index& words, const std::vector<std::size_t>& sentence_counts,
                 const std::vector<std::size_t>& word_counts) override;

  BagOfWordsConfig config;
  nn::Embedding embedding;  // row 0 (<pad>) zero
  nn::Linear classifier;    // [C, E]
};

}  // namespace attn::models
