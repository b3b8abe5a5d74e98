#include "transformer_decoder.hpp"

#include "../core/ops.hpp"

#include <string>

namespace attn::nn {

TransformerDecoderLayer::TransformerDecoderLayer(std::size_t d_model, std::size_t nhead, std::size_t dim_feedforward,
                                                 double dropout, Activation activation, double layer_norm_eps,
                                                 bool norm_first, Generator& gen)
    : TransformerDecoderLayer(d_model, nhead, GroupedQuery{nhead}, dim_feedforward, dropout, activation,
                              layer_norm_eps, norm_first, gen) {}

TransformerDecoderLayer::TransformerDecoderLayer(std::size_t d_model, std::size_t nhead, GroupedQuery grouped,
                                                 std::size_t dim_feedforward, double dropout, Activation activation,
                                                 double layer_norm_eps, bool norm_first, Generator& gen)
    : Module("TransformerDecoderLayer"), d_model(d_model), nhead(nhead), dim_feedforward(dim_feedforward),
      dropout_p(dropout), layer_norm_eps(layer_norm_eps), activation(activation), norm_first(norm_first),
      self_attn(d_model, nhead, grouped, dropout, true, gen),
      multihead_attn(d_model, nhead, grouped, dropout, true, gen),
      linear1(d_model, dim_feedforward, true, gen),
      dropout(dropout, gen),
      linear2(dim_feedforward, d_model, true, gen),
      norm1(d_model, layer_norm_eps),
      norm2(d_model, layer_norm_eps),
      norm3(d_model, layer_norm_eps),
      dropout1(dropout, gen),
      dropout2(dropout, gen),
      dropout3(dropout, gen) {
  if (dim_feedforward == 0) throw ValueError("TransformerDecoderLayer: dim_feedforward must be positive");
  register_module("self_attn", self_attn);
  register_module("multihead_attn", multihead_attn);
  register_module("linear1", linear1);
  register_module("dropout", this->dropout);
  register_module("linear2", linear2);
  register_module("norm1", norm1);
  register_module("norm2", norm2);
  register_module("norm3", norm3);
  register_module("dropout1", dropout1);
  register_module("dropout2", dropout2);
  register_module("dropout3", dropout3);
}

// dropout1(self_attn(x, x, x)): [B, T, D] -> [B, T, D]
Tensor TransformerDecoderLayer::self_attention_block(const Tensor& x, const std::optional<Mask>& mask,
                                                     const std::optional<Mask>& key_padding_mask) {
  Tensor attended = self_attn(x, x, x, key_padding_mask, /*need_weights=*/false, mask).output;
  return dropout1(attended);
}

// dropout2(multihead_attn(x, memory, memory)): queries [B, T, D], keys and values [B, S, D] -> [B, T, D]
Tensor TransformerDecoderLayer::cross_attention_block(const Tensor& x, const Tensor& memory,
                                                      const std::optional<Mask>& mask,
                                                      const std::optional<Mask>& key_padding_mask) {
  Tensor attended = multihead_attn(x, memory, memory, key_padding_mask, /*need_weights=*/false, mask).output;
  return dropout2(attended);
}

// dropout3(linear2(dropout(activation(linear1(x))))): [B, T, D] -> [B, T, F] -> [B, T, D]
Tensor TransformerDecoderLayer::feed_forward_block(const Tensor& x) {
  Tensor hidden = dropout(activate(activation, linear1(x)));  // [B, T, F]
  return dropout3(linear2(hidden));                           // [B, T, D]
}

Tensor TransformerDecoderLayer::forward_step(const Tensor& x0, KVCache& self_cache, const KVCache& memory_kv,
                                             const std::optional<Mask>& memory_key_padding_mask) {
  if (!x0.defined() || x0.dim() != 3 || x0.size(-1) != d_model)
    throw ShapeError("TransformerDecoderLayer::forward_step: expected x [B, Tn, " + std::to_string(d_model) +
                     "], got " + (x0.defined() ? shape_str(x0.shape()) : std::string("undefined")));
  // The three blocks of forward(), with the self-attention reading and extending the cache and
  // the cross-attention reading the memory's keys and values.
  auto self_block = [&](const Tensor& y) { return dropout1(self_attn.forward_step(y, self_cache).output); };
  auto cross_block = [&](const Tensor& y) {
    return dropout2(multihead_attn.forward_cached(y, memory_kv, memory_key_padding_mask, /*need_weights=*/false).output);
  };
  Tensor x = x0;
  if (norm_first) {
    x = x + self_block(norm1(x));
    x = x + cross_block(norm2(x));
    x = x + feed_forward_block(norm3(x));
  } else {
    x = norm1(x + self_block(x));
    x = norm2(x + cross_block(x));
    x = norm3(x + feed_forward_block(x));
  }
  return x;
}

Tensor TransformerDecoderLayer::forward(const Tensor& tgt, const Tensor& memory, const std::optional<Mask>& tgt_mask,
                                        const std::optional<Mask>& memory_mask,
                                        const std::optional<Mask>& tgt_key_padding_mask,
                                        const std::optional<Mask>& memory_key_padding_mask) {
  if (!tgt.defined() || !memory.defined()) throw ValueError("TransformerDecoderLayer: tgt or memory is undefined");
  if (tgt.dim() != 3 || tgt.size(-1) != d_model || memory.dim() != 3 || memory.size(-1) != d_model ||
      memory.size(0) != tgt.size(0))
    throw ShapeError("TransformerDecoderLayer: expected tgt [B, T, " + std::to_string(d_model) + "] and memory [B, S, " +
                     std::to_string(d_model) + "], got tgt " + shape_str(tgt.shape()) + " and memory " +
                     shape_str(memory.shape()));
  Tensor x = tgt;
  if (norm_first) {
    x = x + self_attention_block(norm1(x), tgt_mask, tgt_key_padding_mask);
    x = x + cross_attention_block(norm2(x), memory, memory_mask, memory_key_padding_mask);
    x = x + feed_forward_block(norm3(x));
  } else {
    x = norm1(x + self_attention_block(x, tgt_mask, tgt_key_padding_mask));
    x = norm2(x + cross_attention_block(x, memory, memory_mask, memory_key_padding_mask));
    x = norm3(x + feed_forward_block(x));
  }
  return x;
}

std::string TransformerDecoderLayer::extra_repr() const { return detail::layer_settings(*this); }

TransformerDecoder::TransformerDecoder(const TransformerDecoderLayer& decoder_layer, std::size_t num_layers, bool norm,
                                       Generator& gen)
    : TransformerStack("TransformerDecoder", decoder_layer, num_layers, norm, gen) {}

Tensor TransformerDecoder::forward(const Tensor& tgt, const Tensor& memory, const std::optional<Mask>& tgt_mask,
                                   const std::optional<Mask>& memory_mask,
                                   const std::optional<Mask>& tgt_key_padding_mask,
                                   const std::optional<Mask>& memory_key_padding_mask) {
  Tensor x = tgt;
  for (TransformerDecoderLayer& layer : layers)
    x = layer(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
  return final_norm(x);
}

}  // namespace attn::nn
