#include "local.hpp"

#include "../init.hpp"

#include "../../core/ops.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace attn::nn {

LocalAttention::LocalAttention(std::unique_ptr<Score> score, std::size_t window_radius, Mode mode,
                               std::size_t query_dim, std::size_t attn_dim, Generator& gen,
                               std::optional<bool> use_gaussian)
    : Module("LocalAttention"), window_radius(window_radius), sigma(window_radius / 2.0), mode(mode),
      gaussian(use_gaussian.value_or(mode == Mode::Predictive)), query_dim(query_dim), attn_dim(attn_dim),
      score_(std::move(score)) {
  if (!score_) throw ValueError("LocalAttention: the score function is null");
  if (window_radius == 0) throw ValueError("LocalAttention: window_radius D must be at least 1 (sigma = D / 2)");
  register_module("score", *score_);
  if (mode == Mode::Predictive) {
    if (query_dim == 0 || attn_dim == 0)
      throw ValueError("LocalAttention: local-p needs query_dim and attn_dim (for W_p and v_p)");
    W_p = zeros({attn_dim, query_dim});
    v_p = zeros({attn_dim});
    register_parameter("W_p", W_p);
    register_parameter("v_p", v_p);
    init::kaiming_uniform_(W_p, std::sqrt(5.0), "fan_in", "leaky_relu", gen);  // U(+-1/sqrt(query_dim))
    const double bound = 1.0 / std::sqrt(static_cast<double>(attn_dim));
    init::uniform_(v_p, -bound, bound, gen);
  }
}

AttentionOutput LocalAttention::forward(const Tensor& query, const Tensor& keys, const Tensor& values,
                                        const std::optional<Index>& lengths, std::size_t first_step) {
  return forward_precomputed(query, score_->precompute_keys(keys), values, lengths, first_step);
}

AttentionOutput LocalAttention::forward_precomputed(const Tensor& query, const Tensor& precomputed_keys,
                                                    const Tensor& values, const std::optional<Index>& lengths,
                                                    std::size_t first_step) {
  LocalAttentionOutput out = forward_window(query, precomputed_keys, values, lengths, first_step);
  Tensor row_weights = window_to_rows(out, precomputed_keys.size(1));  // [B, Tq, 2D + 1] -> [B, Tq, Tk]
  last_weights_ = row_weights.detach();  // already made: no need to lay it out again
  return {out.context, row_weights};
}

Tensor LocalAttention::window_to_rows(const LocalAttentionOutput& out, std::size_t Tk) {
  return place_windows(out.weights, out.start, Tk);  // [B, Tq, 2D + 1] -> [B, Tq, Tk]
}

const Tensor& LocalAttention::last_weights() const {
  if (!last_weights_.defined() && last_window_.weights.defined())
    last_weights_ = window_to_rows(last_window_, last_source_length_);  // detached in, detached out
  return last_weights_;
}

LocalAttentionOutput LocalAttention::forward_window(const Tensor& query, const Tensor& precomputed_keys,
                                                    const Tensor& values, const std::optional<Index>& lengths,
                                                    std::size_t first_step) {
  const std::string op = "LocalAttention";
  if (!query.defined() || query.dim() != 3)
    throw ShapeError(op + ": expected query [B, Tq, Dq], got " + (query.defined() ? shape_str(query.shape()) : "undefined"));
  if (!precomputed_keys.defined() || precomputed_keys.dim() != 3 || precomputed_keys.size(0) != query.size(0))
    throw ShapeError(op + ": expected (precomputed) keys [B, Tk, D] with B = " + std::to_string(query.size(0)) +
                     ", got " + (precomputed_keys.defined() ? shape_str(precomputed_keys.shape()) : "undefined"));
  const std::size_t B = query.size(0), Tq = query.size(1), Tk = precomputed_keys.size(1);
  const std::size_t P = precomputed_keys.size(2), Dv = values.defined() && values.dim() == 3 ? values.size(2) : 0;
  if (!values.defined() || values.dim() != 3 || values.size(0) != B || values.size(1) != Tk)
    throw ShapeError(op + ": expected values [B, Tk, Dv] with B = " + std::to_string(B) + " and Tk = " +
                     std::to_string(Tk) + ", got " + (values.defined() ? shape_str(values.shape()) : "undefined"));
  if (mode == Mode::Predictive && query.size(-1) != query_dim)
    throw ShapeError(op + ": expected query [B, Tq, " + std::to_string(query_dim) + "] for W_p, got " +
                     shape_str(query.shape()));

  if (Tk == 0) throw ShapeError(op + ": expected at least one key, got keys " + shape_str(precomputed_keys.shape()));

  // Source lengths S [B].
  std::vector<std::size_t> S(B, Tk);
  if (lengths) {
    if (lengths->dimension() != 1 || lengths->size() != B)
      throw ShapeError(op + ": expected lengths [B] = [" + std::to_string(B) + "], got " +
                       shape_str(Shape(lengths->shape().begin(), lengths->shape().end())));
    for (std::size_t b = 0; b < B; ++b) {
      if ((*lengths)(b) < 0 || static_cast<std::size_t>((*lengths)(b)) > Tk)
        throw ValueError(op + ": lengths must be in [0, " + std::to_string(Tk) + "], got " +
                         std::to_string((*lengths)(b)));
      S[b] = static_cast<std::size_t>((*lengths)(b));
    }
  }

  // Aligned positions p_t [B, Tq].
  Tensor p;
  if (mode == Mode::Monotonic) {
    xt::xarray<double> steps = xt::zeros<double>({B, Tq});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t i = 0; i < Tq; ++i) steps(b, i) = static_cast<double>(first_step + i);  // p_t = t
    p = Tensor(std::move(steps)).to(query.dtype());
  } else {
    xt::xarray<double> lens = xt::zeros<double>({B, std::size_t(1)});
    for (std::size_t b = 0; b < B; ++b) lens(b, 0) = static_cast<double>(S[b]);
    Tensor hidden = tanh(linear(query, W_p));          // tanh(W_p s_t): [B, Tq, Dq] -> [B, Tq, A]
    Tensor z = sum(hidden * v_p, {-1});                // v_p^T tanh(W_p s_t): [B, Tq]
    p = sigmoid(z) * Tensor(lens).to(query.dtype());  // S * sigmoid(...): [B, Tq] * [B, 1] -> [B, Tq]
  }

  // The window: slot w of row (b, t) is source position j = start(b, t) + w, w = 0 .. 2D,
  // start = ceil(p_t - D). Slots outside [p_t - D, p_t + D] or the valid source [0, S) are
  // blocked (weight 0); those before 0 or from Tk on gather zeros, so the shapes stay
  // rectangular and nothing outside the window is read.
  const std::size_t W = 2 * window_radius + 1;
  const xt::xarray<double> pv = p.to_array();
  Index start = Index::from_shape({B, Tq});        // [B, Tq]
  Mask blocked = xt::zeros<bool>(Shape{B, Tq, W});  // [B, Tq, W]
  xt::xarray<double> jpos = xt::zeros<double>({B, Tq, W});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < Tq; ++i) {
      start(b, i) = static_cast<std::int64_t>(std::ceil(pv(b, i) - static_cast<double>(window_radius)));
      for (std::size_t w = 0; w < W; ++w) {
        const std::int64_t j = start(b, i) + static_cast<std::int64_t>(w);
        jpos(b, i, w) = static_cast<double>(j);
        blocked(b, i, w) = j < 0 || j >= static_cast<std::int64_t>(S[b]) ||
                           std::abs(static_cast<double>(j) - pv(b, i)) > static_cast<double>(window_radius);
      }
    }
  const long BT = static_cast<long>(B * Tq), Wl = static_cast<long>(W);

  // Score only the window: every (b, t) row becomes a batch of one query against W keys.
  Tensor k_win = reshape(gather_windows(precomputed_keys, start, W),
                         {BT, Wl, static_cast<long>(P)});  // [B, Tk, P] -> [B, Tq, W, P] -> [B * Tq, W, P]
  Tensor q_rows = reshape(query, {BT, 1, static_cast<long>(query.size(2))});  // [B, Tq, Dq] -> [B * Tq, 1, Dq]
  Tensor scores = reshape(score_->forward_precomputed(q_rows, k_win),
                          {static_cast<long>(B), static_cast<long>(Tq), Wl});  // e_tj: [B * Tq, 1, W] -> [B, Tq, W]
  Tensor weights = masked_softmax(scores, blocked, -1);                       // [B, Tq, W]
  if (gaussian) {
    Tensor offset = Tensor(std::move(jpos)).to(query.dtype()) - unsqueeze(p, 2);  // j - p_t: [B, Tq, W]
    weights = weights * exp(offset * offset * (-1.0 / (2.0 * sigma * sigma)));   // a_tj: [B, Tq, W]
  }
  Tensor v_win = reshape(gather_windows(values, start, W),
                         {BT, Wl, static_cast<long>(Dv)});  // [B, Tk, Dv] -> [B, Tq, W, Dv] -> [B * Tq, W, Dv]
  Tensor context = reshape(matmul(reshape(weights, {BT, 1, Wl}), v_win),
                           {static_cast<long>(B), static_cast<long>(Tq), static_cast<long>(Dv)});  // [B * Tq, 1, W] x [B * Tq, W, Dv] -> [B, Tq, Dv]

  last_window_ = {Tensor(), weights.detach(), start};
  last_source_length_ = Tk;
  last_weights_ = Tensor();  // laid out by last_weights() if someone asks
  last_positions_ = p.detach();
  return {context, weights, std::move(start)};
}

std::string LocalAttention::extra_repr() const {
  return std::string("mode=") + (mode == Mode::Monotonic ? "local-m" : "local-p") +
         ", D=" + std::to_string(window_radius) + ", sigma=" + std::to_string(sigma) +
         ", gaussian=" + (gaussian ? "true" : "false");
}

}  // namespace attn::nn
