#include "seq2seq_plain.hpp"

#include "../core/ops.hpp"
#include "checks.hpp"
#include "../data/vocab.hpp"

#include <string>

namespace attn::models {

namespace {

std::size_t checked(std::size_t value, const char* name) {
  if (value == 0) throw ValueError(std::string("PlainSeq2Seq: ") + name + " must be positive");
  return value;
}

}  // namespace

PlainSeq2Seq::PlainSeq2Seq(const PlainSeq2SeqConfig& config)
    : Seq2Seq("PlainSeq2Seq"),
      config(config),
      src_embed(checked(config.src_vocab, "src_vocab"), checked(config.embed_dim, "embed_dim"), data::Vocab::pad_id),
      tgt_embed(checked(config.tgt_vocab, "tgt_vocab"), config.embed_dim, data::Vocab::pad_id),
      encoder(config.embed_dim, checked(config.hidden_dim, "hidden_dim"), nn::batch_first()),
      decoder(config.embed_dim + config.hidden_dim, config.hidden_dim, nn::batch_first()),
      out(config.hidden_dim, config.tgt_vocab) {
  register_module("src_embed", src_embed);
  register_module("tgt_embed", tgt_embed);
  register_module("encoder", encoder);
  register_module("decoder", decoder);
  register_module("out", out);
}

std::string PlainSeq2Seq::extra_repr() const {
  return "src_vocab=" + std::to_string(config.src_vocab) + ", tgt_vocab=" + std::to_string(config.tgt_vocab) +
         ", embed_dim=" + std::to_string(config.embed_dim) + ", hidden_dim=" + std::to_string(config.hidden_dim);
}

DecoderState PlainSeq2Seq::start(const Index& src, const std::vector<std::size_t>& src_lengths) {
  check_source("PlainSeq2Seq", src, src_lengths);
  Tensor x = src_embed(src);                                   // [B, S, E]
  nn::LSTMOutput encoded = encoder(x, {}, src_lengths);        // h, c: [1, B, H], each row's last valid step
  DecoderState state;
  state.src_lengths = src_lengths;
  state.tensors["context"] = select(encoded.h, 0, 0);          // c = h_m: [B, H]
  state.tensors["h"] = select(encoded.h, 0, 0);                // s_0 = h_m: [B, H]
  state.tensors["c"] = select(encoded.c, 0, 0);                // and its cell state: [B, H]
  return state;
}

Tensor PlainSeq2Seq::forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) {
  check_source_target("PlainSeq2Seq", src, src_lengths, tgt_in);
  DecoderState state = start(src, src_lengths);
  const std::size_t B = tgt_in.shape()[0], T = tgt_in.shape()[1];
  Tensor y = tgt_embed(tgt_in);                                              // y_{t-1}: [B, T, E]
  Tensor c = expand(unsqueeze(state.tensors["context"], 1), {B, T, config.hidden_dim});  // [B, T, H]
  // Nothing the decoder computes feeds back into its input, so under teacher
  // forcing one LSTM call runs every step.
  nn::LSTMState s0{unsqueeze(state.tensors["h"], 0), unsqueeze(state.tensors["c"], 0)};  // [1, B, H]
  nn::LSTMOutput decoded = decoder(concat({y, c}, 2), s0);                  // s_t: [B, T, H]
  return out(decoded.output);                                                // [B, T, V]
}

Tensor PlainSeq2Seq::step(DecoderState& state, const Index& prefix) {
  const Tensor& context = state.tensors.at("context");                      // [B, H]
  Index last = last_tokens("PlainSeq2Seq::step", prefix, context.size(0));  // y_{t-1}: [B, 1]
  Tensor x = concat({tgt_embed(last), unsqueeze(context, 1)}, 2);           // [B, 1, E + H]
  nn::LSTMState s{unsqueeze(state.tensors.at("h"), 0), unsqueeze(state.tensors.at("c"), 0)};  // [1, B, H]
  nn::LSTMOutput decoded = decoder(x, s);                                    // output [B, 1, H]
  state.tensors["h"] = select(decoded.h, 0, 0);                              // s_t: [B, H]
  state.tensors["c"] = select(decoded.c, 0, 0);
  return out(select(decoded.output, 1, 0));                                  // [B, V]
}

}  // namespace attn::models
