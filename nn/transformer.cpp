#include "transformer.hpp"

#include "attention/masks.hpp"
#include "init.hpp"

#include <sstream>
#include <string>

namespace attn::nn {

Transformer::Transformer(std::size_t d_model, std::size_t nhead, std::size_t num_encoder_layers,
                         std::size_t num_decoder_layers, std::size_t dim_feedforward, double dropout,
                         Activation activation, double layer_norm_eps, bool norm_first, Generator& gen)
    : Transformer(d_model, nhead, GroupedQuery{nhead}, num_encoder_layers, num_decoder_layers, dim_feedforward,
                  dropout, activation, layer_norm_eps, norm_first, gen) {}

Transformer::Transformer(std::size_t d_model, std::size_t nhead, GroupedQuery decoder_grouped,
                         std::size_t num_encoder_layers, std::size_t num_decoder_layers, std::size_t dim_feedforward,
                         double dropout, Activation activation, double layer_norm_eps, bool norm_first, Generator& gen)
    : Module("Transformer"), d_model(d_model), nhead(nhead),
      // Each stack copies a prototype layer, then gets a final LayerNorm, as PyTorch.
      encoder(TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                      norm_first, gen),
              num_encoder_layers, /*norm=*/true, gen),
      decoder(TransformerDecoderLayer(d_model, nhead, decoder_grouped, dim_feedforward, dropout, activation,
                                      layer_norm_eps, norm_first, gen),
              num_decoder_layers, /*norm=*/true, gen) {
  register_module("encoder", encoder);
  register_module("decoder", decoder);
  // PyTorch's _reset_parameters: xavier_uniform_ for every weight matrix, so the
  // layers no longer start as copies of each other. Biases and norms keep their values.
  for (auto& [name, p] : named_parameters())
    if (p.dim() > 1) init::xavier_uniform_(p, 1.0, gen);
}

Tensor Transformer::forward(const Tensor& src, const Tensor& tgt, const std::optional<Mask>& src_mask,
                            const std::optional<Mask>& tgt_mask, const std::optional<Mask>& memory_mask,
                            const std::optional<Mask>& src_key_padding_mask,
                            const std::optional<Mask>& tgt_key_padding_mask,
                            const std::optional<Mask>& memory_key_padding_mask) {
  if (!src.defined() || !tgt.defined()) throw ValueError("Transformer: src or tgt is undefined");
  if (src.dim() != 3 || tgt.dim() != 3 || src.size(0) != tgt.size(0) || src.size(-1) != d_model ||
      tgt.size(-1) != d_model)
    throw ShapeError("Transformer: expected src [B, S, " + std::to_string(d_model) + "] and tgt [B, T, " +
                     std::to_string(d_model) + "], got src " + shape_str(src.shape()) + " and tgt " +
                     shape_str(tgt.shape()));
  Tensor memory = encoder(src, src_mask, src_key_padding_mask);  // [B, S, D]
  return decoder(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);  // [B, T, D]
}

Mask Transformer::generate_square_subsequent_mask(std::size_t sz) { return causal_mask(sz); }

std::string Transformer::extra_repr() const {
  std::ostringstream os;
  os << "d_model=" << d_model << ", nhead=" << nhead << ", num_encoder_layers=" << encoder.num_layers
     << ", num_decoder_layers=" << decoder.num_layers;
  return os.str();
}

}  // namespace attn::nn
