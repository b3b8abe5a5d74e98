// The Transformer's encoder (Vaswani et al., 2017), as torch.nn.TransformerEncoderLayer
// and torch.nn.TransformerEncoder with batch_first=True: same parameters, names and
// results (tests compare against PyTorch 1.13 within 1e-10).
//
// One encoder layer, post-norm (the paper, the default):
//   x = norm1(x + dropout1(self_attn(x, x, x)))          every position attends to every position
//   x = norm2(x + dropout2(linear2(dropout(relu(linear1(x))))))   the same small MLP at every position
// Pre-norm (norm_first = true) normalizes the input of each block instead, and
// leaves the residual path x -> x + ... untouched from the first layer to the last:
//   x = x + dropout1(self_attn(norm1(x)))
//   x = x + dropout2(ff(norm2(x)))
// Pre-norm trains more easily when deep (no warm-up needed); post-norm is the paper.
//
//   nn::TransformerEncoderLayer layer(/*d_model=*/512, /*nhead=*/8);
//   Tensor y = layer(x, std::nullopt, nn::padding_mask(lengths, T));  // x [B, T, 512] -> [B, T, 512]
//   layer.self_attention_weights();                                    // [B, 8, T, T], per head
//
//   nn::TransformerEncoder encoder(layer, /*num_layers=*/6, /*norm=*/true);
//   Tensor memory = encoder(x, std::nullopt, padding);  // layers.0 ... layers.5, then norm
//
// Masks follow nn/attention/masks.hpp: true = may NOT be attended. src_mask is
// [T, T] (or [B * H, T, T]); src_key_padding_mask [B, T] is true at padding.
// A padded position is still computed as a query (its output is not used).
#pragma once

#include "activation.hpp"
#include "attention/multihead.hpp"
#include "dropout.hpp"
#include "layer_norm.hpp"
#include "linear.hpp"
#include "module_list.hpp"
#include "transformer_stack.hpp"

#include <memory>
#include <optional>

namespace attn::nn {

class TransformerEncoderLayer : public Module {
 public:
  // PyTorch's argument order (batch_first is always true in attn).
  TransformerEncoderLayer(std::size_t d_model, std::size_t nhead, std::size_t dim_feedforward = 2048,
                          double dropout = 0.1, Activation activation = Activation::ReLU,
                          double layer_norm_eps = 1e-5, bool norm_first = false,
                          Generator& gen = default_generator());
  // Grouped-query attention (multihead.hpp) in its self-attention: grouped.num_kv_heads
  // key-value heads, 1 for multi-query attention.
  TransformerEncoderLayer(std::size_t d_model, std::size_t nhead, GroupedQuery grouped,
                          std::size_t dim_feedforward = 2048, double dropout = 0.1,
                          Activation activation = Activation::ReLU, double layer_norm_eps = 1e-5,
                          bool norm_first = false, Generator& gen = default_generator());

  // src [B, T, d_model] -> [B, T, d_model].
  Tensor forward(const Tensor& src, const std::optional<Mask>& src_mask = std::nullopt,
                 const std::optional<Mask>& src_key_padding_mask = std::nullopt);
  Tensor operator()(const Tensor& src, const std::optional<Mask>& src_mask = std::nullopt,
                    const std::optional<Mask>& src_key_padding_mask = std::nullopt) {
    return forward(src, src_mask, src_key_padding_mask);
  }

  // The self-attention weights of the last forward, per head: [B, H, T, T], detached.
  const Tensor& self_attention_weights() const { return self_attn.last_weights(); }
  std::string extra_repr() const override;

  std::size_t d_model, nhead, dim_feedforward;
  double dropout_p, layer_norm_eps;
  Activation activation;
  bool norm_first;

  MultiheadAttention self_attn;
  Linear linear1;     // d_model -> dim_feedforward
  Dropout dropout;    // inside the feed-forward block
  Linear linear2;     // dim_feedforward -> d_model
  LayerNorm norm1, norm2;
  Dropout dropout1, dropout2;

 private:
  Tensor self_attention_block(const Tensor& x, const std::optional<Mask>& mask,
                              const std::optional<Mask>& key_padding_mask);
  Tensor feed_forward_block(const Tensor& x);
};

// A stack of num_layers encoder layers and an optional final LayerNorm
// (transformer_stack.hpp).
class TransformerEncoder : public TransformerStack<TransformerEncoderLayer> {
 public:
  TransformerEncoder(const TransformerEncoderLayer& encoder_layer, std::size_t num_layers, bool norm = false,
                     Generator& gen = default_generator());

  // src [B, T, d_model] -> [B, T, d_model]; the masks go to every layer.
  Tensor forward(const Tensor& src, const std::optional<Mask>& mask = std::nullopt,
                 const std::optional<Mask>& src_key_padding_mask = std::nullopt);
  Tensor operator()(const Tensor& src, const std::optional<Mask>& mask = std::nullopt,
                    const std::optional<Mask>& src_key_padding_mask = std::nullopt) {
    return forward(src, mask, src_key_padding_mask);
  }
};

}  // namespace attn::nn
