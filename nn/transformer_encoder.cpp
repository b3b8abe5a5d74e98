#include "transformer_encoder.hpp"

#include "../core/ops.hpp"

#include <string>

namespace attn::nn {

TransformerEncoderLayer::TransformerEncoderLayer(std::size_t d_model, std::size_t nhead, std::size_t dim_feedforward,
                                                 double dropout, Activation activation, double layer_norm_eps,
                                                 bool norm_first, Generator& gen)
    : TransformerEncoderLayer(d_model, nhead, GroupedQuery{nhead}, dim_feedforward, dropout, activation,
                              layer_norm_eps, norm_first, gen) {}

TransformerEncoderLayer::TransformerEncoderLayer(std::size_t d_model, std::size_t nhead, GroupedQuery grouped,
                                                 std::size_t dim_feedforward, double dropout, Activation activation,
                                                 double layer_norm_eps, bool norm_first, Generator& gen)
    : Module("TransformerEncoderLayer"), d_model(d_model), nhead(nhead), dim_feedforward(dim_feedforward),
      dropout_p(dropout), layer_norm_eps(layer_norm_eps), activation(activation), norm_first(norm_first),
      self_attn(d_model, nhead, grouped, dropout, true, gen),
      linear1(d_model, dim_feedforward, true, gen),
      dropout(dropout, gen),
      linear2(dim_feedforward, d_model, true, gen),
      norm1(d_model, layer_norm_eps),
      norm2(d_model, layer_norm_eps),
      dropout1(dropout, gen),
      dropout2(dropout, gen) {
  if (dim_feedforward == 0) throw ValueError("TransformerEncoderLayer: dim_feedforward must be positive");
  register_module("self_attn", self_attn);
  register_module("linear1", linear1);
  register_module("dropout", this->dropout);
  register_module("linear2", linear2);
  register_module("norm1", norm1);
  register_module("norm2", norm2);
  register_module("dropout1", dropout1);
  register_module("dropout2", dropout2);
}

// dropout1(self_attn(x, x, x)): [B, T, D] -> [B, T, D]
Tensor TransformerEncoderLayer::self_attention_block(const Tensor& x, const std::optional<Mask>& mask,
                                                     const std::optional<Mask>& key_padding_mask) {
  Tensor attended = self_attn(x, x, x, key_padding_mask, /*need_weights=*/false, mask).output;
  return dropout1(attended);
}

// dropout2(linear2(dropout(activation(linear1(x))))): [B, T, D] -> [B, T, F] -> [B, T, D]
Tensor TransformerEncoderLayer::feed_forward_block(const Tensor& x) {
  Tensor hidden = dropout(activate(activation, linear1(x)));  // [B, T, F]
  return dropout2(linear2(hidden));                           // [B, T, D]
}

Tensor TransformerEncoderLayer::forward(const Tensor& src, const std::optional<Mask>& src_mask,
                                        const std::optional<Mask>& src_key_padding_mask) {
  if (!src.defined()) throw ValueError("TransformerEncoderLayer: src is undefined");
  if (src.dim() != 3 || src.size(-1) != d_model)
    throw ShapeError("TransformerEncoderLayer: expected src [B, T, " + std::to_string(d_model) + "], got " +
                     shape_str(src.shape()));
  Tensor x = src;
  if (norm_first) {
    x = x + self_attention_block(norm1(x), src_mask, src_key_padding_mask);
    x = x + feed_forward_block(norm2(x));
  } else {
    x = norm1(x + self_attention_block(x, src_mask, src_key_padding_mask));
    x = norm2(x + feed_forward_block(x));
  }
  return x;
}

std::string TransformerEncoderLayer::extra_repr() const { return detail::layer_settings(*this); }

TransformerEncoder::TransformerEncoder(const TransformerEncoderLayer& encoder_layer, std::size_t num_layers, bool norm,
                                       Generator& gen)
    : TransformerStack("TransformerEncoder", encoder_layer, num_layers, norm, gen) {}

Tensor TransformerEncoder::forward(const Tensor& src, const std::optional<Mask>& mask,
                                   const std::optional<Mask>& src_key_padding_mask) {
  Tensor x = src;
  for (TransformerEncoderLayer& layer : layers) x = layer(x, mask, src_key_padding_mask);
  return final_norm(x);
}

}  // namespace attn::nn
