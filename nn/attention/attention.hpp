// Attention as a layer: scores -> masked softmax -> weighted sum of values.
//
//   e_tj = score(s_t, h_j)          scores  [B, Tq, Tk]
//   a_tj = softmax_j(e_tj)          weights [B, Tq, Tk], 0 on masked keys
//   c_t  = sum_j a_tj v_j           context [B, Tq, Dv]
//
//   nn::Attention attention(std::make_unique<nn::AdditiveScore>(Dq, Dk, 32));
//   auto [context, weights] = attention(s, h, h, nn::padding_mask(lengths, Tk));
//
// Masks follow the convention of masks.hpp (true = may not be attended).
// Every layer keeps the weights of its last call (detached), for heatmaps:
// attention.last_weights().
#pragma once

#include "masks.hpp"
#include "score.hpp"

#include "../../core/random.hpp"

#include <memory>
#include <optional>

namespace attn::nn {

// What an attention layer returns: the context vectors and the weights that made them.
struct AttentionOutput {
  Tensor context;  // [B, Tq, Dv]
  Tensor weights;  // [B, Tq, Tk]
};

// softmax(Q K^T / sqrt(D)) V, the core of the Transformer, for any leading dims:
// query [..., Tq, D], key [..., Tk, D], value [..., Tk, Dv] -> context [..., Tq, Dv]
// and weights [..., Tq, Tk]. `mask` broadcasts against the weights. With dropout_p > 0
// and training, dropout is applied to the weights, and the dropped weights are the
// ones returned (as PyTorch does).
AttentionOutput scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                             const std::optional<Mask>& mask = std::nullopt,
                                             double dropout_p = 0.0, bool training = false,
                                             Generator& gen = default_generator());

// The same with an additive bias on the scaled scores before the softmax (ALiBi's distance
// penalties, alibi.hpp): softmax(Q K^T / sqrt(D) + attn_bias) V, attn_bias broadcasting against the
// scores [..., Tq, Tk]. (PyTorch passes it as a float attn_mask to its scaled_dot_product_attention.)
AttentionOutput scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                             const Tensor& attn_bias, const std::optional<Mask>& mask = std::nullopt,
                                             double dropout_p = 0.0, bool training = false,
                                             Generator& gen = default_generator());

// Attention with any score function (score.hpp): the course's chapters 2 and 3.
class Attention : public Module {
 public:
  explicit Attention(std::unique_ptr<Score> score);

  // query [B, Tq, Dq], keys [B, Tk, Dk], values [B, Tk, Dv];
  // key_padding_mask [B, Tk], attn_mask [Tq, Tk] or [B, Tq, Tk] (masks.hpp).
  AttentionOutput forward(const Tensor& query, const Tensor& keys, const Tensor& values,
                          const std::optional<Mask>& key_padding_mask = std::nullopt,
                          const std::optional<Mask>& attn_mask = std::nullopt);
  AttentionOutput operator()(const Tensor& query, const Tensor& keys, const Tensor& values,
                             const std::optional<Mask>& key_padding_mask = std::nullopt,
                             const std::optional<Mask>& attn_mask = std::nullopt) {
    return forward(query, keys, values, key_padding_mask, attn_mask);
  }

  // The same with keys already passed through score().precompute_keys(keys):
  // for decoders that attend to the same encoder states at every step.
  AttentionOutput forward_precomputed(const Tensor& query, const Tensor& precomputed_keys, const Tensor& values,
                                      const std::optional<Mask>& key_padding_mask = std::nullopt,
                                      const std::optional<Mask>& attn_mask = std::nullopt);

  Score& score() { return *score_; }
  const Tensor& last_weights() const { return last_weights_; }  // [B, Tq, Tk], detached

 private:
  std::unique_ptr<Score> score_;
  Tensor last_weights_;
};

}  // namespace attn::nn
