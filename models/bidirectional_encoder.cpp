#include "bidirectional_encoder.hpp"

#include "../core/ops.hpp"
#include "../data/vocab.hpp"
#include "checks.hpp"

namespace attn::models {

namespace {

const EncoderSizes& checked(const std::string& name, const EncoderSizes& s) {
  if (s.src_vocab == 0 || s.tgt_vocab == 0 || s.embed_dim == 0 || s.encoder_dim == 0 || s.decoder_dim == 0)
    throw ValueError(name + ": every size in the config must be positive");
  return s;
}

}  // namespace

BidirectionalEncoderSeq2Seq::BidirectionalEncoderSeq2Seq(const std::string& name, const EncoderSizes& sizes)
    : Seq2Seq(name),
      src_embed(checked(name, sizes).src_vocab, sizes.embed_dim, data::Vocab::pad_id),
      tgt_embed(sizes.tgt_vocab, sizes.embed_dim, data::Vocab::pad_id),
      encoder(sizes.embed_dim, sizes.encoder_dim, nn::batch_first(/*bidirectional=*/true)),
      init(2 * sizes.encoder_dim, sizes.decoder_dim) {
  register_module("src_embed", src_embed);
  register_module("tgt_embed", tgt_embed);
  register_module("encoder", encoder);
  register_module("init", init);
}

BidirectionalEncoderSeq2Seq::Encoded BidirectionalEncoderSeq2Seq::encode(const Index& src,
                                                                         const std::vector<std::size_t>& src_lengths) {
  Tensor x = src_embed(src);                             // [B, S, E]
  nn::LSTMOutput encoded = encoder(x, {}, src_lengths);  // output [B, S, 2 * He], h [2, B, He]
  // The forward direction ends at h_m, the backward one at h_1: both summaries.
  Tensor summary = concat({select(encoded.h, 0, 0), select(encoded.h, 0, 1)}, 1);  // [B, 2 * He]
  return {encoded.output, tanh(init(summary))};
}

std::map<std::string, Tensor> BidirectionalEncoderSeq2Seq::last_attention() const {
  if (!last_attention_.defined()) return {};
  return {{"attention", last_attention_}};
}

}  // namespace attn::models
