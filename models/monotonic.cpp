#include "monotonic.hpp"

#include "../core/ops.hpp"
#include "checks.hpp"
#include "../data/vocab.hpp"

#include <string>

namespace attn::models {

namespace {

EncoderSizes encoder_sizes(const MonotonicConfig& c) {
  if (c.attention_dim == 0) throw ValueError("MonotonicSeq2Seq: every size in the config must be positive");
  if (!(c.noise_std >= 0.0)) throw ValueError("MonotonicSeq2Seq: noise_std must be >= 0, got " + std::to_string(c.noise_std));
  return {c.src_vocab, c.tgt_vocab, c.embed_dim, c.encoder_dim, c.decoder_dim};
}

nn::MonotonicOptions attention_options(const MonotonicConfig& c) {
  nn::MonotonicOptions o;
  o.noise_std = c.noise_std;
  o.offset_init = c.offset_init;
  return o;
}

}  // namespace

MonotonicSeq2Seq::MonotonicSeq2Seq(const MonotonicConfig& cfg)
    : BidirectionalEncoderSeq2Seq("MonotonicSeq2Seq", encoder_sizes(cfg)),
      config(cfg),
      attention(cfg.decoder_dim, 2 * cfg.encoder_dim, cfg.attention_dim, attention_options(cfg)),
      decoder(cfg.embed_dim + 2 * cfg.encoder_dim, cfg.decoder_dim),
      out(cfg.decoder_dim + 2 * cfg.encoder_dim + cfg.embed_dim, cfg.tgt_vocab) {
  register_module("attention", attention);
  register_module("decoder", decoder);
  register_module("out", out);
}

std::string MonotonicSeq2Seq::extra_repr() const {
  return "src_vocab=" + std::to_string(config.src_vocab) + ", tgt_vocab=" + std::to_string(config.tgt_vocab) +
         ", embed_dim=" + std::to_string(config.embed_dim) + ", encoder_dim=" + std::to_string(config.encoder_dim) +
         ", decoder_dim=" + std::to_string(config.decoder_dim) +
         ", attention_dim=" + std::to_string(config.attention_dim) + ", noise_std=" + std::to_string(config.noise_std);
}

DecoderState MonotonicSeq2Seq::start(const Index& src, const std::vector<std::size_t>& src_lengths) {
  check_source("MonotonicSeq2Seq", src, src_lengths);
  const std::size_t B = src.shape()[0], S = src.shape()[1];
  Encoded encoded = encode(src, src_lengths);
  const Dtype dtype = encoded.start.dtype();
  DecoderState state;
  state.src_lengths = src_lengths;
  state.tensors["memory"] = encoded.memory;                                  // h_j: [B, S, 2 * He]
  state.tensors["keys"] = attention.precompute_keys(encoded.memory);        // W_2 h_j: [B, S, A]
  state.tensors["h"] = encoded.start;                                        // s_0: [B, Hd]
  state.tensors["c"] = zeros({B, config.decoder_dim}, dtype);               // [B, Hd]
  state.tensors["alignment"] = nn::monotonic_initial_alignment(B, S, dtype);  // alpha_{-1}: [B, S]
  state.tensors["pointer"] = zeros({B});                                     // hard: every row starts at 0
  return state;
}

Tensor MonotonicSeq2Seq::decode(DecoderState& state, const Tensor& y_prev, bool hard) {
  const Tensor& memory = state.tensors.at("memory");
  const std::size_t B = memory.size(0), S = memory.size(1);
  const Index lengths = lengths_index(state.src_lengths);
  Tensor context;  // c_t: [B, 2 * He]
  if (hard) {
    // The pointer lives in state.tensors (as doubles) so that beam search reorders it with the rest.
    const xt::xarray<double> stored = state.tensors.at("pointer").to_array();
    Index pointer = xt::cast<std::int64_t>(stored);
    nn::HardMonotonicOutput a =
        attention.hard_step(state.tensors.at("h"), state.tensors.at("keys"), memory, lengths, pointer);
    context = a.context;
    state.tensors["pointer"] = Tensor(xt::xarray<double>(xt::cast<double>(pointer)));
    // A one-hot row per step, for heatmaps (the one O(S) copy of a hard step).
    xt::xarray<double> row = xt::zeros<double>({B, S});
    for (std::size_t b = 0; b < B; ++b)
      if (a.positions(b) >= 0) row(b, static_cast<std::size_t>(a.positions(b))) = 1.0;
    state.attention["attention"] = Tensor(std::move(row)).to(memory.dtype());
  } else {
    Tensor query = unsqueeze(state.tensors.at("h"), 1);  // s_{t-1}: [B, 1, Hd]
    nn::AttentionOutput a = attention.forward_precomputed(query, state.tensors.at("keys"), memory, lengths,
                                                          state.tensors.at("alignment"));
    context = select(a.context, 1, 0);                   // [B, 1, 2 He] -> [B, 2 He]
    state.tensors["alignment"] = select(a.weights, 1, 0);  // alpha_t: [B, S], kept in the graph for the next step
    state.attention["attention"] = state.tensors["alignment"].detach();
  }
  nn::LSTMState s = decoder(concat({y_prev, context}, 1), {state.tensors.at("h"), state.tensors.at("c")});
  state.tensors["h"] = s.h;  // s_t: [B, Hd]
  state.tensors["c"] = s.c;
  return concat({s.h, context, y_prev}, 1);  // [B, Hd + 2 He + E]
}

Tensor MonotonicSeq2Seq::forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) {
  check_source_target("MonotonicSeq2Seq", src, src_lengths, tgt_in);
  DecoderState state = start(src, src_lengths);
  Tensor features = teacher_forced(state, tgt_embed(tgt_in), last_attention_,  // y_{t-1} for every t: [B, T, E]
                                   [this](DecoderState& st, const Tensor& y_prev, std::size_t) {
                                     return decode(st, y_prev, /*hard=*/false);  // the expected alignment
                                   });
  return out(features);  // [B, T, V]
}

Tensor MonotonicSeq2Seq::step(DecoderState& state, const Index& prefix) {
  Index last = last_tokens("MonotonicSeq2Seq::step", prefix, state.tensors.at("h").size(0));  // [B, 1]
  Tensor y_prev = select(tgt_embed(last), 1, 0);                                             // [B, E]
  return out(decode(state, y_prev, true));                                                   // [B, V]
}

}  // namespace attn::models
