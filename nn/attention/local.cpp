#include "local.hpp"

#include "../init.hpp"

#include "../../core/ops.hpp"

#include <xtensor/xadapt.hpp>

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

  // The window: slot w of row (b, t) is source position j = ceil(p_t - D) + w, w = 0 .. 2D.
  // Slots outside [p_t - D, p_t + D] or the valid source [0, S) are blocked; they
  // gather a clamped (real) key so the shapes stay rectangular, and get weight 0.
  const std::size_t W = 2 * window_radius + 1;
  const xt::xarray<double> pv = p.to_array();
  xt::xarray<long> pos = xt::zeros<long>({B, Tq, W});  // clamped source position of each slot
  Mask blocked = xt::zeros<bool>(Shape{B, Tq, W});      // [B, Tq, W]
  xt::xarray<double> jpos = xt::zeros<double>({B, Tq, W});
  std::vector<long> union_of(Tk, -1);                   // source position -> its index among the positions used
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < Tq; ++i) {
      const long start = static_cast<long>(std::ceil(pv(b, i) - static_cast<double>(window_radius)));
      for (std::size_t w = 0; w < W; ++w) {
        const long j = start + static_cast<long>(w);
        jpos(b, i, w) = static_cast<double>(j);
        blocked(b, i, w) = j < 0 || j >= static_cast<long>(S[b]) ||
                           std::abs(static_cast<double>(j) - pv(b, i)) > static_cast<double>(window_radius);
        pos(b, i, w) = std::min(std::max(j, 0L), static_cast<long>(Tk) - 1);
        union_of[static_cast<std::size_t>(pos(b, i, w))] = 0;
      }
    }
  // Only the positions some window uses, U of them (U <= min(Tk, B * Tq * W)), are
  // copied out of the keys and values: scoring does not depend on Tk.
  std::vector<std::int64_t> used_list;
  for (std::size_t j = 0; j < Tk; ++j)
    if (union_of[j] == 0) {
      union_of[j] = static_cast<long>(used_list.size());
      used_list.push_back(static_cast<std::int64_t>(j));
    }
  const Index used = xt::adapt(used_list, std::vector<std::size_t>{used_list.size()});  // [U]
  const std::size_t U = used_list.size();
  Index rows = Index::from_shape({B, Tq, W});  // row b * U + (index of the slot's position among the used)
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < Tq; ++i)
      for (std::size_t w = 0; w < W; ++w)
        rows(b, i, w) = static_cast<std::int64_t>(b * U) + union_of[static_cast<std::size_t>(pos(b, i, w))];
  const long BT = static_cast<long>(B * Tq), Wl = static_cast<long>(W);
  auto gather_window = [&](const Tensor& x, std::size_t dim) {  // x [B, Tk, dim] -> [B * Tq, W, dim]
    Tensor used_rows = reshape(index_select(x, 1, used), {-1, static_cast<long>(dim)});  // [B, U, dim] -> [B * U, dim]
    return reshape(embedding(used_rows, rows), {BT, Wl, static_cast<long>(dim)});        // [B, Tq, W, dim] -> [B * Tq, W, dim]
  };

  // Score only the window: every (b, t) row becomes a batch of one query against W keys.
  Tensor k_win = gather_window(precomputed_keys, P);                          // [B * Tq, W, P]
  Tensor q_rows = reshape(query, {BT, 1, static_cast<long>(query.size(2))});  // [B * Tq, 1, Dq]
  Tensor scores = reshape(score_->forward_precomputed(q_rows, k_win),
                          {static_cast<long>(B), static_cast<long>(Tq), Wl});  // e_tj: [B * Tq, 1, W] -> [B, Tq, W]
  Tensor weights = masked_softmax(scores, blocked, -1);                       // [B, Tq, W]
  if (gaussian) {
    Tensor offset = Tensor(jpos).to(query.dtype()) - unsqueeze(p, 2);        // j - p_t: [B, Tq, W]
    weights = weights * exp(offset * offset * (-1.0 / (2.0 * sigma * sigma)));  // a_tj: [B, Tq, W]
  }
  Tensor v_win = gather_window(values, Dv);  // [B * Tq, W, Dv]
  Tensor context = reshape(matmul(reshape(weights, {BT, 1, Wl}), v_win),
                           {static_cast<long>(B), static_cast<long>(Tq), static_cast<long>(Dv)});  // [B * Tq, 1, W] x [B * Tq, W, Dv] -> [B, Tq, Dv]

  // The window's weights laid into the source row (0 elsewhere), for heatmaps and callers:
  // for every j, the slot that holds it, or an extra slot of 0.
  Index full = Index::from_shape({B, Tq, Tk});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < Tq; ++i) {
      const std::int64_t row = static_cast<std::int64_t>((b * Tq + i) * (W + 1));
      for (std::size_t j = 0; j < Tk; ++j) full(b, i, j) = row + static_cast<std::int64_t>(W);
      for (std::size_t w = 0; w < W; ++w)
        if (!blocked(b, i, w)) full(b, i, static_cast<std::size_t>(jpos(b, i, w))) = row + static_cast<std::int64_t>(w);
    }
  Tensor padded = concat({weights, zeros({B, Tq, 1}, weights.dtype())}, -1);  // [B, Tq, W + 1]
  Tensor row_weights = reshape(embedding(reshape(padded, {-1, 1}), full),
                               {static_cast<long>(B), static_cast<long>(Tq), static_cast<long>(Tk)});  // [B, Tq, Tk]
  last_weights_ = row_weights.detach();
  last_positions_ = p.detach();
  return {context, row_weights};
}

std::string LocalAttention::extra_repr() const {
  return std::string("mode=") + (mode == Mode::Monotonic ? "local-m" : "local-p") +
         ", D=" + std::to_string(window_radius) + ", sigma=" + std::to_string(sigma) +
         ", gaussian=" + (gaussian ? "true" : "false");
}

}  // namespace attn::nn
