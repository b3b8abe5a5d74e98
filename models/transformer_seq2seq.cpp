#include "transformer_seq2seq.hpp"

#include "../core/ops.hpp"
#include "../nn/init.hpp"
#include "checks.hpp"
#include "../data/vocab.hpp"

#include <xtensor/xview.hpp>

#include <cmath>
#include <sstream>
#include <string>

namespace attn::models {

namespace {

const TransformerConfig& checked(const TransformerConfig& c) {
  if (c.src_vocab == 0 || c.tgt_vocab == 0 || c.d_model == 0 || c.nhead == 0 || c.dim_feedforward == 0 ||
      c.max_len == 0)
    throw ValueError("TransformerSeq2Seq: vocabulary sizes, d_model, nhead, dim_feedforward and max_len must be positive");
  if (c.num_kv_heads != 0 && c.nhead % c.num_kv_heads != 0)
    throw ValueError("TransformerSeq2Seq: num_kv_heads (" + std::to_string(c.num_kv_heads) +
                     ") must divide nhead (" + std::to_string(c.nhead) + "), or be 0 for one per head");
  return c;
}

// N(0, 1 / d_model), the padding row back at 0: scaled by sqrt(d_model), a unit-size vector.
void init_embedding(nn::Embedding& embedding, std::size_t d_model, Generator& gen) {
  nn::init::normal_(embedding.weight, 0.0, 1.0 / std::sqrt(static_cast<double>(d_model)), gen);
  xt::row(embedding.weight.data<double>(), data::Vocab::pad_id) = 0.0;
}

std::string layer_name(const char* stack, std::size_t l, const char* kind) {
  return std::string(stack) + "." + std::to_string(l) + "." + kind;
}

}  // namespace

TransformerConfig TransformerConfig::paper(std::size_t src_vocab, std::size_t tgt_vocab) {
  TransformerConfig c;
  c.src_vocab = src_vocab;
  c.tgt_vocab = tgt_vocab;
  c.d_model = 512;
  c.nhead = 8;
  c.num_encoder_layers = c.num_decoder_layers = 6;
  c.dim_feedforward = 2048;
  c.dropout = 0.1;
  return c;
}

TransformerSeq2Seq::TransformerSeq2Seq(const TransformerConfig& cfg, Generator& gen)
    : Seq2Seq("TransformerSeq2Seq"),
      config(checked(cfg)),
      src_embed(cfg.src_vocab, cfg.d_model, data::Vocab::pad_id, gen),
      tgt_embed(cfg.tgt_vocab, cfg.d_model, data::Vocab::pad_id, gen),
      dropout(cfg.dropout, gen),
      transformer(cfg.d_model, cfg.nhead, nn::GroupedQuery{cfg.num_kv_heads ? cfg.num_kv_heads : cfg.nhead},
                  cfg.num_encoder_layers, cfg.num_decoder_layers, cfg.dim_feedforward, cfg.dropout, cfg.activation,
                  1e-5, cfg.norm_first, gen) {
  for (std::size_t l = 0; l < transformer.decoder.layers.size(); ++l) {
    transformer.decoder.layers[l].self_attn.window = cfg.window;
    transformer.decoder.layers[l].self_attn.position = cfg.attention_position;
  }
  for (std::size_t l = 0; l < transformer.encoder.layers.size(); ++l)
    transformer.encoder.layers[l].self_attn.position = cfg.attention_position;
  init_embedding(src_embed, cfg.d_model, gen);
  init_embedding(tgt_embed, cfg.d_model, gen);
  register_module("src_embed", src_embed);
  register_module("tgt_embed", tgt_embed);
  if (!cfg.add_positions) {
    // No added encoding: positions come from the attention (attention_position), or not at all.
  } else if (cfg.learned_positions) {
    learned = std::make_unique<nn::LearnedPositionalEncoding>(cfg.max_len, cfg.d_model, gen);
    register_module("positions", *learned);
  } else {
    sinusoidal = std::make_unique<nn::SinusoidalPositionalEncoding>(cfg.d_model, cfg.max_len);
    register_module("positions", *sinusoidal);
  }
  register_module("dropout", dropout);
  register_module("transformer", transformer);
  if (!cfg.tie_weights) {
    out = std::make_unique<nn::Linear>(cfg.d_model, cfg.tgt_vocab, true, gen);
    register_module("out", *out);
  }
}

Tensor TransformerSeq2Seq::add_positions(const Tensor& x, std::size_t offset) {
  if (learned) return (*learned)(x, offset);  // [B, T, D] + P[offset : offset + T]
  if (sinusoidal) return (*sinusoidal)(x, offset);
  return x;
}

Tensor TransformerSeq2Seq::embed_source(const Index& src) {
  const double scale = std::sqrt(static_cast<double>(config.d_model));
  return dropout(add_positions(src_embed(src) * scale));  // [B, S, D]
}

Tensor TransformerSeq2Seq::embed_target(const Index& tgt, std::size_t offset) {
  const double scale = std::sqrt(static_cast<double>(config.d_model));
  return dropout(add_positions(tgt_embed(tgt) * scale, offset));  // [B, T, D]
}

Tensor TransformerSeq2Seq::encode(const Index& src, const std::vector<std::size_t>& src_lengths) {
  Mask padding = nn::padding_mask(lengths_index(src_lengths), src.shape()[1]);  // [B, S], true = padding
  return transformer.encoder(embed_source(src), std::nullopt, padding);          // [B, S, D]
}

Tensor TransformerSeq2Seq::decode(const Index& tgt, const Tensor& memory, const std::vector<std::size_t>& src_lengths) {
  Mask padding = nn::padding_mask(lengths_index(src_lengths), memory.size(1));  // [B, S]
  Mask causal = nn::causal_mask(tgt.shape()[1]);                                // [T, T]
  return transformer.decoder(embed_target(tgt), memory, causal, std::nullopt, std::nullopt, padding);  // [B, T, D]
}

Tensor TransformerSeq2Seq::project(const Tensor& h) {
  return out ? (*out)(h) : linear(h, tgt_embed.weight);  // [..., V]
}

Tensor TransformerSeq2Seq::forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) {
  check_source_target("TransformerSeq2Seq", src, src_lengths, tgt_in);
  Tensor memory = encode(src, src_lengths);            // [B, S, D]
  Tensor h = decode(tgt_in, memory, src_lengths);      // [B, T, D]
  last_attention_.clear();
  for (std::size_t l = 0; l < transformer.encoder.layers.size(); ++l)
    last_attention_[layer_name("encoder", l, "self")] = transformer.encoder.layers[l].self_attention_weights();
  for (std::size_t l = 0; l < transformer.decoder.layers.size(); ++l) {
    const nn::TransformerDecoderLayer& layer = transformer.decoder.layers[l];
    last_attention_[layer_name("decoder", l, "self")] = layer.self_attention_weights();    // [B, H, T, T]
    last_attention_[layer_name("decoder", l, "cross")] = layer.cross_attention_weights();  // [B, H, T, S]
  }
  if (!transformer.decoder.layers.empty())  // the last layer's cross-attention, averaged over heads: [B, T, S]
    last_attention_["attention"] = mean(last_attention_.at(main_cross()), {1});
  return project(h);  // [B, T, V]
}

DecoderState TransformerSeq2Seq::start(const Index& src, const std::vector<std::size_t>& src_lengths) {
  check_source("TransformerSeq2Seq", src, src_lengths);
  DecoderState state;
  state.src_lengths = src_lengths;
  state.tensors["memory"] = encode(src, src_lengths);  // [B, S, D]
  return state;
}

Tensor TransformerSeq2Seq::step(DecoderState& state, const Index& prefix) {
  const Tensor& memory = state.tensors.at("memory");
  const std::size_t B = memory.size(0);
  if (prefix.dimension() != 2 || prefix.shape()[0] != B || prefix.shape()[1] == 0)
    throw ShapeError("TransformerSeq2Seq::step: expected prefix [" + std::to_string(B) + ", t] with t >= 1, got " +
                     shape_str(Shape(prefix.shape().begin(), prefix.shape().end())));
  if (use_kv_cache) return step_cached(state, prefix);
  const long last = static_cast<long>(prefix.shape()[1]) - 1;
  Tensor h = decode(prefix, memory, state.src_lengths);  // [B, t, D]: the whole prefix again
  state.attention.clear();
  for (std::size_t l = 0; l < transformer.decoder.layers.size(); ++l) {
    const nn::TransformerDecoderLayer& layer = transformer.decoder.layers[l];
    // The last query's row: what the new token looked at.
    state.attention[layer_name("decoder", l, "self")] = select(layer.self_attention_weights(), 2, last);    // [B, H, t]
    state.attention[layer_name("decoder", l, "cross")] = select(layer.cross_attention_weights(), 2, last);  // [B, H, S]
  }
  if (!transformer.decoder.layers.empty()) state.attention["attention"] = mean(state.attention.at(main_cross()), {1});  // [B, S]
  return project(select(h, 1, last));  // [B, D] -> [B, V]
}

namespace {

// Where step_cached keeps its cache in a DecoderState: batch-first tensors, so beam search's
// select_rows reorders them with the hypotheses. "kv.prefix" holds the cached tokens (as numbers).
std::string kv_name(std::size_t l, const char* attention, const char* part) {
  return "kv." + std::to_string(l) + "." + attention + "." + part;
}

nn::KVCache load(const DecoderState& state, std::size_t l, const char* attention) {
  const auto key = state.tensors.find(kv_name(l, attention, "key"));
  if (key == state.tensors.end()) return {};
  return {key->second, state.tensors.at(kv_name(l, attention, "value"))};
}

void store(DecoderState& state, std::size_t l, const char* attention, const nn::KVCache& kv) {
  state.tensors[kv_name(l, attention, "key")] = kv.key;
  state.tensors[kv_name(l, attention, "value")] = kv.value;
}

// Whether the cache holds exactly prefix's first t - 1 tokens.
bool cache_matches(const DecoderState& state, const Index& prefix) {
  const auto cached = state.tensors.find("kv.prefix");
  const std::size_t t = prefix.shape()[1];
  if (cached == state.tensors.end()) return t == 1;
  const xt::xarray<double> tokens = cached->second.to_array();  // [B, t_cached]
  if (tokens.shape()[1] != t - 1) return false;
  for (std::size_t b = 0; b < tokens.shape()[0]; ++b)
    for (std::size_t j = 0; j + 1 < t; ++j)
      if (tokens(b, j) != static_cast<double>(prefix(b, j))) return false;
  return true;
}

Tensor as_tensor(const Index& tokens) { return Tensor(xt::xarray<double>(xt::cast<double>(tokens))); }

}  // namespace

void TransformerSeq2Seq::fill_cache(DecoderState& state, const Index& tokens) {
  // Everything cached before is dropped; the memory's keys and values stay.
  for (auto it = state.tensors.begin(); it != state.tensors.end();)
    it = it->first.find(".self.") != std::string::npos || it->first == "kv.prefix" ? state.tensors.erase(it)
                                                                                     : std::next(it);
  if (tokens.shape()[1] == 0) return;
  const Tensor& memory = state.tensors.at("memory");
  Mask padding = nn::padding_mask(lengths_index(state.src_lengths), memory.size(1));  // [B, S]
  Tensor x = embed_target(tokens);  // [B, n, D]
  for (std::size_t l = 0; l < transformer.decoder.layers.size(); ++l) {
    nn::TransformerDecoderLayer& layer = transformer.decoder.layers[l];
    nn::KVCache self, memory_kv = load(state, l, "cross");
    if (!memory_kv.key.defined()) store(state, l, "cross", memory_kv = layer.multihead_attn.project_kv(memory, memory));
    x = layer.forward_step(x, self, memory_kv, padding);  // [B, n, D]; self: n positions
    store(state, l, "self", self);
  }
  state.tensors["kv.prefix"] = as_tensor(tokens);  // [B, n]
}

Tensor TransformerSeq2Seq::step_cached(DecoderState& state, const Index& prefix) {
  const std::size_t t = prefix.shape()[1];
  if (!cache_matches(state, prefix)) fill_cache(state, xt::view(prefix, xt::all(), xt::range(0, t - 1)));
  const Tensor& memory = state.tensors.at("memory");
  Mask padding = nn::padding_mask(lengths_index(state.src_lengths), memory.size(1));  // [B, S]
  Index newest = xt::view(prefix, xt::all(), xt::range(t - 1, t));                    // [B, 1]
  Tensor x = embed_target(newest, t - 1);                                              // [B, 1, D] at position t - 1
  state.attention.clear();
  for (std::size_t l = 0; l < transformer.decoder.layers.size(); ++l) {
    nn::TransformerDecoderLayer& layer = transformer.decoder.layers[l];
    nn::KVCache self = load(state, l, "self"), memory_kv = load(state, l, "cross");
    self.start = t - 1 - self.length();  // positions before it were dropped (a sliding window)
    if (!memory_kv.key.defined()) store(state, l, "cross", memory_kv = layer.multihead_attn.project_kv(memory, memory));
    x = layer.forward_step(x, self, memory_kv, padding);  // [B, 1, D]; self: t positions now
    store(state, l, "self", self);
    // The new token's rows: what it looked at.
    state.attention[layer_name("decoder", l, "self")] = select(layer.self_attention_weights(), 2, 0);    // [B, H, t]
    state.attention[layer_name("decoder", l, "cross")] = select(layer.cross_attention_weights(), 2, 0);  // [B, H, S]
  }
  state.tensors["kv.prefix"] = t == 1 ? as_tensor(newest) : concat({state.tensors.at("kv.prefix"), as_tensor(newest)}, 1);
  if (!transformer.decoder.layers.empty()) state.attention["attention"] = mean(state.attention.at(main_cross()), {1});  // [B, S]
  Tensor h = transformer.decoder.norm ? (*transformer.decoder.norm)(x) : x;  // [B, 1, D]
  return project(select(h, 1, 0));                                           // [B, D] -> [B, V]
}

std::map<std::string, Tensor> TransformerSeq2Seq::last_attention() const { return last_attention_; }

std::string TransformerSeq2Seq::main_attention() const {
  return transformer.decoder.layers.empty() ? "" : "attention";
}

std::string TransformerSeq2Seq::main_cross() const {
  return layer_name("decoder", transformer.decoder.layers.size() - 1, "cross");
}

std::string TransformerSeq2Seq::extra_repr() const {
  std::ostringstream os;
  os << "src_vocab=" << config.src_vocab << ", tgt_vocab=" << config.tgt_vocab << ", d_model=" << config.d_model
     << ", nhead=" << config.nhead << ", layers=" << config.num_encoder_layers << "+" << config.num_decoder_layers
     << ", dim_feedforward=" << config.dim_feedforward << ", dropout=" << config.dropout
     << ", norm_first=" << (config.norm_first ? "true" : "false")
     << ", positions=" << (!config.add_positions ? "none" : config.learned_positions ? "learned" : "sinusoidal")
     << ", tie_weights=" << (config.tie_weights ? "true" : "false");
  if (config.num_kv_heads) os << ", num_kv_heads=" << config.num_kv_heads;
  if (config.window) os << ", window=" << config.window;
  if (config.attention_position == nn::AttentionPosition::Rotary) os << ", attention_position=rotary";
  if (config.attention_position == nn::AttentionPosition::ALiBi) os << ", attention_position=alibi";
  return os.str();
}

}  // namespace attn::models
