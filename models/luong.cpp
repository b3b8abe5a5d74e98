#include "luong.hpp"

#include "../core/ops.hpp"
#include "checks.hpp"
#include "../data/vocab.hpp"

#include <string>

namespace attn::models {

const char* luong_score_name(LuongScore score) {
  switch (score) {
    case LuongScore::Dot: return "dot";
    case LuongScore::General: return "general";
    case LuongScore::Concat: return "concat";
  }
  return "?";
}

LuongScore luong_score_from_name(const std::string& name) {
  for (LuongScore s : {LuongScore::Dot, LuongScore::General, LuongScore::Concat})
    if (name == luong_score_name(s)) return s;
  throw ValueError("luong_score_from_name: unknown score '" + name + "' (choices: dot, general, concat)");
}

const char* luong_attention_name(LuongAttention attention) {
  switch (attention) {
    case LuongAttention::Global: return "global";
    case LuongAttention::LocalM: return "local-m";
    case LuongAttention::LocalP: return "local-p";
  }
  return "?";
}

LuongAttention luong_attention_from_name(const std::string& name) {
  for (LuongAttention a : {LuongAttention::Global, LuongAttention::LocalM, LuongAttention::LocalP})
    if (name == luong_attention_name(a)) return a;
  throw ValueError("luong_attention_from_name: unknown attention '" + name +
                   "' (choices: global, local-m, local-p)");
}

namespace {

const LuongConfig& checked(const LuongConfig& c) {
  if (c.src_vocab == 0 || c.tgt_vocab == 0 || c.embed_dim == 0 || c.hidden_dim == 0 || c.attention_dim == 0)
    throw ValueError("LuongSeq2Seq: every size in the config must be positive");
  if (c.attention != LuongAttention::Global && c.window == 0)
    throw ValueError("LuongSeq2Seq: local attention needs a window D >= 1");
  return c;
}

std::unique_ptr<nn::Score> make_score(const LuongConfig& c) {
  switch (c.score) {
    case LuongScore::Dot: return std::make_unique<nn::DotScore>();
    case LuongScore::General: return std::make_unique<nn::GeneralScore>(c.hidden_dim, c.hidden_dim);
    case LuongScore::Concat: return std::make_unique<nn::ConcatScore>(c.hidden_dim, c.hidden_dim, c.attention_dim);
  }
  throw ValueError("LuongSeq2Seq: unknown score");
}

}  // namespace

LuongSeq2Seq::LuongSeq2Seq(const LuongConfig& cfg)
    : Seq2Seq("LuongSeq2Seq"),
      config(checked(cfg)),
      src_embed(cfg.src_vocab, cfg.embed_dim, data::Vocab::pad_id),
      tgt_embed(cfg.tgt_vocab, cfg.embed_dim, data::Vocab::pad_id),
      encoder(cfg.embed_dim, cfg.hidden_dim, nn::batch_first()),
      decoder(cfg.embed_dim + (cfg.input_feeding ? cfg.hidden_dim : 0), cfg.hidden_dim),
      combine(2 * cfg.hidden_dim, cfg.hidden_dim, /*bias=*/false),
      out(cfg.hidden_dim, cfg.tgt_vocab) {
  register_module("src_embed", src_embed);
  register_module("tgt_embed", tgt_embed);
  register_module("encoder", encoder);
  register_module("decoder", decoder);
  if (cfg.attention == LuongAttention::Global) {
    global_attention = std::make_unique<nn::Attention>(make_score(cfg));
    register_module("attention", *global_attention);
  } else {
    const bool predictive = cfg.attention == LuongAttention::LocalP;
    local_attention = std::make_unique<nn::LocalAttention>(
        make_score(cfg), cfg.window, predictive ? nn::LocalAttention::Mode::Predictive : nn::LocalAttention::Mode::Monotonic,
        predictive ? cfg.hidden_dim : 0, predictive ? cfg.attention_dim : 0, default_generator(),
        predictive ? true : cfg.local_m_gaussian);
    register_module("attention", *local_attention);
  }
  register_module("combine", combine);
  register_module("out", out);
}

std::string LuongSeq2Seq::extra_repr() const {
  std::string s = "src_vocab=" + std::to_string(config.src_vocab) + ", tgt_vocab=" + std::to_string(config.tgt_vocab) +
                  ", embed_dim=" + std::to_string(config.embed_dim) + ", hidden_dim=" +
                  std::to_string(config.hidden_dim) + ", score=" + luong_score_name(config.score) +
                  ", attention=" + luong_attention_name(config.attention);
  if (config.attention != LuongAttention::Global) s += ", window=" + std::to_string(config.window);
  if (config.attention == LuongAttention::LocalM && config.local_m_gaussian) s += ", local_m_gaussian=true";
  if (!config.input_feeding) s += ", input_feeding=false";
  return s;
}

DecoderState LuongSeq2Seq::start(const Index& src, const std::vector<std::size_t>& src_lengths) {
  check_source("LuongSeq2Seq", src, src_lengths);
  Tensor x = src_embed(src);                             // [B, S, E]
  nn::LSTMOutput encoded = encoder(x, {}, src_lengths);  // output h_j [B, S, H]; h, c [1, B, H]
  DecoderState state;
  state.src_lengths = src_lengths;
  state.tensors["memory"] = encoded.output;              // [B, S, H]
  nn::Score& score = global_attention ? global_attention->score() : local_attention->score();
  state.tensors["keys"] = score.precompute_keys(encoded.output);  // W h_j for general, W_h h_j for concat: once
  state.tensors["h"] = select(encoded.h, 0, 0);          // s_0 = h_m: [B, H]
  state.tensors["c"] = select(encoded.c, 0, 0);
  state.tensors["feed"] = zeros({src.shape()[0], config.hidden_dim}, encoded.output.dtype());  // ~s_0 = 0
  return state;
}

Tensor LuongSeq2Seq::decode(DecoderState& state, const Tensor& y_prev, std::size_t t) {
  Tensor x = config.input_feeding ? concat({y_prev, state.tensors.at("feed")}, 1) : y_prev;  // [B, E (+ H)]
  nn::LSTMState s = decoder(x, {state.tensors.at("h"), state.tensors.at("c")});            // s_t: [B, H]
  state.tensors["h"] = s.h;
  state.tensors["c"] = s.c;

  const Tensor& memory = state.tensors.at("memory");                                        // [B, S, H]
  const Index lengths = lengths_index(state.src_lengths);
  Tensor query = unsqueeze(s.h, 1);                                                         // [B, 1, H]
  nn::AttentionOutput a =
      global_attention ? global_attention->forward_precomputed(query, state.tensors.at("keys"), memory,
                                                               nn::padding_mask(lengths, memory.size(1)))
                       : local_attention->forward_precomputed(query, state.tensors.at("keys"), memory, lengths, t);
  Tensor context = select(a.context, 1, 0);                                                 // c_t: [B, H]
  Tensor attentional = tanh(combine(concat({context, s.h}, 1)));                            // ~s_t: [B, H]
  state.tensors["feed"] = attentional;
  state.attention["attention"] = select(a.weights, 1, 0).detach();                         // a_tj: [B, S]
  return attentional;
}

Tensor LuongSeq2Seq::forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) {
  check_source_target("LuongSeq2Seq", src, src_lengths, tgt_in);
  DecoderState state = start(src, src_lengths);
  Tensor attentional = teacher_forced(state, tgt_embed(tgt_in), last_attention_,  // y_{t-1} for every t: [B, T, E]
                                      [this](DecoderState& st, const Tensor& y_prev, std::size_t t) {
                                        return decode(st, y_prev, t);  // ~s_t: [B, H]
                                      });
  return out(attentional);  // [B, T, V]
}

Tensor LuongSeq2Seq::step(DecoderState& state, const Index& prefix) {
  Index last = last_tokens("LuongSeq2Seq::step", prefix, state.tensors.at("h").size(0));  // [B, 1]
  Tensor y_prev = select(tgt_embed(last), 1, 0);                                          // [B, E]
  return out(decode(state, y_prev, prefix.shape()[1] - 1));                              // step t = |prefix| - 1
}

std::map<std::string, Tensor> LuongSeq2Seq::last_attention() const {
  if (!last_attention_.defined()) return {};
  return {{"attention", last_attention_}};
}

}  // namespace attn::models
