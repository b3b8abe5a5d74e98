// nn::Embedding: a lookup table of vectors, one row per id, as torch.nn.Embedding.
//
//   attn::nn::Embedding emb(10, 4, /*padding_idx=*/0);  // weight [10, 4]
//   Tensor e = emb(ids);                                 // ids [B, T] -> [B, T, 4]
//
// Initialized from a standard normal. With a padding_idx, that row starts at
// zero and never receives a gradient, so it stays zero while training: padded
// positions then contribute nothing.
#pragma once

#include "module.hpp"

#include "../core/random.hpp"

#include <optional>

namespace attn::nn {

class Embedding : public Module {
 public:
  // padding_idx may be negative (counted from the end), as in PyTorch.
  Embedding(std::size_t num_embeddings, std::size_t embedding_dim, std::optional<long> padding_idx = std::nullopt,
            Generator& gen = default_generator());

  Tensor forward(const Index& ids) const;  // ids of shape S -> [S..., embedding_dim]
  Tensor operator()(const Index& ids) const { return forward(ids); }
  std::string extra_repr() const override;

  void reset_parameters(Generator& gen = default_generator());

  std::size_t num_embeddings, embedding_dim;
  std::optional<std::size_t> padding_idx;  // normalized to 0..num_embeddings-1
  Tensor weight;                           // [num_embeddings, embedding_dim]
};

}  // namespace attn::nn
