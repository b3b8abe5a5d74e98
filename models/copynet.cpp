#include "copynet.hpp"

#include "../core/ops.hpp"
#include "../nn/attention/masks.hpp"
#include "checks.hpp"

#include <xtensor/xview.hpp>

#include <limits>
#include <memory>
#include <string>

namespace attn::models {

namespace {

constexpr const char* kName = "CopyNetSeq2Seq";

EncoderSizes encoder_sizes(const CopyNetConfig& c) {
  if (c.attention_dim == 0) throw ValueError("CopyNetSeq2Seq: every size in the config must be positive");
  return {c.src_vocab, c.tgt_vocab, c.embed_dim, c.encoder_dim, c.decoder_dim};
}

bool reads_selectively(const CopyNetConfig& c) { return c.copy && c.selective_read; }

// The decoder's input: e(y_{t-1}), the selective read zeta_t (with it), the attentive read c_t.
std::size_t decoder_input(const CopyNetConfig& c) {
  return c.embed_dim + (reads_selectively(c) ? 4 : 2) * c.encoder_dim;
}

// The copy_ids a state holds as numbers, back to ids: [B, S].
Index copy_ids_of(const DecoderState& state) { return xt::cast<std::int64_t>(state.tensors.at("copy_ids").to_array()); }

// log p(y) over the extended vocabulary from the log-probabilities of the slots of one softmax:
// the V generate slots, then the S copy slots. [B, T, V + S] -> [B, T, E]:
//   p(y) = p_g(y) [y < V] + sum_{j: copy_ids_j = y} p_c(j)
// An id with no mass in a row gets log(FLT_MIN): finite, so its gradient (never a target's) stays finite.
Tensor mixture(const Tensor& slot_log_probs, const Index& copy_ids, std::size_t V, std::size_t extended_vocab) {
  const std::size_t B = slot_log_probs.size(0), T = slot_log_probs.size(1), S = copy_ids.shape()[1];
  const Tensor p = exp(slot_log_probs);                                         // [B, T, V + S]
  Tensor gen = narrow(p, 2, 0, V);                                              // p_g: [B, T, V]
  if (extended_vocab > V) gen = concat({gen, zeros({B, T, extended_vocab - V}, p.dtype())}, 2);  // [B, T, E]
  const Tensor where = one_hot(copy_ids, extended_vocab, p.dtype());            // [B, S, E]
  const Tensor copied = matmul(narrow(p, 2, V, S), where);                      // [B, T, S] x [B, S, E] -> [B, T, E]
  return log(gen + copied + double(std::numeric_limits<float>::min()));
}

}  // namespace

CopyNetSeq2Seq::CopyNetSeq2Seq(const CopyNetConfig& cfg)
    : BidirectionalEncoderSeq2Seq(kName, encoder_sizes(cfg)),
      config(cfg),
      attention(std::make_unique<nn::AdditiveScore>(cfg.decoder_dim, 2 * cfg.encoder_dim, cfg.attention_dim)),
      decoder(decoder_input(cfg), cfg.decoder_dim),
      generate(cfg.decoder_dim + 2 * cfg.encoder_dim + cfg.embed_dim, cfg.tgt_vocab) {
  register_module("attention", attention);
  register_module("decoder", decoder);
  register_module("generate", generate);
  if (cfg.copy) {
    copy_key = std::make_unique<nn::Linear>(2 * cfg.encoder_dim, cfg.decoder_dim, /*bias=*/false);
    register_module("copy_key", *copy_key);
  }
  copy_map_ = copying::default_map(cfg.src_vocab, cfg.tgt_vocab);
}

void CopyNetSeq2Seq::set_copy_map(const data::Vocab& src_vocab, const data::Vocab& tgt_vocab) {
  copy_map_ = copying::map_from(src_vocab, tgt_vocab, config.src_vocab, config.tgt_vocab, "CopyNetSeq2Seq::set_copy_map");
}

std::string CopyNetSeq2Seq::extra_repr() const {
  return "src_vocab=" + std::to_string(config.src_vocab) + ", tgt_vocab=" + std::to_string(config.tgt_vocab) +
         ", embed_dim=" + std::to_string(config.embed_dim) + ", encoder_dim=" + std::to_string(config.encoder_dim) +
         ", decoder_dim=" + std::to_string(config.decoder_dim) + ", attention_dim=" +
         std::to_string(config.attention_dim) + ", copy=" + (config.copy ? "true" : "false") +
         ", selective_read=" + (reads_selectively(config) ? "true" : "false");
}

DecoderState CopyNetSeq2Seq::start_with(const Index& src, const std::vector<std::size_t>& src_lengths,
                                        const Index& copy_ids, std::size_t extended_vocab) {
  Encoded encoded = encode(src, src_lengths);
  const Dtype dtype = encoded.start.dtype();
  const std::size_t B = src.shape()[0], S = src.shape()[1];
  DecoderState state;
  state.src_lengths = src_lengths;
  state.tensors["memory"] = encoded.memory;                                    // h_j: [B, S, 2 He]
  state.tensors["keys"] = attention.score().precompute_keys(encoded.memory);  // W_2 h_j: [B, S, A]
  state.tensors["h"] = encoded.start;                                          // s_0: [B, Hd]
  state.tensors["c"] = zeros({B, config.decoder_dim}, dtype);                  // [B, Hd]
  if (config.copy) {
    state.tensors["copy_keys"] = tanh((*copy_key)(encoded.memory));            // tanh(W_c h_j): [B, S, Hd]
    state.tensors["copy_ids"] = Tensor(xt::xarray<double>(xt::cast<double>(copy_ids)));  // [B, S]
    state.tensors["extended_vocab"] = full({B}, double(extended_vocab));       // [B]
    state.tensors["copy_scores"] = zeros({B, S}, dtype);                       // psi_c of no step yet: [B, S]
  }
  return state;
}

DecoderState CopyNetSeq2Seq::start(const Index& src, const std::vector<std::size_t>& src_lengths) {
  check_source(kName, src, src_lengths);
  return start_with(src, src_lengths, copying::map_source(src, copy_map_, kName), config.tgt_vocab);
}

DecoderState CopyNetSeq2Seq::start_extended(const Index& src, const std::vector<std::size_t>& src_lengths,
                                            const ExtendedSource& extended) {
  if (!config.copy) throw ValueError("CopyNetSeq2Seq: the extended vocabulary needs the copy mode (copy = true)");
  check_source(kName, src, src_lengths);
  copying::check_extended(src, extended, kName);
  return start_with(src, src_lengths, extended.copy_ids, extended.extended_vocab);
}

Tensor CopyNetSeq2Seq::decode(DecoderState& state, const Index& y_prev) {
  const Tensor& memory = state.tensors.at("memory");                                   // h_j: [B, S, 2 He]
  const std::size_t S = memory.size(1);
  const Mask padding = nn::padding_mask(lengths_index(state.src_lengths), S);          // [B, S], true = padding
  const Tensor y = tgt_embed(copying::clamp_to_vocab(y_prev, config.tgt_vocab));      // e(y_{t-1}): [B, E]

  // The attentive read, from s_{t-1}.
  const Tensor query = unsqueeze(state.tensors.at("h"), 1);                            // [B, 1, Hd]
  nn::AttentionOutput a = attention.forward_precomputed(query, state.tensors.at("keys"), memory, padding);
  const Tensor weights = select(a.weights, 1, 0);                                      // a_tj: [B, S]
  const Tensor context = select(a.context, 1, 0);                                      // c_t: [B, 2 He]
  state.attention["attention"] = weights.detach();

  // The selective read: the last step's copy scores over the positions that hold y_{t-1}.
  std::vector<Tensor> input{y};
  if (reads_selectively(config)) {
    const Index copy_ids = copy_ids_of(state);
    Mask elsewhere = padding;                                                          // [B, S], true = not read
    for (std::size_t b = 0; b < elsewhere.shape()[0]; ++b)
      for (std::size_t j = 0; j < S; ++j) elsewhere(b, j) = elsewhere(b, j) || copy_ids(b, j) != y_prev(b);
    const Tensor rho = nn::masked_softmax(state.tensors.at("copy_scores"), elsewhere);  // rho_tj, 0 without a match: [B, S]
    input.push_back(select(matmul(unsqueeze(rho, 1), memory), 1, 0));                 // zeta_t: [B, 1, S] x [B, S, 2 He] -> [B, 2 He]
    state.attention["selective_read"] = rho.detach();
  }
  input.push_back(context);
  nn::LSTMState s = decoder(concat(input, 1), {state.tensors.at("h"), state.tensors.at("c")});
  state.tensors["h"] = s.h;                                                            // s_t: [B, Hd]
  state.tensors["c"] = s.c;

  const Tensor psi_g = generate(concat({s.h, context, y}, 1));                         // [B, Hd + 2 He + E] -> [B, V]
  if (!config.copy) return log_softmax(psi_g, -1);                                     // [B, V]
  // psi_c(x_j) = tanh(W_c h_j)^T s_t:  [B, S, Hd] x [B, Hd, 1] -> [B, S]
  const Tensor psi_c = select(matmul(state.tensors.at("copy_keys"), unsqueeze(s.h, 2)), 2, 0);
  state.tensors["copy_scores"] = psi_c;                                                // the next step's selective read
  // One softmax over the generate slots and the copy slots (padding never copied): [B, V + S].
  const Tensor slots = log_softmax(concat({psi_g, masked_fill(psi_c, padding, nn::kBlockedScore)}, 1), -1);
  state.attention["copy"] = exp(narrow(slots, 1, long(config.tgt_vocab), S)).detach();  // p(x_j, c): [B, S]
  return slots;
}

Tensor CopyNetSeq2Seq::teacher_forced_slots(DecoderState& state, const Index& tgt_in) {
  std::vector<Tensor> steps;
  std::map<std::string, std::vector<Tensor>> weights;
  for (std::size_t t = 0; t < tgt_in.shape()[1]; ++t) {
    steps.push_back(decode(state, xt::view(tgt_in, xt::all(), t)));  // y_{t-1} [B] -> [B, V + S] (or [B, V])
    for (const auto& [name, w] : state.attention) weights[name].push_back(w);
  }
  last_weights_.clear();
  for (const auto& [name, w] : weights) last_weights_[name] = stack(w, 1);  // [B, T, S]
  last_attention_ = last_weights_.at("attention");
  return stack(steps, 1);                                                   // [B, T, V + S] (or [B, T, V])
}

Tensor CopyNetSeq2Seq::forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) {
  check_source_target(kName, src, src_lengths, tgt_in);
  DecoderState state = start(src, src_lengths);
  const Tensor out = teacher_forced_slots(state, tgt_in);  // [B, T, V + S] (or [B, T, V])
  if (!config.copy) return out;
  return mixture(out, copy_ids_of(state), config.tgt_vocab, config.tgt_vocab);  // [B, T, V]
}

Tensor CopyNetSeq2Seq::forward_extended(const Index& src, const std::vector<std::size_t>& src_lengths,
                                        const Index& tgt_in, const ExtendedSource& extended) {
  DecoderState state = start_extended(src, src_lengths, extended);
  if (tgt_in.dimension() != 2 || tgt_in.shape()[0] != src.shape()[0] || tgt_in.shape()[1] == 0)
    throw ShapeError("CopyNetSeq2Seq: expected tgt_in [" + std::to_string(src.shape()[0]) + ", T >= 1], got " +
                     shape_str(Shape(tgt_in.shape().begin(), tgt_in.shape().end())));
  for (std::int64_t id : tgt_in)
    if (id < 0 || std::size_t(id) >= extended.extended_vocab)
      throw ValueError("CopyNetSeq2Seq: tgt_in holds id " + std::to_string(id) + ", outside the extended vocabulary 0.." +
                       std::to_string(extended.extended_vocab - 1));
  return mixture(teacher_forced_slots(state, tgt_in), extended.copy_ids, config.tgt_vocab,
                 extended.extended_vocab);  // [B, T, V + S] -> [B, T, V + n]
}

Tensor CopyNetSeq2Seq::step(DecoderState& state, const Index& prefix) {
  const std::size_t B = state.tensors.at("h").size(0);
  const Index last = last_tokens("CopyNetSeq2Seq::step", prefix, B);                  // [B, 1]
  const Tensor slots = decode(state, xt::view(last, xt::all(), 0));                   // [B, V + S] (or [B, V])
  if (!config.copy) return slots;
  const Tensor p = mixture(unsqueeze(slots, 1), copy_ids_of(state), config.tgt_vocab,
                           std::size_t(state.tensors.at("extended_vocab").to_array()(0)));  // [B, 1, E]
  return select(p, 1, 0);                                                              // [B, E]
}

std::map<std::string, Tensor> CopyNetSeq2Seq::last_attention() const { return last_weights_; }

}  // namespace attn::models
