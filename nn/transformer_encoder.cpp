#include "transformer_encoder.hpp"

#include "../core/ops.hpp"

#include <sstream>
#include <string>

namespace attn::nn {

namespace detail {

void copy_parameters(const Module& from, Module& to) {
  to.to(from.dtype());
  auto source = from.named_parameters();
  auto target = to.named_parameters();
  if (source.size() != target.size())
    throw ValueError("copy_parameters: " + from.type_name() + " has " + std::to_string(source.size()) +
                     " parameters, " + to.type_name() + " has " + std::to_string(target.size()));
  for (std::size_t i = 0; i < source.size(); ++i) {
    const auto& [name, value] = source[i];
    Tensor& copy = target[i].second;  // a handle to the same node as the member tensor
    if (name != target[i].first || value.shape() != copy.shape())
      throw ShapeError("copy_parameters: " + name + " " + shape_str(value.shape()) + " does not match " +
                       target[i].first + " " + shape_str(copy.shape()));
    if (value.dtype() == Dtype::Float64) copy.data<double>() = value.data<double>();
    else copy.data<float>() = value.data<float>();
  }
}

}  // namespace detail

TransformerEncoderLayer::TransformerEncoderLayer(std::size_t d_model, std::size_t nhead, std::size_t dim_feedforward,
                                                 double dropout, Activation activation, double layer_norm_eps,
                                                 bool norm_first, Generator& gen)
    : Module("TransformerEncoderLayer"), d_model(d_model), nhead(nhead), dim_feedforward(dim_feedforward),
      dropout_p(dropout), layer_norm_eps(layer_norm_eps), activation(activation), norm_first(norm_first),
      self_attn(d_model, nhead, dropout, true, gen),
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

std::string TransformerEncoderLayer::extra_repr() const {
  std::ostringstream os;
  os << "d_model=" << d_model << ", nhead=" << nhead << ", dim_feedforward=" << dim_feedforward
     << ", dropout=" << dropout_p << ", activation=" << activation_name(activation)
     << ", layer_norm_eps=" << layer_norm_eps << ", norm_first=" << (norm_first ? "true" : "false");
  return os.str();
}

TransformerEncoder::TransformerEncoder(const TransformerEncoderLayer& encoder_layer, std::size_t num_layers,
                                       bool norm, Generator& gen)
    : Module("TransformerEncoder"), num_layers(num_layers) {
  const TransformerEncoderLayer& p = encoder_layer;
  for (std::size_t i = 0; i < num_layers; ++i) {
    TransformerEncoderLayer& layer = layers.emplace_back(p.d_model, p.nhead, p.dim_feedforward, p.dropout_p,
                                                         p.activation, p.layer_norm_eps, p.norm_first, gen);
    detail::copy_parameters(p, layer);
    layer.train(p.is_training());
  }
  register_module("layers", layers);
  if (norm) {
    this->norm = std::make_unique<LayerNorm>(p.d_model, p.layer_norm_eps);
    this->norm->to(p.dtype());
    register_module("norm", *this->norm);
  }
}

Tensor TransformerEncoder::forward(const Tensor& src, const std::optional<Mask>& mask,
                                   const std::optional<Mask>& src_key_padding_mask) {
  Tensor x = src;
  for (TransformerEncoderLayer& layer : layers) x = layer(x, mask, src_key_padding_mask);
  if (norm) x = (*norm)(x);
  return x;
}

}  // namespace attn::nn
