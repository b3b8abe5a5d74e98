// The Transformer's decoder (Vaswani et al., 2017), as torch.nn.TransformerDecoderLayer
// and torch.nn.TransformerDecoder with batch_first=True: same parameters, names and
// results (tests compare against PyTorch 1.13 within 1e-10).
//
// One decoder layer, post-norm (the paper, the default), three blocks:
//   x = norm1(x + dropout1(self_attn(x, x, x, tgt_mask)))         masked self-attention: step i sees steps <= i
//   x = norm2(x + dropout2(multihead_attn(x, memory, memory)))    encoder-decoder ("cross") attention
//   x = norm3(x + dropout3(linear2(dropout(relu(linear1(x))))))   position-wise feed-forward
// Pre-norm (norm_first = true): x = x + block(norm_k(x)) for each of the three.
//
//   nn::TransformerDecoderLayer layer(/*d_model=*/512, /*nhead=*/8);
//   Tensor y = layer(tgt, memory, nn::causal_mask(T));   // tgt [B, T, 512], memory [B, S, 512] -> [B, T, 512]
//   layer.self_attention_weights();    // [B, 8, T, T]
//   layer.cross_attention_weights();   // [B, 8, T, S]
//
// Masks follow nn/attention/masks.hpp (true = may NOT be attended): tgt_mask [T, T]
// (the causal mask when training with teacher forcing), memory_mask [T, S],
// tgt_key_padding_mask [B, T], memory_key_padding_mask [B, S] (source padding).
#pragma once

#include "transformer_encoder.hpp"

namespace attn::nn {

class TransformerDecoderLayer : public Module {
 public:
  // PyTorch's argument order (batch_first is always true in attn).
  TransformerDecoderLayer(std::size_t d_model, std::size_t nhead, std::size_t dim_feedforward = 2048,
                          double dropout = 0.1, Activation activation = Activation::ReLU,
                          double layer_norm_eps = 1e-5, bool norm_first = false,
                          Generator& gen = default_generator());
  // Grouped-query attention (multihead.hpp) in both its attentions (self and cross): grouped.num_kv_heads
  // key-value heads, 1 for multi-query attention.
  TransformerDecoderLayer(std::size_t d_model, std::size_t nhead, GroupedQuery grouped,
                          std::size_t dim_feedforward = 2048, double dropout = 0.1,
                          Activation activation = Activation::ReLU, double layer_norm_eps = 1e-5,
                          bool norm_first = false, Generator& gen = default_generator());

  // tgt [B, T, d_model], memory [B, S, d_model] -> [B, T, d_model].
  Tensor forward(const Tensor& tgt, const Tensor& memory, const std::optional<Mask>& tgt_mask = std::nullopt,
                 const std::optional<Mask>& memory_mask = std::nullopt,
                 const std::optional<Mask>& tgt_key_padding_mask = std::nullopt,
                 const std::optional<Mask>& memory_key_padding_mask = std::nullopt);
  Tensor operator()(const Tensor& tgt, const Tensor& memory, const std::optional<Mask>& tgt_mask = std::nullopt,
                    const std::optional<Mask>& memory_mask = std::nullopt,
                    const std::optional<Mask>& tgt_key_padding_mask = std::nullopt,
                    const std::optional<Mask>& memory_key_padding_mask = std::nullopt) {
    return forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
  }

  // One decoding step (kv_cache.hpp): x [B, Tn, d_model] holds the new positions (Tn = 1 when
  // decoding a token at a time); self_cache the self-attention's keys and values of the positions
  // before them, which it extends by Tn; memory_kv the cross-attention's keys and values of the
  // memory, multihead_attn.project_kv(memory, memory), made once per source. The new rows of
  // forward(prefix, memory, causal_mask) to rounding, without recomputing the earlier ones.
  Tensor forward_step(const Tensor& x, KVCache& self_cache, const KVCache& memory_kv,
                      const std::optional<Mask>& memory_key_padding_mask = std::nullopt);

  // The weights of the last forward, per head, detached.
  const Tensor& self_attention_weights() const { return self_attn.last_weights(); }        // [B, H, T, T]
  const Tensor& cross_attention_weights() const { return multihead_attn.last_weights(); }  // [B, H, T, S]
  std::string extra_repr() const override;

  std::size_t d_model, nhead, dim_feedforward;
  double dropout_p, layer_norm_eps;
  Activation activation;
  bool norm_first;

  MultiheadAttention self_attn;       // queries, keys and values from the target
  MultiheadAttention multihead_attn;  // queries from the target, keys and values from the memory
  Linear linear1;                     // d_model -> dim_feedforward
  Dropout dropout;                    // inside the feed-forward block
  Linear linear2;                     // dim_feedforward -> d_model
  LayerNorm norm1, norm2, norm3;
  Dropout dropout1, dropout2, dropout3;

 private:
  Tensor self_attention_block(const Tensor& x, const std::optional<Mask>& mask,
                              const std::optional<Mask>& key_padding_mask);
  Tensor cross_attention_block(const Tensor& x, const Tensor& memory, const std::optional<Mask>& mask,
                               const std::optional<Mask>& key_padding_mask);
  Tensor feed_forward_block(const Tensor& x);
};

// A stack of num_layers decoder layers and an optional final LayerNorm
// (transformer_stack.hpp).
class TransformerDecoder : public TransformerStack<TransformerDecoderLayer> {
 public:
  TransformerDecoder(const TransformerDecoderLayer& decoder_layer, std::size_t num_layers, bool norm = false,
                     Generator& gen = default_generator());

  // tgt [B, T, d_model], memory [B, S, d_model] -> [B, T, d_model]; every layer
  // attends to the same memory (the encoder's output) with the same masks.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const std::optional<Mask>& tgt_mask = std::nullopt,
                 const std::optional<Mask>& memory_mask = std::nullopt,
                 const std::optional<Mask>& tgt_key_padding_mask = std::nullopt,
                 const std::optional<Mask>& memory_key_padding_mask = std::nullopt);
  Tensor operator()(const Tensor& tgt, const Tensor& memory, const std::optional<Mask>& tgt_mask = std::nullopt,
                    const std::optional<Mask>& memory_mask = std::nullopt,
                    const std::optional<Mask>& tgt_key_padding_mask = std::nullopt,
                    const std::optional<Mask>& memory_key_padding_mask = std::nullopt) {
    return forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
  }
};

}  // namespace attn::nn
