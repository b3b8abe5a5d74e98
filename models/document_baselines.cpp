#include "document_baselines.hpp"

#include "../core/ops.hpp"
#include "../nn/attention/masks.hpp"
#include "checks.hpp"

namespace attn::models {

namespace {

void check_sizes(const char* op, std::size_t vocab, std::size_t classes, std::size_t embed_dim, std::size_t hidden_dim,
                 std::size_t attention_dim) {
  if (vocab < 1 || classes < 2 || embed_dim < 1 || hidden_dim < 1 || attention_dim < 1)
    throw ValueError(std::string(op) + ": vocab and the sizes must be positive and classes at least 2, got vocab " +
                     std::to_string(vocab) + ", classes " + std::to_string(classes) + ", embed_dim " +
                     std::to_string(embed_dim) + ", hidden_dim " + std::to_string(hidden_dim) + ", attention_dim " +
                     std::to_string(attention_dim));
}

void check_bag_of_words(const BagOfWordsConfig& c) {
  if (c.vocab < 1 || c.classes < 2 || c.embed_dim < 1)
    throw ValueError("BagOfWordsClassifier: vocab and embed_dim must be positive and classes at least 2, got vocab " +
                     std::to_string(c.vocab) + ", classes " + std::to_string(c.classes) + ", embed_dim " +
                     std::to_string(c.embed_dim));
}

}  // namespace

Index flatten_documents(const Index& words, const std::vector<std::size_t>& sentence_counts,
                        const std::vector<std::size_t>& word_counts, std::vector<std::size_t>& lengths,
                        const char* op) {
  check_documents(op, words, sentence_counts, word_counts);
  const std::size_t B = words.shape()[0], S = words.shape()[1];
  lengths.assign(B, 0);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < sentence_counts[b]; ++s) lengths[b] += word_counts[b * S + s];
  std::size_t T = 0;
  for (std::size_t n : lengths) T = std::max(T, n);
  Index flat = xt::zeros<std::int64_t>({B, T});  // [B, T], <pad> = 0 after each document
  for (std::size_t b = 0; b < B; ++b) {
    std::size_t t = 0;
    for (std::size_t s = 0; s < sentence_counts[b]; ++s)
      for (std::size_t w = 0; w < word_counts[b * S + s]; ++w) flat(b, t++) = words(b, s, w);
  }
  return flat;
}

FlatAttentionClassifier::FlatAttentionClassifier(const FlatAttentionConfig& cfg)
    : DocumentClassifier("FlatAttentionClassifier"),
      config((check_sizes("FlatAttentionClassifier", cfg.vocab, cfg.classes, cfg.embed_dim, cfg.hidden_dim,
                          cfg.attention_dim),
              cfg)),
      embedding(config.vocab, config.embed_dim, /*padding_idx=*/0),
      encoder(config.embed_dim, config.hidden_dim, nn::batch_first(/*bidirectional=*/true)),
      attention(2 * config.hidden_dim, config.attention_dim),
      classifier(2 * config.hidden_dim, config.classes) {
  register_module("embedding", embedding);
  register_module("encoder", encoder);
  register_module("attention", attention);
  register_module("classifier", classifier);
}

Tensor FlatAttentionClassifier::forward(const Index& words, const std::vector<std::size_t>& sentence_counts,
                                        const std::vector<std::size_t>& word_counts) {
  std::vector<std::size_t> lengths;
  const Index flat = flatten_documents(words, sentence_counts, word_counts, lengths, "FlatAttentionClassifier");  // [B, T]
  const Index n = lengths_index(lengths);
  Tensor h = encoder(embedding(flat), Tensor(), nn::Lengths(n)).output;               // [B, T, 2H]
  auto [v, a] = attention(h, nn::padding_mask(n, flat.shape()[1]));                   // [B, 2H], [B, T]
  last_attention_ = {{"words", a.detach()}};
  return classifier(v);  // [B, C]
}

BagOfWordsClassifier::BagOfWordsClassifier(const BagOfWordsConfig& cfg)
    : DocumentClassifier("BagOfWordsClassifier"),
      config((check_bag_of_words(cfg), cfg)),
      embedding(config.vocab, config.embed_dim, /*padding_idx=*/0),
      classifier(config.embed_dim, config.classes) {
  register_module("embedding", embedding);
  register_module("classifier", classifier);
}

Tensor BagOfWordsClassifier::forward(const Index& words, const std::vector<std::size_t>& sentence_counts,
                                     const std::vector<std::size_t>& word_counts) {
  std::vector<std::size_t> lengths;
  const Index flat = flatten_documents(words, sentence_counts, word_counts, lengths, "BagOfWordsClassifier");  // [B, T]
  const std::size_t B = lengths.size(), T = flat.shape()[1];
  // Each word's share of its document's mean: 1 / T_b on its words, 0 on the padding.
  xt::xarray<double> share = xt::zeros<double>({B, std::size_t(1), T});  // [B, 1, T]
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < lengths[b]; ++t) share(b, 0, t) = 1.0 / static_cast<double>(lengths[b]);
  Tensor mean_pool = Tensor(share).to(embedding.weight.dtype());
  Tensor v = reshape(matmul(mean_pool, embedding(flat)), {long(B), -1});  // [B, 1, T] x [B, T, E] -> [B, E]
  last_attention_.clear();
  return classifier(v);  // [B, C]
}

}  // namespace attn::models
