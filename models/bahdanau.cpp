#include "bahdanau.hpp"

#include "../core/ops.hpp"
#include "checks.hpp"
#include "../data/vocab.hpp"

#include "../nn/init.hpp"

#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include <cmath>
#include <memory>
#include <sstream>
#include <string>

namespace attn::models {

namespace {

EncoderSizes encoder_sizes(const BahdanauConfig& c) {
  if (c.attention_dim == 0) throw ValueError("BahdanauSeq2Seq: every size in the config must be positive");
  return {c.src_vocab, c.tgt_vocab, c.embed_dim, c.encoder_dim, c.decoder_dim};
}

// As PyTorch prints a float setting: 0.001, not std::to_string's 0.001000.
std::string epsilon_str(double eps) {
  std::ostringstream os;
  os << eps;
  return os.str();
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
  if (cfg.coverage_embedding > 0) {
    const std::size_t K = cfg.coverage_embedding;
    coverage_embed = std::make_unique<nn::Embedding>(cfg.src_vocab, K, data::Vocab::pad_id);
    coverage_key = std::make_unique<nn::Linear>(K, cfg.attention_dim, /*bias=*/false);
    coverage_update = std::make_unique<nn::Linear>(cfg.embed_dim, K, /*bias=*/false);
    register_module("coverage_embed", *coverage_embed);
    register_module("coverage_key", *coverage_key);
    register_module("coverage_update", *coverage_update);
  }
  if (cfg.markov) {
    markov_weight = zeros({cfg.attention_dim, 3});
    register_parameter("markov_weight", markov_weight);
    nn::init::uniform_(markov_weight, -1.0 / std::sqrt(3.0), 1.0 / std::sqrt(3.0));  // as nn::Linear(3, A): fan_in = 3
  }
  if (cfg.lexicon_bias) {
    if (!(cfg.lexicon_epsilon > 0) || !std::isfinite(cfg.lexicon_epsilon))
      throw ValueError("BahdanauSeq2Seq: lexicon_epsilon must be positive and finite, got " + std::to_string(cfg.lexicon_epsilon));
    // Uniform until set_lexicon(): the same bias on every word, so the softmax is unchanged. No draw.
    lexicon = full({cfg.src_vocab, cfg.tgt_vocab}, 1.0 / double(cfg.tgt_vocab));
    register_buffer("lexicon", lexicon);
  }
}

void BahdanauSeq2Seq::set_lexicon(const xt::xarray<double>& table) {
  if (!config.lexicon_bias)
    throw ValueError("BahdanauSeq2Seq::set_lexicon: the model was built without lexicon_bias");
  const Shape want{config.src_vocab, config.tgt_vocab};
  if (Shape(table.shape().begin(), table.shape().end()) != want)
    throw ShapeError("BahdanauSeq2Seq::set_lexicon: expected a table [src_vocab, tgt_vocab] = " + shape_str(want) +
                     ", got " + shape_str(Shape(table.shape().begin(), table.shape().end())));
  for (double v : table)
    if (!(v >= 0) || !std::isfinite(v))
      throw ValueError("BahdanauSeq2Seq::set_lexicon: the table holds " + std::to_string(v) +
                       "; probabilities must be finite and not negative");
  // A row is p_lex(. | f): one summing past 1 is not a distribution (a table passed transposed, or counts).
  for (std::size_t f = 0; f < config.src_vocab; ++f) {
    const double sum = xt::sum(xt::view(table, f, xt::all()))();
    if (sum > 1.0 + 1e-6)
      throw ValueError("BahdanauSeq2Seq::set_lexicon: row " + std::to_string(f) + " sums to " + std::to_string(sum) +
                       "; each row p_lex(. | f) must sum to 1 (or less)");
  }
  lexicon = Tensor(table).to(lexicon.dtype());  // the registered buffer, in the model's dtype
}

std::string BahdanauSeq2Seq::extra_repr() const {
  return "src_vocab=" + std::to_string(config.src_vocab) + ", tgt_vocab=" + std::to_string(config.tgt_vocab) +
         ", embed_dim=" + std::to_string(config.embed_dim) + ", encoder_dim=" + std::to_string(config.encoder_dim) +
         ", decoder_dim=" + std::to_string(config.decoder_dim) +
         ", attention_dim=" + std::to_string(config.attention_dim) + (config.coverage ? ", coverage=true" : "") +
         (config.coverage_embedding ? ", coverage_embedding=" + std::to_string(config.coverage_embedding) : "") +
         (config.markov ? ", markov=true" : "") +
         (config.lexicon_bias ? ", lexicon_bias=true, lexicon_epsilon=" + epsilon_str(config.lexicon_epsilon) : "");
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
  if (config.coverage_embedding) state.tensors["coverage_embedding"] = (*coverage_embed)(src);      // kappa_0j = E_kappa[x_j]: [B, S, K]
  if (config.coverage_embedding || config.markov)
    state.tensors["previous_attention"] = zeros({src.shape()[0], src.shape()[1]}, dtype);            // none yet: [B, S]
  if (config.lexicon_bias) {
    const long B = long(src.shape()[0]), S = long(src.shape()[1]);
    Index flat = src;
    flat.reshape({std::size_t(B * S)});                                                               // [B, S] -> [B * S]
    state.tensors["lexicon_rows"] = reshape(index_select(lexicon, 0, flat), {B, S, long(config.tgt_vocab)});  // p_lex(. | x_j): [B, S, V]
  }
  return state;
}

namespace {

// psi_j(a) = [a_{j-1}; a_j; a_{j+1}] for every j, zero past either end: [B, S] -> [B, S, 3].
Tensor markov_window(const Tensor& a) {
  const std::size_t B = a.size(0), S = a.size(1);
  Tensor edge = zeros({B, std::size_t(1)}, a.dtype());
  Tensor padded = concat({edge, a, edge}, 1);                                        // [B, S + 2]
  return stack({narrow(padded, 1, 0, S), narrow(padded, 1, 1, S), narrow(padded, 1, 2, S)}, 2);  // [B, S, 3]
}

}  // namespace

void BahdanauSeq2Seq::spend_coverage(DecoderState& state, const Tensor& y_prev) const {
  // a_{t-1,j} W_y y_{t-1}: [B, S, 1] * [B, 1, K]; before the first step a = 0 and nothing is spent.
  Tensor spent = unsqueeze(state.tensors.at("previous_attention"), 2) * unsqueeze((*coverage_update)(y_prev), 1);
  state.tensors["coverage_embedding"] = state.tensors.at("coverage_embedding") - spent;  // [B, S, K]
}

Tensor BahdanauSeq2Seq::step_keys(const DecoderState& state) const {
  Tensor keys = state.tensors.at("keys");                                              // W_2 h_j: [B, S, A]
  // Each option's term depends on j (and t) but not on the query, so it joins the key side.
  if (config.coverage) keys = keys + unsqueeze(state.tensors.at("coverage"), 2) * coverage_weight;  // [B, S, 1] * [A]
  if (config.coverage_embedding) keys = keys + (*coverage_key)(state.tensors.at("coverage_embedding"));  // U kappa_j: [B, S, A]
  if (config.markov)
    keys = keys + matmul(markov_window(state.tensors.at("previous_attention")), transpose(markov_weight, 0, 1));  // [B, S, 3] x [3, A]
  return keys;
}

Tensor BahdanauSeq2Seq::decode(DecoderState& state, const Tensor& y_prev) {
  const Tensor& memory = state.tensors.at("memory");
  Mask padding = nn::padding_mask(lengths_index(state.src_lengths), memory.size(1));  // [B, S], true = padding
  Tensor query = unsqueeze(state.tensors.at("h"), 1);                                 // s_{t-1}: [B, 1, Hd]
  if (config.coverage_embedding) spend_coverage(state, y_prev);
  nn::AttentionOutput a = attention.forward_precomputed(query, step_keys(state), memory, padding);
  Tensor weights = select(a.weights, 1, 0);                                           // a_tj: [B, S]
  Tensor context = select(a.context, 1, 0);                                           // c_t: [B, 2 * He]
  nn::LSTMState s = decoder(concat({y_prev, context}, 1), {state.tensors.at("h"), state.tensors.at("c")});
  state.tensors["h"] = s.h;                                                           // s_t: [B, Hd]
  state.tensors["c"] = s.c;
  if (config.coverage) state.tensors["coverage"] = state.tensors.at("coverage") + weights;  // C_t: [B, S]
  if (config.coverage_embedding || config.markov) state.tensors["previous_attention"] = weights;
  state.attention["attention"] = weights;   // in the graph: a loss on the weights reaches the model
  return concat({s.h, context, y_prev}, 1);                                           // [B, Hd + 2 He + E]
}

Tensor BahdanauSeq2Seq::forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) {
  check_source_target("BahdanauSeq2Seq", src, src_lengths, tgt_in);
  DecoderState state = start(src, src_lengths);
  Tensor features = teacher_forced(state, tgt_embed(tgt_in), last_attention_,  // y_{t-1} for every t: [B, T, E]
                                   [this](DecoderState& st, const Tensor& y_prev, std::size_t) {
                                     return decode(st, y_prev);  // [s_t; c_t; y_{t-1}]
                                   });
  Tensor logits = out(features);  // [B, T, V]
  // lex_t = sum_j a_tj p_lex(. | x_j):  [B, T, S] x [B, S, V] -> [B, T, V]
  if (config.lexicon_bias)
    logits = logits + log(matmul(last_attention_, state.tensors.at("lexicon_rows")) + config.lexicon_epsilon);
  return logits;
}

Tensor BahdanauSeq2Seq::step(DecoderState& state, const Index& prefix) {
  Index last = last_tokens("BahdanauSeq2Seq::step", prefix, state.tensors.at("h").size(0));  // [B, 1]
  Tensor y_prev = select(tgt_embed(last), 1, 0);                                            // [B, E]
  Tensor logits = out(decode(state, y_prev));                                               // [B, V]
  if (config.lexicon_bias) {
    // lex_t = sum_j a_tj p_lex(. | x_j):  [B, 1, S] x [B, S, V] -> [B, 1, V] -> [B, V]
    Tensor lex = select(matmul(unsqueeze(state.attention.at("attention"), 1), state.tensors.at("lexicon_rows")), 1, 0);
    logits = logits + log(lex + config.lexicon_epsilon);
  }
  return logits;
}

}  // namespace attn::models
