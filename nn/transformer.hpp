// nn::Transformer: the encoder-decoder of "Attention Is All You Need" (Vaswani
// et al., 2017), as torch.nn.Transformer with batch_first=True. Like PyTorch's,
// it has no embeddings and no output layer: it maps vectors to vectors
// (models/transformer_seq2seq.hpp adds them to make a translation model).
//
//   memory = encoder(src)            N encoder layers + final LayerNorm ("encoder.norm")
//   output = decoder(tgt, memory)    N decoder layers + final LayerNorm ("decoder.norm")
//
// The paper's base model is the default: 6 + 6 layers, d_model 512, 8 heads,
// feed-forward 2048, dropout 0.1, post-norm: 44,140,544 parameters, as PyTorch.
//
//   nn::Transformer model;                                    // the paper's configuration
//   nn::Transformer small(/*d_model=*/32, /*nhead=*/4, 2, 2, /*dim_feedforward=*/64, /*dropout=*/0.0);
//   Tensor out = small(src, tgt, std::nullopt, nn::Transformer::generate_square_subsequent_mask(T));
//   // src [B, S, 32], tgt [B, T, 32] -> out [B, T, 32]
//
// As PyTorch, every weight matrix (every parameter with more than one dim) is
// drawn again with xavier_uniform_ once the whole model is built.
#pragma once

#include "transformer_decoder.hpp"
#include "transformer_encoder.hpp"

namespace attn::nn {

class Transformer : public Module {
 public:
  // PyTorch's argument order (no custom encoder/decoder; batch_first is always true).
  explicit Transformer(std::size_t d_model = 512, std::size_t nhead = 8, std::size_t num_encoder_layers = 6,
                       std::size_t num_decoder_layers = 6, std::size_t dim_feedforward = 2048, double dropout = 0.1,
                       Activation activation = Activation::ReLU, double layer_norm_eps = 1e-5,
                       bool norm_first = false, Generator& gen = default_generator());
  // Grouped-query attention in the decoder's self- and cross-attention (multihead.hpp's
  // GroupedQuery; 1 key-value head is multi-query attention), the encoder's heads left whole:
  // the decoder's attention is what decoding reads from its caches, token after token
  // (Ainslie et al. 2023 group the decoder's attentions only, for that reason).
  Transformer(std::size_t d_model, std::size_t nhead, GroupedQuery decoder_grouped, std::size_t num_encoder_layers = 6,
              std::size_t num_decoder_layers = 6, std::size_t dim_feedforward = 2048, double dropout = 0.1,
              Activation activation = Activation::ReLU, double layer_norm_eps = 1e-5, bool norm_first = false,
              Generator& gen = default_generator());

  // src [B, S, d_model], tgt [B, T, d_model] -> [B, T, d_model]. Masks (true = may
  // not be attended): src_mask [S, S], tgt_mask [T, T], memory_mask [T, S],
  // key padding masks [B, S] / [B, T] / [B, S]. memory_key_padding_mask is
  // usually src_key_padding_mask: the decoder must not read the source's padding.
  Tensor forward(const Tensor& src, const Tensor& tgt, const std::optional<Mask>& src_mask = std::nullopt,
                 const std::optional<Mask>& tgt_mask = std::nullopt,
                 const std::optional<Mask>& memory_mask = std::nullopt,
                 const std::optional<Mask>& src_key_padding_mask = std::nullopt,
                 const std::optional<Mask>& tgt_key_padding_mask = std::nullopt,
                 const std::optional<Mask>& memory_key_padding_mask = std::nullopt);
  Tensor operator()(const Tensor& src, const Tensor& tgt, const std::optional<Mask>& src_mask = std::nullopt,
                    const std::optional<Mask>& tgt_mask = std::nullopt,
                    const std::optional<Mask>& memory_mask = std::nullopt,
                    const std::optional<Mask>& src_key_padding_mask = std::nullopt,
                    const std::optional<Mask>& tgt_key_padding_mask = std::nullopt,
                    const std::optional<Mask>& memory_key_padding_mask = std::nullopt) {
    return forward(src, tgt, src_mask, tgt_mask, memory_mask, src_key_padding_mask, tgt_key_padding_mask,
                   memory_key_padding_mask);
  }

  // The causal mask [sz, sz], true above the diagonal (PyTorch's float version
  // has -inf there): position i may attend to positions 0..i only.
  static Mask generate_square_subsequent_mask(std::size_t sz);

  std::string extra_repr() const override;

  std::size_t d_model, nhead;
  TransformerEncoder encoder;
  TransformerDecoder decoder;
};

}  // namespace attn::nn
