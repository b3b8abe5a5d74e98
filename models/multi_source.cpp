#include "multi_source.hpp"

#include "../core/ops.hpp"
#include "../data/vocab.hpp"
#include "checks.hpp"

#include <algorithm>

namespace attn::models {

const char* multi_source_attention_name(MultiSourceAttention attention) {
  return attention == MultiSourceAttention::Separate ? "separate" : "flat";
}

MultiSourceAttention multi_source_attention_from_name(const std::string& name) {
  for (MultiSourceAttention a : {MultiSourceAttention::Separate, MultiSourceAttention::Flat})
    if (name == multi_source_attention_name(a)) return a;
  throw ValueError("multi_source_attention_from_name: unknown attention '" + name + "' (choices: separate, flat)");
}

const char* multi_source_init_name(MultiSourceInit init) {
  return init == MultiSourceInit::Basic ? "basic" : "child-sum";
}

MultiSourceInit multi_source_init_from_name(const std::string& name) {
  for (MultiSourceInit i : {MultiSourceInit::Basic, MultiSourceInit::ChildSum})
    if (name == multi_source_init_name(i)) return i;
  throw ValueError("multi_source_init_from_name: unknown init '" + name + "' (choices: basic, child-sum)");
}

SplitSources split_sources(const Index& src, const std::vector<std::size_t>& src_lengths, std::int64_t sep_id,
                           std::size_t sources) {
  check_source("split_sources", src, src_lengths);
  if (sources == 0) throw ValueError("split_sources: sources must be positive");
  const std::size_t B = src.shape()[0];
  // Each row's sources as lists of ids, cut at the separators.
  std::vector<std::vector<std::vector<std::int64_t>>> rows(B, std::vector<std::vector<std::int64_t>>(1));
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t j = 0; j < src_lengths[b]; ++j) {
      const std::int64_t id = src(b, j);
      if (sources > 1 && id == sep_id) rows[b].emplace_back();
      else rows[b].back().push_back(id);
    }
    if (rows[b].size() != sources)
      throw ValueError("split_sources: row " + std::to_string(b) + " has " + std::to_string(rows[b].size() - 1) +
                       " separators (id " + std::to_string(sep_id) + "), expected " + std::to_string(sources - 1) +
                       " between its " + std::to_string(sources) + " sources");
    for (std::size_t k = 0; k < sources; ++k)
      if (rows[b][k].empty())
        throw ValueError("split_sources: row " + std::to_string(b) + " has an empty source " + std::to_string(k));
  }
  SplitSources out;
  for (std::size_t k = 0; k < sources; ++k) {
    std::size_t width = 0;
    std::vector<std::size_t> lengths;
    for (const auto& row : rows) {
      lengths.push_back(row[k].size());
      width = std::max(width, row[k].size());
    }
    Index ids = xt::zeros<std::int64_t>({B, width});  // [B, S_k], <pad> = 0
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t j = 0; j < rows[b][k].size(); ++j) ids(b, j) = rows[b][k][j];
    out.ids.push_back(std::move(ids));
    out.lengths.push_back(std::move(lengths));
  }
  return out;
}

namespace {

static_assert(data::Vocab::pad_id == 0, "split_sources pads with zeros");

const MultiSourceConfig& checked(const MultiSourceConfig& c) {
  if (c.sources == 0 || c.src_vocab == 0 || c.tgt_vocab == 0 || c.embed_dim == 0 || c.hidden_dim == 0)
    throw ValueError("MultiSourceSeq2Seq: every size in the config must be positive");
  if (c.sources > 1 && (c.sep_id < 0 || std::size_t(c.sep_id) >= c.src_vocab))
    throw ValueError("MultiSourceSeq2Seq: " + std::to_string(c.sources) + " sources need sep_id, the id of <sep> in the " +
                     "packed vocabulary (0.." + std::to_string(c.src_vocab - 1) + "), got " + std::to_string(c.sep_id));
  // Vocab::id gives <unk> for a word it lacks: a <sep> missing from the vocabulary would make
  // every unknown word split its row.
  if (c.sources > 1 && data::Vocab::is_special(c.sep_id))
    throw ValueError("MultiSourceSeq2Seq: sep_id " + std::to_string(c.sep_id) +
                     " is a special id (<pad>, <bos>, <eos>, <unk>): is \"" + "<sep>" + "\" in the packed vocabulary?");
  return c;
}

std::unique_ptr<nn::StateCombiner> make_combiner(const MultiSourceConfig& c) {
  if (c.init == MultiSourceInit::Basic) return std::make_unique<nn::BasicStateCombiner>(c.hidden_dim, c.sources);
  return std::make_unique<nn::ChildSumStateCombiner>(c.hidden_dim, c.sources);
}

// 1 where a row has a word, 0 on padding: [B, S].
Tensor valid_positions(const std::vector<std::size_t>& lengths, std::size_t width) {
  xt::xarray<double> v = xt::zeros<double>({lengths.size(), width});
  for (std::size_t b = 0; b < lengths.size(); ++b)
    for (std::size_t j = 0; j < lengths[b]; ++j) v(b, j) = 1.0;
  return Tensor(v);
}

Mask padding_of(const Tensor& valid) { return xt::equal(valid.to_array(), 0.0); }  // true on padding: [B, S]

std::string key(const char* name, std::size_t k) { return std::string(name) + "." + std::to_string(k); }

// |x| per row of x [B, H] -> [B, 1].
Tensor row_norm(const Tensor& x) { return sqrt(sum(x * x, {1}, /*keepdim=*/true)); }

}  // namespace

MultiSourceSeq2Seq::MultiSourceSeq2Seq(const MultiSourceConfig& cfg)
    : Seq2Seq("MultiSourceSeq2Seq"),
      config(checked(cfg)),
      src_embed(cfg.src_vocab, cfg.embed_dim, data::Vocab::pad_id),
      tgt_embed(cfg.tgt_vocab, cfg.embed_dim, data::Vocab::pad_id),
      combiner(make_combiner(cfg)),
      decoder(cfg.embed_dim + cfg.hidden_dim, cfg.hidden_dim),
      combine(((cfg.attention == MultiSourceAttention::Separate ? cfg.sources : 1) + 1) * cfg.hidden_dim, cfg.hidden_dim,
              /*bias=*/false),
      out(cfg.hidden_dim, cfg.tgt_vocab) {
  register_module("src_embed", src_embed);
  register_module("tgt_embed", tgt_embed);
  for (std::size_t k = 0; k < cfg.sources; ++k) encoders.emplace_back(cfg.embed_dim, cfg.hidden_dim, nn::batch_first());
  register_module("encoders", encoders);
  register_module("combiner", *combiner);
  const std::size_t n_attentions = cfg.attention == MultiSourceAttention::Separate ? cfg.sources : 1;
  for (std::size_t k = 0; k < n_attentions; ++k)
    attentions.emplace_back(std::make_unique<nn::GeneralScore>(cfg.hidden_dim, cfg.hidden_dim));
  register_module("attentions", attentions);
  register_module("decoder", decoder);
  register_module("combine", combine);
  register_module("out", out);
}

std::string MultiSourceSeq2Seq::extra_repr() const {
  return "sources=" + std::to_string(config.sources) + ", src_vocab=" + std::to_string(config.src_vocab) +
         ", tgt_vocab=" + std::to_string(config.tgt_vocab) + ", embed_dim=" + std::to_string(config.embed_dim) +
         ", hidden_dim=" + std::to_string(config.hidden_dim) +
         ", attention=" + multi_source_attention_name(config.attention) + ", init=" + multi_source_init_name(config.init);
}

DecoderState MultiSourceSeq2Seq::start(const Index& src, const std::vector<std::size_t>& src_lengths) {
  const SplitSources split = split_sources(src, src_lengths, config.sep_id, config.sources);
  DecoderState state;
  state.src_lengths = split.lengths[0];  // those of "source.0", the main attention
  std::vector<nn::LSTMState> finals;
  std::vector<Tensor> memories, valids;
  for (std::size_t k = 0; k < config.sources; ++k) {
    Tensor x = src_embed(split.ids[k]);                                         // [B, S_k, E]
    nn::LSTMOutput encoded = encoders[k](x, {}, split.lengths[k]);              // h^k_j [B, S_k, H]; h, c [1, B, H]
    finals.push_back({select(encoded.h, 0, 0), select(encoded.c, 0, 0)});       // [B, H] each
    memories.push_back(encoded.output);
    valids.push_back(valid_positions(split.lengths[k], split.ids[k].shape()[1]));  // [B, S_k]
    state.tensors[key("valid", k)] = valids.back();
    if (config.attention == MultiSourceAttention::Separate) {
      state.tensors[key("memory", k)] = encoded.output;
      state.tensors[key("keys", k)] = attentions[k].score().precompute_keys(encoded.output);  // W_k h^k_j, once
    }
  }
  if (config.attention == MultiSourceAttention::Flat) {
    state.tensors["memory"] = concat(memories, 1);                                // [B, S_1 + ... + S_K, H]
    state.tensors["keys"] = attentions[0].score().precompute_keys(state.tensors["memory"]);
  }
  nn::LSTMState s0 = (*combiner)(finals);                                        // s_0, c_0: [B, H]
  state.tensors["h"] = s0.h;
  state.tensors["c"] = s0.c;
  state.tensors["feed"] = zeros({src.shape()[0], config.hidden_dim}, s0.h.dtype());  // ~s_0 = 0
  return state;
}

Tensor MultiSourceSeq2Seq::decode(DecoderState& state, const Tensor& y_prev) {
  nn::LSTMState s = decoder(concat({y_prev, state.tensors.at("feed")}, 1),        // [B, E + H]
                            {state.tensors.at("h"), state.tensors.at("c")});    // s_t: [B, H]
  state.tensors["h"] = s.h;
  state.tensors["c"] = s.c;
  Tensor query = unsqueeze(s.h, 1);                                              // [B, 1, H]
  const std::size_t K = config.sources, H = config.hidden_dim;
  std::vector<Tensor> shares;                                                    // K of [B, 1]
  Tensor attentional;
  if (config.attention == MultiSourceAttention::Separate) {
    std::vector<Tensor> parts;                                                   // c^1_t, ..., c^K_t, s_t
    for (std::size_t k = 0; k < K; ++k) {
      const Tensor& valid = state.tensors.at(key("valid", k));
      nn::AttentionOutput a = attentions[k].forward_precomputed(query, state.tensors.at(key("keys", k)),
                                                                state.tensors.at(key("memory", k)), padding_of(valid));
      parts.push_back(select(a.context, 1, 0));                                  // c^k_t: [B, H]
      state.attention[key("source", k)] = select(a.weights, 1, 0).detach();      // a^k_tj: [B, S_k]
      const Tensor w_k = narrow(combine.weight.detach(), 1, long(k * H), H);     // W_c^k: [H, H]
      shares.push_back(row_norm(matmul(parts.back().detach(), transpose(w_k, 0, 1))));  // |W_c^k c^k_t|: [B, 1]
    }
    parts.push_back(s.h);
    attentional = tanh(combine(concat(parts, 1)));                               // ~s_t: [B, H]
  } else {
    std::vector<Tensor> valids;
    for (std::size_t k = 0; k < K; ++k) valids.push_back(state.tensors.at(key("valid", k)));
    nn::AttentionOutput a = attentions[0].forward_precomputed(query, state.tensors.at("keys"), state.tensors.at("memory"),
                                                              padding_of(concat(valids, 1)));
    Tensor weights = select(a.weights, 1, 0).detach();                            // a_tj over all sources: [B, S]
    std::size_t offset = 0;
    for (std::size_t k = 0; k < K; ++k) {
      const std::size_t width = valids[k].size(1);
      state.attention[key("source", k)] = narrow(weights, 1, offset, width);       // source k's slice: [B, S_k]
      shares.push_back(sum(state.attention[key("source", k)], {1}, true));        // its mass: [B, 1]
      offset += width;
    }
    attentional = tanh(combine(concat({select(a.context, 1, 0), s.h}, 1)));      // ~s_t: [B, H]
  }
  Tensor share = concat(shares, 1);                                              // [B, K]
  // (+1e-30: a separate model whose contexts all vanish, e.g. W_c zeroed, shares 0, not NaN)
  state.attention["share"] = share / (sum(share, {1}, true) + 1e-30);
  state.tensors["feed"] = attentional;
  return attentional;
}

Tensor MultiSourceSeq2Seq::forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) {
  check_source_target("MultiSourceSeq2Seq", src, src_lengths, tgt_in);
  DecoderState state = start(src, src_lengths);
  const Tensor y = tgt_embed(tgt_in);                                            // y_{t-1} for every t: [B, T, E]
  std::vector<Tensor> features;
  std::map<std::string, std::vector<Tensor>> per_step;
  for (std::size_t t = 0; t < y.size(1); ++t) {
    features.push_back(decode(state, select(y, 1, long(t))));                    // ~s_t: [B, H]
    for (const auto& [name, weights] : state.attention) per_step[name].push_back(weights);
  }
  last_attention_.clear();
  for (const auto& [name, steps] : per_step) last_attention_[name] = stack(steps, 1);  // [B, T, S_k] or [B, T, K]
  return out(stack(features, 1));                                                // [B, T, V]
}

Tensor MultiSourceSeq2Seq::step(DecoderState& state, const Index& prefix) {
  Index last = last_tokens("MultiSourceSeq2Seq::step", prefix, state.tensors.at("h").size(0));  // [B, 1]
  return out(decode(state, select(tgt_embed(last), 1, 0)));                                   // [B, V]
}

std::map<std::string, Tensor> MultiSourceSeq2Seq::last_attention() const { return last_attention_; }

}  // namespace attn::models
