// A hierarchical attention network (Yang, Yang, Dyer, He, Smola & Hovy 2016): a document is
// read as sentences of words, and attention picks the words that matter in each sentence,
// then the sentences that matter in the document.
//
//   word encoder       h_it = BiGRU(embed(w_it))                 [N, W, 2H]   every real sentence i
//   word attention     s_i  = sum_t a_it h_it                     [N, 2H]      a_it = softmax_t(u_w . tanh(W_w h_it + b_w))
//   sentence encoder   h_i  = BiGRU(s_1 .. s_L)                   [B, S, 2H]
//   sentence attention v    = sum_i a_i h_i                       [B, 2H]      a_i = softmax_i(u_s . tanh(W_s h_i + b_s))
//   classifier         logits = W_c v + b_c                       [B, C]       p = softmax(logits)
//
// Both attentions are nn::ContextAttention (nn/attention/context.hpp): the query is a learned
// vector, u_w for words and u_s for sentences. Only the N sentences that exist are encoded: the
// padded ones of short documents cost nothing and are never attended.
//
//   HANConfig cfg;
//   cfg.vocab = vocab.size();
//   cfg.classes = corpus.classes.size();
//   HierarchicalAttentionNetwork model(cfg);
//   Tensor logits = model.forward(batch);              // [B, C]
//   model.last_attention().at("words");                // a_it [B, S, W], 0 on padding
//   model.last_attention().at("sentences");            // a_i  [B, S]
#pragma once

#include "document_classifier.hpp"

#include "../nn/attention/context.hpp"
#include "../nn/embedding.hpp"
#include "../nn/linear.hpp"
#include "../nn/rnn.hpp"

namespace attn::models {

struct HANConfig {
  std::size_t vocab = 0;           // word ids, <pad> = 0 included
  std::size_t classes = 0;         // C
  std::size_t embed_dim = 64;      // the paper: 200 (word2vec)
  std::size_t hidden_dim = 32;     // H, per direction (the paper: 50)
  std::size_t attention_dim = 64;  // A, of both attentions (the paper: 100)
};

class HierarchicalAttentionNetwork : public DocumentClassifier {
 public:
  // Weights drawn from default_generator(), as every layer.
  explicit HierarchicalAttentionNetwork(const HANConfig& config);

  using DocumentClassifier::forward;
  Tensor forward(const Index& words, const std::vector<std::size_t>& sentence_counts,
                 const std::vector<std::size_t>& word_counts) override;

  // The word level alone: s_i for every sentence, [B, S, 2H], zeros for the missing ones; keeps
  // last_attention().at("words"). forward() is this, then the sentence level and the classifier.
  Tensor sentence_vectors(const Index& words, const std::vector<std::size_t>& sentence_counts,
                          const std::vector<std::size_t>& word_counts);

  HANConfig config;
  nn::Embedding embedding;               // [V, E], row 0 (<pad>) zero
  nn::GRU word_encoder;                  // E -> 2H, bidirectional
  nn::ContextAttention word_attention;   // W_w, b_w, u_w
  nn::GRU sentence_encoder;              // 2H -> 2H, bidirectional
  nn::ContextAttention sentence_attention;  // W_s, b_s, u_s
  nn::Linear classifier;                 // W_c [C, 2H], b_c
};

}  // namespace attn::models
