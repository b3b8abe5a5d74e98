#include "bahdanau.hpp"

#include "../core/ops.hpp"
#include "checks.hpp"
#include "../data/vocab.hpp"

#include "../nn/init.hpp"

#include <memory>
#include <string>

namespace attn::models {

namespace {

EncoderSizes encoder_sizes(const BahdanauConfig& c) {
  if (c.attention_dim == 0) throw ValueError("BahdanauSeq2Seq: every size in the config must be positive");
  return {c.src_vocab, c.tgt_vocab, c.embed_dim, c.encoder_dim, c.decoder_dim};
}

}  // namespace

BahdanauSeq2Seq::BahdanauSeq2Seq(const BahdanauConfig& cfg)
    : BidirectionalEncoderSeq2Seq("BahdanauSeq2Seq", encoder_sizes(cfg)),
      config(cfg),
      attention(std::make_unique<nn::AdditiveScore>(cfg.decoder_dim, 2 * cfg.encoder_dim, cfg.attention_dim)),
      decoder(cfg.embed_dim + 2 * cfg.encoder_dim, cfg.decoder_dim),
      out(cfg.decoder_dim + 2 * cfg.encoder_dim + cfg.embed_dim, cfg.tgt_vocab) {
  register_module("attention", attention);
  register_module("decoder", decoder);
  register_module("out", out);
  if (cfg.coverage) {  // only then: checkpoints and random draws of models without coverage stay as they were
    coverage_weight = zeros({cfg.attention_dim});
    register_parameter("coverage_weight", coverage_weight);
    nn::init::uniform_(coverage_weight, -1.0, 1.0);  // as nn::Linear(1, A) would: fan_in = 1
  }
}

std::string BahdanauSeq2Seq::extra_repr() const {
  return "src_vocab=" + std::to_string(config.src_vocab) + ", tgt_vocab=" + std::to_string(config.tgt_vocab) +
         ", embed_dim=" + std::to_string(config.embed_dim) + ", encoder_dim=" + std::to_string(config.encoder_dim) +
         ", decoder_dim=" + std::to_string(config.decoder_dim) +
         ", attention_dim=" + std::to_string(config.attention_dim) + (config.coverage ? ", coverage=true" : "");
}

DecoderState BahdanauSeq2Seq::start(const Index& src, const std::vector<std::size_t>& src_lengths) {
  check_source("BahdanauSeq2Seq", src, src_lengths);
  Encoded encoded = encode(src, src_lengths);
  const Dtype dtype = encoded.start.dtype();
  DecoderState state;
  state.src_lengths = src_lengths;
  state.tensors["memory"] = encoded.memory;                                         // h_j: [B, S, 2 * He]
  state.tensors["keys"] = attention.score().precompute_keys(encoded.memory);       // W_2 h_j: [B, S, A]
  state.tensors["h"] = encoded.start;                                               // s_0: [B, Hd]
  state.tensors["c"] = zeros({src.shape()[0], config.decoder_dim}, dtype);         // [B, Hd]
  if (config.coverage) state.tensors["coverage"] = zeros({src.shape()[0], src.shape()[1]}, dtype);  // C_0: [B, S]
  return state;
}

Tensor BahdanauSeq2Seq::decode(DecoderState& state, const Tensor& y_prev) {
  const Tensor& memory = state.tensors.at("memory");
  Mask padding = nn::padding_mask(lengths_index(state.src_lengths), memory.size(1));  // [B, S], true = padding
  Tensor query = unsqueeze(state.tensors.at("h"), 1);                                 // s_{t-1}: [B, 1, Hd]
  Tensor keys = state.tensors.at("keys");                                              // W_2 h_j: [B, S, A]
  // V C_{t-1,j} depends on j only, so it joins the key side of the additive score.
  if (config.coverage) keys = keys + unsqueeze(state.tensors.at("coverage"), 2) * coverage_weight;  // [B, S, 1] * [A]
  nn::AttentionOutput a = attention.forward_precomputed(query, keys, memory, padding);
  Tensor context = select(a.context, 1, 0);                                           // c_t: [B, 2 * He]
  nn::LSTMState s = decoder(concat({y_prev, context}, 1), {state.tensors.at("h"), state.tensors.at("c")});
  state.tensors["h"] = s.h;                                                           // s_t: [B, Hd]
  state.tensors["c"] = s.c;
  if (config.coverage) state.tensors["coverage"] = state.tensors.at("coverage") + select(a.weights, 1, 0);  // C_t: [B, S]
  state.attention["attention"] = select(a.weights, 1, 0).detach();                   // a_tj: [B, S]
  return concat({s.h, context, y_prev}, 1);                                           // [B, Hd + 2 He + E]
}

Tensor BahdanauSeq2Seq::forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) {
  check_source_target("BahdanauSeq2Seq", src, src_lengths, tgt_in);
  DecoderState state = start(src, src_lengths);
  Tensor features = teacher_forced(state, tgt_embed(tgt_in), last_attention_,  // y_{t-1} for every t: [B, T, E]
                                   [this](DecoderState& st, const Tensor& y_prev, std::size_t) {
                                     return decode(st, y_prev);  // [s_t; c_t; y_{t-1}]
                                   });
  return out(features);  // [B, T, V]
}

Tensor BahdanauSeq2Seq::step(DecoderState& state, const Index& prefix) {
  Index last = last_tokens("BahdanauSeq2Seq::step", prefix, state.tensors.at("h").size(0));  // [B, 1]
  Tensor y_prev = select(tgt_embed(last), 1, 0);                                            // [B, E]
  return out(decode(state, y_prev));                                                        // [B, V]
}

}  // namespace attn::models
