#include "grid_captioner.hpp"

#include "../core/ops.hpp"
#include "../data/vocab.hpp"

#include <xtensor/xview.hpp>

#include <string>
#include <vector>

namespace attn::models {

namespace {

const GridCaptionerConfig& checked(const GridCaptionerConfig& c) {
  if (c.soft_probability < 0 || c.soft_probability > 1)
    throw ValueError("GridCaptioner: soft_probability must be in [0, 1], got " + std::to_string(c.soft_probability));
  if (c.vocab == 0 || c.feature_dim == 0 || c.embed_dim == 0 || c.decoder_dim == 0 || c.attention_dim == 0)
    throw ValueError("GridCaptioner: vocab, feature_dim, embed_dim, decoder_dim and attention_dim must be positive");
  return c;
}

const char* attention_name(GridAttention a) {
  return a == GridAttention::Soft ? "soft" : a == GridAttention::Hard ? "hard" : "hard_at_inference";
}

std::size_t memory_dim(const GridCaptionerConfig& c) { return c.encoder_dim > 0 ? c.encoder_dim : c.feature_dim; }

// One cell per row, drawn from the distribution in that row of weights [B, N].
Index sample_cells(const Tensor& weights) {
  const xt::xarray<double> a = weights.to_array();  // [B, N]
  const std::size_t B = a.shape()[0], N = a.shape()[1];
  Index cells = Index::from_shape({B});
  for (std::size_t b = 0; b < B; ++b) {
    const double u = default_generator().uniform();
    double cumulative = 0.0;
    std::size_t k = 0;
    while (k + 1 < N && (cumulative += a(b, k)) <= u) ++k;  // the first k with a_0 + ... + a_k > u
    cells(b) = static_cast<std::int64_t>(k);
  }
  return cells;
}

}  // namespace

GridCaptioner::GridCaptioner(const GridCaptionerConfig& cfg)
    : Module("GridCaptioner"),
      config(checked(cfg)),
      init_h(memory_dim(cfg), cfg.decoder_dim),
      init_c(memory_dim(cfg), cfg.decoder_dim),
      embed(cfg.vocab, cfg.embed_dim, data::Vocab::pad_id),
      attention(cfg.decoder_dim, memory_dim(cfg), cfg.attention_dim),
      decoder(cfg.embed_dim + memory_dim(cfg), cfg.decoder_dim),
      out_state(cfg.decoder_dim, cfg.embed_dim),
      out_context(memory_dim(cfg), cfg.embed_dim),
      out(cfg.embed_dim, cfg.vocab) {
  if (cfg.encoder_dim > 0) {
    project = std::make_unique<nn::Linear>(cfg.feature_dim, cfg.encoder_dim);
    register_module("project", *project);
  }
  register_module("init_h", init_h);
  register_module("init_c", init_c);
  register_module("embed", embed);
  register_module("attention", attention);
  register_module("decoder", decoder);
  register_module("out_state", out_state);
  register_module("out_context", out_context);
  register_module("out", out);
  if (cfg.gate) {  // built last, so that the other weights are those of the same model without the gate
    f_beta = std::make_unique<nn::Linear>(cfg.decoder_dim, 1);
    register_module("f_beta", *f_beta);
  }
}

std::string GridCaptioner::extra_repr() const {
  return "vocab=" + std::to_string(config.vocab) + ", feature_dim=" + std::to_string(config.feature_dim) +
         ", encoder_dim=" + std::to_string(config.encoder_dim) + ", embed_dim=" + std::to_string(config.embed_dim) +
         ", decoder_dim=" + std::to_string(config.decoder_dim) +
         ", attention_dim=" + std::to_string(config.attention_dim) +
         ", attention=" + attention_name(config.attention) + (config.gate ? ", gate=true" : "");
}

Tensor GridCaptioner::encode(const Tensor& features) const {
  if (!features.defined()) throw ValueError("GridCaptioner: the features are undefined");
  const Shape shape = features.shape();
  if (shape.size() != 3 || shape[0] == 0 || shape[1] == 0 || shape[2] != config.feature_dim)
    throw ShapeError("GridCaptioner: expected features [B, N, " + std::to_string(config.feature_dim) +
                     "] (B grids of N cells, B, N > 0), got " + shape_str(shape));
  return project ? (*project)(features) : features;  // h_j: [B, N, H]
}

DecoderState GridCaptioner::start(const Tensor& features) {
  Tensor memory = encode(features);                   // h_j: [B, N, H]
  Tensor summary = mean(memory, {1});                 // mean_j h_j: [B, H]
  DecoderState state;
  state.src_lengths.assign(memory.size(0), memory.size(1));  // every cell is real
  state.tensors["memory"] = memory;
  state.tensors["keys"] = attention.precompute_keys(memory);  // W_2 h_j: [B, N, A]
  state.tensors["h"] = tanh(init_h(summary));                 // s_0: [B, Hd]
  state.tensors["c"] = tanh(init_c(summary));                 // m_0: [B, Hd]
  return state;
}

GridCaptioner::Step GridCaptioner::decode(DecoderState& state, const Tensor& y_prev, const Index* replayed) {
  const Tensor& memory = state.tensors.at("memory");                                 // [B, N, H]
  const Tensor& h = state.tensors.at("h");                                           // s_{t-1}: [B, Hd]
  Tensor scores = select(attention.forward_precomputed(unsqueeze(h, 1), state.tensors.at("keys")), 1, 0);  // e_tj: [B, N]
  Step step;
  step.weights = softmax(scores, -1);                                                // a_tj: [B, N]
  Tensor log_weights = log_softmax(scores, -1);                                      // log a_tj: [B, N]
  step.entropy = -sum(step.weights * log_weights, {-1});                             // H(a_t): [B]
  Tensor chosen = step.weights;                                                      // soft: all cells, weighted
  const bool training = is_training();
  const bool hard =
      replayed ? soft_rows_ != SoftRows::All
               : (config.attention == GridAttention::Hard && !(training && soft_rows_ == SoftRows::All)) ||
                     (config.attention == GridAttention::HardAtInference && !training);
  if (hard) {
    // REINFORCE scores the choices (samples in training, or a replayed path) by their log-probabilities;
    // inference takes the peak.
    const bool scored = training || replayed;
    Index cells = replayed ? Index(xt::maximum(*replayed, std::int64_t{0}))  // a soft row's -1: any cell, masked below
                           : training ? sample_cells(step.weights) : argmax(step.weights, -1);  // k: [B]
    chosen = one_hot(cells, memory.size(1), memory.dtype());                        // [B, N], 1 at k
    step.cells = replayed ? *replayed : cells;
    if (scored) step.choice_log_prob = sum(chosen * log_weights, {-1});              // log a_tk: [B]
    if (scored && soft_rows_ == SoftRows::Some) {
      // The images drawn soft for this pass read the expected context and made no choice: their
      // c_t is made from a_t itself, and their log-probability of a choice is 0 (no REINFORCE term).
      chosen = soft_mask_ * step.weights + (1.0 - soft_mask_) * chosen;              // [B, N]
      step.choice_log_prob = step.choice_log_prob * select(1.0 - soft_mask_, 1, 0);     // [B]
    }
  }
  step.used = chosen.detach();
  Tensor context = select(matmul(unsqueeze(chosen, 1), memory), 1, 0);  // c_t: [B, 1, N] x [B, N, H] -> [B, H]
  if (f_beta) {
    step.gate = sigmoid((*f_beta)(h));  // beta_t = sigmoid(f_beta(s_{t-1})): [B, 1]
    context = step.gate * context;      // c_t <- beta_t c_t: [B, H]
    state.attention["gate"] = step.gate.detach();
  }
  nn::LSTMState s = decoder(concat({y_prev, context}, 1), {h, state.tensors.at("c")});
  state.tensors["h"] = s.h;                                                          // s_t: [B, Hd]
  state.tensors["c"] = s.c;
  state.attention["attention"] = step.used;
  state.attention["alpha"] = step.weights.detach();
  // The deep output: y_{t-1}, s_t and c_t mapped to the embedding size, added, tanh, then to the vocabulary.
  step.output = out(tanh(y_prev + out_state(s.h) + out_context(context)));          // [B, V]
  return step;
}

CaptionerOutput GridCaptioner::forward_all(const Tensor& features, const Index& tgt_in) {
  return teacher_forced(features, tgt_in, nullptr);
}

CaptionerOutput GridCaptioner::forward_all(const Tensor& features, const Index& tgt_in, const Index& cells) {
  if (config.attention != GridAttention::Hard)
    throw ValueError(std::string("GridCaptioner: replaying cells needs hard attention, this model's is ") +
                     attention_name(config.attention));
  return teacher_forced(features, tgt_in, &cells);
}

CaptionerOutput GridCaptioner::teacher_forced(const Tensor& features, const Index& tgt_in, const Index* cells) {
  DecoderState state = start(features);
  const std::size_t B = features.size(0), N = features.size(1);
  if (tgt_in.dimension() != 2 || tgt_in.shape()[0] != B || tgt_in.shape()[1] == 0)
    throw ShapeError("GridCaptioner: expected tgt_in [" + std::to_string(B) + ", T] (B from the features, T > 0), got " +
                     shape_str(Shape(tgt_in.shape().begin(), tgt_in.shape().end())));
  const std::size_t T = tgt_in.shape()[1];
  std::vector<bool> soft_row(B, false);  // replayed: the rows of -1 (read soft)
  if (cells) {
    if (cells->dimension() != 2 || cells->shape()[0] != B || cells->shape()[1] != T)
      throw ShapeError("GridCaptioner: expected cells [" + std::to_string(B) + ", " + std::to_string(T) +
                       "] (as tgt_in), got " + shape_str(Shape(cells->shape().begin(), cells->shape().end())));
    for (std::size_t b = 0; b < B; ++b) {
      soft_row[b] = (*cells)(b, 0) == -1;
      for (std::size_t t = 0; t < T; ++t) {
        const std::int64_t k = (*cells)(b, t);
        if (k < -1 || k >= static_cast<std::int64_t>(N))
          throw ValueError("GridCaptioner: cells(" + std::to_string(b) + ", " + std::to_string(t) + ") = " +
                           std::to_string(k) + " is not a cell of the " + std::to_string(N) + " (nor -1, read soft)");
        if ((k == -1) != soft_row[b])
          throw ValueError("GridCaptioner: row " + std::to_string(b) + " of cells mixes -1 (read soft) and cells; "
                           "an image reads soft for its whole caption or not at all");
      }
    }
  }
  struct Reset {  // the draw holds for this pass only, also when a step throws
    SoftRows& rows;
    Tensor& mask;
    ~Reset() {
      rows = SoftRows::None;
      mask = Tensor();
    }
  } reset{soft_rows_, soft_mask_};
  if (cells || (config.attention == GridAttention::Hard && is_training() && config.soft_probability > 0)) {
    // Per image, as Xu et al. (sec. 4.1) do "with probability 0.5 for a given image": each row of the
    // batch draws once whether its whole caption reads the expected context instead of sampled cells.
    // A replay reads it from the rows of -1 instead.
    xt::xarray<double> soft = xt::zeros<double>({B, std::size_t{1}});
    std::size_t count = 0;
    for (std::size_t b = 0; b < B; ++b)
      if (cells ? soft_row[b] : default_generator().uniform() < config.soft_probability) {
        soft(b, 0) = 1.0;
        ++count;
      }
    soft_rows_ = count == 0 ? SoftRows::None : count == B ? SoftRows::All : SoftRows::Some;
    soft_mask_ = tensor(soft, false, state.tensors.at("memory").dtype());  // [B, 1]
  }
  Tensor y = embed(tgt_in);  // y_{t-1} for every t: [B, T, E]
  std::vector<Tensor> logits, weights, used, log_probs, entropy, gates;
  Index chosen_cells = Index::from_shape({B, T});  // [B, T]
  for (std::size_t t = 0; t < T; ++t) {
    Index column;
    if (cells) column = xt::view(*cells, xt::all(), t);  // [B]
    Step s = decode(state, select(y, 1, static_cast<long>(t)), cells ? &column : nullptr);
    logits.push_back(s.output);
    weights.push_back(s.weights);
    used.push_back(s.used);
    entropy.push_back(s.entropy);
    if (s.gate.defined()) gates.push_back(s.gate);
    if (s.choice_log_prob.defined()) log_probs.push_back(s.choice_log_prob);
    if (s.cells.dimension() == 1) xt::view(chosen_cells, xt::all(), t) = s.cells;
  }
  CaptionerOutput result;
  result.logits = stack(logits, 1);    // [B, T, V]
  result.weights = stack(weights, 1);  // [B, T, N]
  result.used = stack(used, 1);        // [B, T, N]
  result.entropy = stack(entropy, 1);  // [B, T]
  if (!gates.empty()) result.gate = select(stack(gates, 1), 2, 0);  // [B, T, 1] -> [B, T]
  if (!log_probs.empty()) {
    result.choice_log_prob = stack(log_probs, 1);  // [B, T]
    result.sampled = xt::ones<bool>({B});
    if (soft_rows_ == SoftRows::Some) {
      const xt::xarray<double> soft = soft_mask_.to_array();  // [B, 1]
      for (std::size_t b = 0; b < B; ++b) result.sampled(b) = soft(b, 0) == 0.0;
    }
    for (std::size_t b = 0; b < B; ++b)  // the sampled cell of a soft row was never read: -1, as a replay takes it
      if (!result.sampled(b)) xt::view(chosen_cells, b) = std::int64_t{-1};
    result.cells = chosen_cells;
  }
  last_attention_ = result.used;
  return result;
}

Tensor GridCaptioner::forward(const Tensor& features, const Index& tgt_in) { return forward_all(features, tgt_in).logits; }

Tensor GridCaptioner::step(DecoderState& state, const Index& y_prev) {
  const std::size_t B = state.tensors.at("h").size(0);
  if (y_prev.dimension() != 1 || y_prev.shape()[0] != B)
    throw ShapeError("GridCaptioner::step: expected y_prev [" + std::to_string(B) + "], got " +
                     shape_str(Shape(y_prev.shape().begin(), y_prev.shape().end())));
  return decode(state, embed(y_prev)).output;  // [B, V]
}

}  // namespace attn::models
