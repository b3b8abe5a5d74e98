#include "local.hpp"

#include "../init.hpp"

#include "../../core/ops.hpp"

#include <cmath>
#include <string>

namespace attn::nn {

LocalAttention::LocalAttention(std::unique_ptr<Score> score, std::size_t window_radius, Mode mode,
                               std::size_t query_dim, std::size_t attn_dim, Generator& gen)
    : Module("LocalAttention"), window_radius(window_radius), sigma(window_radius / 2.0), mode(mode),
      query_dim(query_dim), attn_dim(attn_dim), score_(std::move(score)) {
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
  const std::string op = "LocalAttention";
  Tensor scores = score_->forward(query, keys);  // e_tj: [B, Tq, Tk] (the score checks query and keys)
  const std::size_t B = scores.size(0), Tq = scores.size(1), Tk = scores.size(2);
  if (!values.defined() || values.dim() != 3 || values.size(0) != B || values.size(1) != Tk)
    throw ShapeError(op + ": expected values [B, Tk, Dv] with B = " + std::to_string(B) + " and Tk = " +
                     std::to_string(Tk) + ", got " + (values.defined() ? shape_str(values.shape()) : "undefined"));
  if (mode == Mode::Predictive && query.size(-1) != query_dim)
    throw ShapeError(op + ": expected query [B, Tq, " + std::to_string(query_dim) + "] for W_p, got " +
                     shape_str(query.shape()));

  // Source lengths S [B] and the padding they imply.
  Mask padding = xt::zeros<bool>(Shape{B, Tk});  // [B, Tk]
  xt::xarray<double> S = xt::full_like(xt::xarray<double>::from_shape({B, 1}), static_cast<double>(Tk));  // [B, 1]
  if (lengths) {
    if (lengths->dimension() != 1 || lengths->size() != B)
      throw ShapeError(op + ": expected lengths [B] = [" + std::to_string(B) + "], got " +
                       shape_str(Shape(lengths->shape().begin(), lengths->shape().end())));
    padding = padding_mask(*lengths, Tk);
    for (std::size_t b = 0; b < B; ++b) S(b, 0) = static_cast<double>((*lengths)(b));
  }

  // Aligned positions p_t [B, Tq].
  Tensor p;
  if (mode == Mode::Monotonic) {
    xt::xarray<double> steps = xt::zeros<double>({B, Tq});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t i = 0; i < Tq; ++i) steps(b, i) = static_cast<double>(first_step + i);  // p_t = t
    p = Tensor(std::move(steps)).to(query.dtype());
  } else {
    Tensor hidden = tanh(linear(query, W_p));  // tanh(W_p s_t): [B, Tq, Dq] -> [B, Tq, A]
    Tensor z = sum(hidden * v_p, {-1});        // v_p^T tanh(W_p s_t): [B, Tq]
    p = sigmoid(z) * Tensor(S).to(query.dtype());  // S * sigmoid(...): [B, Tq] * [B, 1] -> [B, Tq]
  }

  // Blocked: padding, and every key outside [p_t - D, p_t + D].
  const xt::xarray<double> pv = p.to_array();
  Mask mask = xt::zeros<bool>(Shape{B, Tq, Tk});  // [B, Tq, Tk]
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < Tq; ++i)
      for (std::size_t j = 0; j < Tk; ++j)
        mask(b, i, j) = padding(b, j) || std::abs(static_cast<double>(j) - pv(b, i)) > static_cast<double>(window_radius);

  Tensor align = masked_softmax(scores, mask, -1);                           // [B, Tq, Tk]
  Tensor j = reshape(arange(Tk, query.dtype()), {1, 1, static_cast<long>(Tk)});  // positions j: [1, 1, Tk]
  Tensor offset = j - unsqueeze(p, 2);                                       // j - p_t: [B, Tq, Tk]
  Tensor gaussian = exp(offset * offset * (-1.0 / (2.0 * sigma * sigma)));  // [B, Tq, Tk]
  Tensor weights = align * gaussian;                                         // a_tj: [B, Tq, Tk]
  Tensor context = matmul(weights, values);  // [B, Tq, Tk] x [B, Tk, Dv] -> [B, Tq, Dv]
  last_weights_ = weights.detach();
  last_positions_ = p.detach();
  return {context, weights};
}

std::string LocalAttention::extra_repr() const {
  return std::string("mode=") + (mode == Mode::Monotonic ? "local-m" : "local-p") +
         ", D=" + std::to_string(window_radius) + ", sigma=" + std::to_string(sigma);
}

}  // namespace attn::nn
