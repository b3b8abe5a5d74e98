#include "las.hpp"

#include "../core/errors.hpp"
#include "../core/ops.hpp"
#include "../data/vocab.hpp"
#include "checks.hpp"

#include <xtensor/xview.hpp>

#include <memory>
#include <sstream>
#include <string>

namespace attn::models {

namespace {

const LASConfig& checked(const LASConfig& c) {
  if (c.n_mels == 0 || c.vocab == 0 || c.listener_dim == 0 || c.embed_dim == 0 || c.speller_dim == 0 ||
      c.speller_layers == 0 || c.attention_dim == 0)
    throw ValueError("ListenAttendSpell: every size in the config must be positive (vocab = " +
                     std::to_string(c.vocab) + ", n_mels = " + std::to_string(c.n_mels) + ", speller_layers = " +
                     std::to_string(c.speller_layers) + ")");
  if (!(c.sampling_probability >= 0.0 && c.sampling_probability <= 1.0))
    throw ValueError("ListenAttendSpell: sampling_probability must be in [0, 1], got " +
                     std::to_string(c.sampling_probability));
  return c;
}

// A character drawn from softmax(logits) for each row: logits [B, V] -> ids [B].
std::vector<std::int64_t> sample_rows(const Tensor& logits, Generator& gen) {
  const xt::xarray<double> p = softmax(logits.detach(), -1).to_array();  // [B, V]
  std::vector<std::int64_t> ids(p.shape()[0]);
  for (std::size_t b = 0; b < ids.size(); ++b) {
    double u = gen.uniform(), total = 0.0;
    std::size_t v = 0;
    while (v + 1 < p.shape()[1] && (total += p(b, v)) <= u) ++v;  // the last class takes any rounding left
    ids[b] = static_cast<std::int64_t>(v);
  }
  return ids;
}

// 0.1 as "0.1", not std::to_string's "0.100000".
std::string shortest(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

ListenAttendSpell::ListenAttendSpell(const LASConfig& cfg)
    : IncrementalDecoder("ListenAttendSpell"),
      config(checked(cfg)),
      listener(cfg.n_mels, cfg.listener_dim, nn::batch_first(/*bidirectional=*/true)),
      embed(cfg.vocab, cfg.embed_dim, data::Vocab::pad_id),
      phi({cfg.speller_dim, cfg.attention_dim, cfg.attention_dim}, nn::Activation::ReLU),
      psi({2 * cfg.listener_dim, cfg.attention_dim, cfg.attention_dim}, nn::Activation::ReLU),
      attention(std::make_unique<nn::DotScore>()),
      distribution({cfg.speller_dim + 2 * cfg.listener_dim, cfg.speller_dim, cfg.vocab}, nn::Activation::ReLU),
      gen_(&default_generator()) {
  for (std::size_t l = 0; l < cfg.pyramid_layers; ++l) pyramid.emplace_back(2 * cfg.listener_dim, cfg.listener_dim);
  for (std::size_t l = 0; l < cfg.speller_layers; ++l)
    speller.emplace_back(l == 0 ? cfg.embed_dim + 2 * cfg.listener_dim : cfg.speller_dim, cfg.speller_dim);
  register_module("listener", listener);
  register_module("pyramid", pyramid);
  register_module("embed", embed);
  register_module("speller", speller);
  register_module("phi", phi);
  register_module("psi", psi);
  register_module("attention", attention);
  register_module("distribution", distribution);
}

std::string ListenAttendSpell::extra_repr() const {
  const LASConfig& c = config;
  return "n_mels=" + std::to_string(c.n_mels) + ", vocab=" + std::to_string(c.vocab) +
         ", listener_dim=" + std::to_string(c.listener_dim) + ", pyramid_layers=" + std::to_string(c.pyramid_layers) +
         ", embed_dim=" + std::to_string(c.embed_dim) + ", speller_dim=" + std::to_string(c.speller_dim) +
         ", speller_layers=" + std::to_string(c.speller_layers) + ", attention_dim=" + std::to_string(c.attention_dim) +
         (c.sampling_probability > 0 ? ", sampling_probability=" + shortest(c.sampling_probability) : "");
}

void ListenAttendSpell::check_features(const char* op, const Tensor& features,
                                       const std::vector<std::size_t>& lengths) const {
  if (features.dim() != 3 || features.size(2) != config.n_mels || features.size(0) == 0 || features.size(1) == 0)
    throw ShapeError(std::string(op) + ": expected features [B, T, " + std::to_string(config.n_mels) +
                     "] with B, T > 0, got shape " + shape_str(features.shape()));
  const std::size_t B = features.size(0), T = features.size(1);
  if (lengths.size() != B)
    throw ValueError(std::string(op) + ": " + std::to_string(B) + " utterances but " + std::to_string(lengths.size()) +
                     " lengths");
  for (std::size_t b = 0; b < B; ++b)
    if (lengths[b] < 1 || lengths[b] > T)
      throw ValueError(std::string(op) + ": every length must be in 1..T (T = " + std::to_string(T) +
                       "), got lengths[" + std::to_string(b) + "] = " + std::to_string(lengths[b]));
}

Listened ListenAttendSpell::listen(const Tensor& features, const std::vector<std::size_t>& lengths) const {
  check_features("ListenAttendSpell::listen", features, lengths);
  Listened r;
  r.layer_lengths.push_back(lengths);
  r.memory = listener(features, {}, lengths).output;  // [B, T, 2 Hl]
  r.lengths = lengths;
  for (const nn::PyramidalLSTM& layer : pyramid) {
    nn::PyramidalOutput p = layer(r.memory, r.lengths);  // [B, T', 2 Hl] -> [B, T'/2, 2 Hl]
    r.memory = p.output;
    r.lengths = p.lengths;
    r.layer_lengths.push_back(r.lengths);
  }
  return r;
}

DecoderState ListenAttendSpell::start(const Tensor& features, const std::vector<std::size_t>& lengths) {
  Listened heard = listen(features, lengths);
  const std::size_t B = features.size(0);
  const Dtype dtype = heard.memory.dtype();
  DecoderState state;
  state.src_lengths = heard.lengths;
  state.tensors["memory"] = heard.memory;                                           // h_u: [B, U, 2 Hl]
  state.tensors["keys"] = psi(heard.memory);                                         // psi(h_u): [B, U, A], once
  state.tensors["context"] = zeros({B, 2 * config.listener_dim}, dtype);            // c_0: [B, 2 Hl]
  for (std::size_t l = 0; l < speller.size(); ++l) {
    state.tensors["h" + std::to_string(l)] = zeros({B, config.speller_dim}, dtype);  // [B, Hs]
    state.tensors["c" + std::to_string(l)] = zeros({B, config.speller_dim}, dtype);
  }
  return state;
}

Tensor ListenAttendSpell::spell(DecoderState& state, const Tensor& y_prev) {
  Tensor x = concat({y_prev, state.tensors.at("context")}, 1);  // [embed(y_{i-1}); c_{i-1}]: [B, E + 2 Hl]
  for (std::size_t l = 0; l < speller.size(); ++l) {
    const std::string h = "h" + std::to_string(l), c = "c" + std::to_string(l);
    nn::LSTMState s = speller[l](x, {state.tensors.at(h), state.tensors.at(c)});
    state.tensors[h] = s.h;  // [B, Hs]
    state.tensors[c] = s.c;
    x = s.h;
  }
  const Tensor& memory = state.tensors.at("memory");
  Mask padding = nn::padding_mask(lengths_index(state.src_lengths), memory.size(1));  // [B, U], true = padding
  nn::AttentionOutput a =
      attention.forward_precomputed(unsqueeze(phi(x), 1), state.tensors.at("keys"), memory, padding);  // phi(s_i): [B, 1, A]
  Tensor context = select(a.context, 1, 0);                         // c_i: [B, 2 Hl]
  state.tensors["context"] = context;
  state.attention["attention"] = select(a.weights, 1, 0).detach();  // a_iu: [B, U]
  return concat({x, context}, 1);                                   // [s_i; c_i]: [B, Hs + 2 Hl]
}

Tensor ListenAttendSpell::forward(const Tensor& features, const std::vector<std::size_t>& lengths,
                                  const Index& tgt_in) {
  check_features("ListenAttendSpell", features, lengths);
  if (tgt_in.dimension() != 2 || tgt_in.shape()[0] != features.size(0) || tgt_in.shape()[1] == 0)
    throw ShapeError("ListenAttendSpell: expected tgt_in [" + std::to_string(features.size(0)) +
                     ", L] with L > 0, got shape " + shape_str(Shape(tgt_in.shape().begin(), tgt_in.shape().end())));
  DecoderState state = start(features, lengths);
  const std::size_t B = tgt_in.shape()[0], L = tgt_in.shape()[1];
  const bool sampling = is_training() && config.sampling_probability > 0.0;
  Tensor y = embed(tgt_in);  // y_{i-1} for every i: [B, L, E]
  std::vector<Tensor> logits, weights;
  for (std::size_t i = 0; i < L; ++i) {
    Tensor y_prev = select(y, 1, static_cast<long>(i));  // [B, E]
    if (sampling && i > 0) {  // some rows read a character drawn from the previous step's output instead
      std::vector<std::int64_t> drawn = sample_rows(logits.back(), *gen_);
      Index ids = xt::view(tgt_in, xt::all(), i);  // [B]
      bool any = false;
      for (std::size_t b = 0; b < B; ++b)
        if (gen_->uniform() < config.sampling_probability) ids(b) = drawn[b], any = true;
      if (any) y_prev = embed(ids);  // [B, E]
    }
    logits.push_back(distribution(spell(state, y_prev)));  // [B, V]
    weights.push_back(state.attention.at("attention"));    // [B, U]
  }
  last_attention_ = stack(weights, 1);  // [B, L, U]
  return stack(logits, 1);              // [B, L, V]
}

Tensor ListenAttendSpell::step(DecoderState& state, const Index& prefix) {
  Index last = last_tokens("ListenAttendSpell::step", prefix, state.tensors.at("memory").size(0));  // [B, 1]
  return distribution(spell(state, select(embed(last), 1, 0)));                                      // [B, V]
}

}  // namespace attn::models
