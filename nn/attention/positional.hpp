// Positional encodings: attention itself ignores order (permute the inputs and
// the outputs are permuted the same way), so the position of each token is
// added to its vector before the first attention layer.
//
//   nn::SinusoidalPositionalEncoding pos(/*d_model=*/16);
//   Tensor x = pos(embeddings);  // [B, T, 16] + PE[0..T-1]  -> [B, T, 16]
//
// Sinusoidal (Vaswani et al. 2017), fixed, nothing to learn:
//   PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
//   PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))
// Each pair of dims is a sine/cosine at one frequency, from 1 (dims 0, 1) down
// to 1/10000; PE(pos + k) is a linear function (a rotation) of PE(pos).
// Learned: one trainable vector per position 0..max_len-1 (an Embedding of positions).
#pragma once

#include "../embedding.hpp"
#include "../module.hpp"

namespace attn::nn {

class SinusoidalPositionalEncoding : public Module {
 public:
  explicit SinusoidalPositionalEncoding(std::size_t d_model, std::size_t max_len = 5000);

  // x [B, T, d_model] -> x + PE[offset : offset + T], [B, T, d_model]: positions from `offset` on
  // (a decoder that runs one new token at a time passes the token's position).
  Tensor forward(const Tensor& x, std::size_t offset = 0) const;
  Tensor operator()(const Tensor& x, std::size_t offset = 0) const { return forward(x, offset); }
  Tensor encoding(std::size_t T, std::size_t offset = 0) const;  // PE of positions offset..offset+T-1: [T, d_model]
  std::string extra_repr() const override;

  std::size_t d_model, max_len;
  Tensor pe;  // [max_len, d_model], a buffer (saved with the model, never trained)
};

class LearnedPositionalEncoding : public Module {
 public:
  // Starts from N(0, 1), as nn::Embedding.
  LearnedPositionalEncoding(std::size_t max_len, std::size_t d_model, Generator& gen = default_generator());

  Tensor forward(const Tensor& x, std::size_t offset = 0) const;  // x + P[offset : offset + T], [B, T, d_model]
  Tensor operator()(const Tensor& x, std::size_t offset = 0) const { return forward(x, offset); }
  Tensor encoding(std::size_t T, std::size_t offset = 0) const;  // positions offset..offset+T-1: [T, d_model]
  std::string extra_repr() const override;

  std::size_t max_len, d_model;
  Embedding embedding;  // weight [max_len, d_model]: row t is position t's vector
};

}  // namespace attn::nn
