// Lab 2's worked solution (the library's fused op: core/backend/layer_norm.cpp).
#pragma once

#include "labs/grader/lab02_layer_norm.hpp"

namespace lab {
namespace solutions {
namespace layer_norm {

using attn::Tensor;

// Every axis but the last: where gamma and beta were broadcast.
inline std::vector<long> batch_axes(const Tensor& x) {
  std::vector<long> axes;
  for (std::size_t d = 0; d + 1 < x.dim(); ++d) axes.push_back(static_cast<long>(d));
  return axes;
}

// xhat = (x - mean) / sqrt(var + eps), var = mean((x - mean)^2): two passes, no cancellation.
inline Tensor normalized(const Tensor& x, double eps) {
  Tensor centered = x - attn::mean(x, {-1}, /*keepdim=*/true);
  Tensor var = attn::mean(centered * centered, {-1}, /*keepdim=*/true);
  return centered / attn::sqrt(var + eps);
}

inline Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  return normalized(x, eps) * gamma + beta;
}

// dx = rstd * (gh - mean(gh) - xhat * mean(gh * xhat)), gh = g * gamma
inline std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(const Tensor& x, const Tensor& gamma, const Tensor& g,
                                                              double eps) {
  Tensor centered = x - attn::mean(x, {-1}, true);
  Tensor rstd = 1.0 / attn::sqrt(attn::mean(centered * centered, {-1}, true) + eps);
  Tensor xhat = centered * rstd;
  Tensor gh = g * gamma;
  Tensor dx = rstd * (gh - attn::mean(gh, {-1}, true) - xhat * attn::mean(gh * xhat, {-1}, true));
  std::vector<long> axes = batch_axes(x);
  Tensor dgamma = axes.empty() ? g * xhat : attn::sum(g * xhat, axes);
  Tensor dbeta = axes.empty() ? g : attn::sum(g, axes);
  return {dx, dgamma, dbeta};
}

inline lab::layer_norm::LayerNorm solution() { return {layer_norm, layer_norm_backward}; }

}  // namespace layer_norm
}  // namespace solutions
}  // namespace lab
