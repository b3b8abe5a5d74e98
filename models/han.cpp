#include "han.hpp"

#include "../core/ops.hpp"
#include "../nn/attention/masks.hpp"
#include "checks.hpp"

#include <xtensor/xview.hpp>

namespace attn::models {

namespace {

HANConfig checked(const HANConfig& c) {
  if (c.vocab < 1 || c.classes < 2 || c.embed_dim < 1 || c.hidden_dim < 1 || c.attention_dim < 1)
    throw ValueError("HierarchicalAttentionNetwork: vocab, embed_dim, hidden_dim and attention_dim must be "
                     "positive and classes at least 2, got vocab " + std::to_string(c.vocab) + ", classes " +
                     std::to_string(c.classes) + ", embed_dim " + std::to_string(c.embed_dim) + ", hidden_dim " +
                     std::to_string(c.hidden_dim) + ", attention_dim " + std::to_string(c.attention_dim));
  return c;
}

}  // namespace

HierarchicalAttentionNetwork::HierarchicalAttentionNetwork(const HANConfig& cfg)
    : DocumentClassifier("HierarchicalAttentionNetwork"),
      config(checked(cfg)),
      embedding(config.vocab, config.embed_dim, /*padding_idx=*/0),
      word_encoder(config.embed_dim, config.hidden_dim, nn::batch_first(/*bidirectional=*/true)),
      word_attention(2 * config.hidden_dim, config.attention_dim),
      sentence_encoder(2 * config.hidden_dim, config.hidden_dim, nn::batch_first(/*bidirectional=*/true)),
      sentence_attention(2 * config.hidden_dim, config.attention_dim),
      classifier(2 * config.hidden_dim, config.classes) {
  register_module("embedding", embedding);
  register_module("word_encoder", word_encoder);
  register_module("word_attention", word_attention);
  register_module("sentence_encoder", sentence_encoder);
  register_module("sentence_attention", sentence_attention);
  register_module("classifier", classifier);
}

Tensor HierarchicalAttentionNetwork::sentence_vectors(const Index& words, const std::vector<std::size_t>& sentence_counts,
                                                      const std::vector<std::size_t>& word_counts) {
  check_documents("HierarchicalAttentionNetwork", words, sentence_counts, word_counts);
  const std::size_t B = words.shape()[0], S = words.shape()[1], W = words.shape()[2];

  // The N sentences that exist, as rows of their own; row[b * S + s] is where sentence s of
  // document b went, or N (a row of zeros) for a padded sentence.
  std::vector<std::size_t> real;
  Index row = xt::zeros<std::int64_t>({B * S});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < S; ++s) {
      row(b * S + s) = s < sentence_counts[b] ? static_cast<std::int64_t>(real.size()) : -1;
      if (s < sentence_counts[b]) real.push_back(b * S + s);
    }
  const std::size_t N = real.size();
  for (auto& r : row)
    if (r < 0) r = static_cast<std::int64_t>(N);
  Index sentences = xt::zeros<std::int64_t>({N, W});  // [N, W]
  Index lengths = xt::zeros<std::int64_t>({N});
  for (std::size_t n = 0; n < N; ++n) {  // each sentence's words, <pad> after them whatever the batch held there
    lengths(n) = static_cast<std::int64_t>(word_counts[real[n]]);
    for (std::size_t w = 0; w < word_counts[real[n]]; ++w) sentences(n, w) = words(real[n] / S, real[n] % S, w);
  }

  // Words -> one vector per sentence.
  Tensor h_words = word_encoder(embedding(sentences), Tensor(), nn::Lengths(lengths)).output;  // [N, W, 2H]
  auto [s, a_words] = word_attention(h_words, nn::padding_mask(lengths, W));                   // [N, 2H], [N, W]

  // Back to documents: [N + 1, 2H] (a zero row for padding) -> [B * S, 2H] -> [B, S, 2H].
  const long D = static_cast<long>(2 * config.hidden_dim);
  Tensor padded = concat({s, zeros({1, std::size_t(D)}, s.dtype())}, 0);                     // [N + 1, 2H]
  Tensor a_padded = concat({a_words.detach(), zeros({1, W}, a_words.dtype())}, 0);            // [N + 1, W]
  last_attention_ = {{"words", reshape(index_select(a_padded, 0, row), {long(B), long(S), long(W)})}};  // [B, S, W]
  return reshape(index_select(padded, 0, row), {long(B), long(S), D});                         // [B, S, 2H]
}

Tensor HierarchicalAttentionNetwork::forward(const Index& words, const std::vector<std::size_t>& sentence_counts,
                                             const std::vector<std::size_t>& word_counts) {
  Tensor per_document = sentence_vectors(words, sentence_counts, word_counts);  // [B, S, 2H]
  const std::size_t B = words.shape()[0], S = words.shape()[1];

  // Sentences -> one vector per document.
  const Index counts = lengths_index(sentence_counts);
  Tensor h_sentences = sentence_encoder(per_document, Tensor(), nn::Lengths(counts)).output;  // [B, S, 2H]
  auto [v, a_sentences] = sentence_attention(h_sentences, nn::padding_mask(counts, S));       // [B, 2H], [B, S]

  last_attention_["sentences"] = a_sentences.detach();
  return classifier(v);  // [B, C]
}

}  // namespace attn::models
