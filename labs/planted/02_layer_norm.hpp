// Wrong solutions of lab 2; labs/tests/test_lab02.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/02_layer_norm.hpp"

namespace lab {
namespace planted {
namespace layer_norm {

using attn::Tensor;
namespace good = lab::solutions::layer_norm;

inline std::vector<Planted<lab::layer_norm::LayerNorm>> all() {
  std::vector<Planted<lab::layer_norm::LayerNorm>> out;
  auto base = good::solution();

  auto s = base;
  s.forward = [](const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
    Tensor centered = x - attn::mean(x, {-1}, true);
    double d = static_cast<double>(x.size(-1));
    Tensor var = attn::sum(centered * centered, {-1}, true) / (d - 1.0);  // unbiased
    return centered / attn::sqrt(var + eps) * gamma + beta;
  };
  out.push_back({"the unbiased variance (divides by D - 1)", s, "by D, not D - 1", true});
  // The same wrong forward beside the right backward: the gradchecks must not blame the backward.
  out.push_back({"a wrong forward, the right backward", s, "your backward is right; the forward is wrong"});

  s = base;
  s.forward = [](const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
    return good::solution().forward(x, beta, gamma, eps);  // gamma and beta swapped
  };
  out.push_back({"gamma and beta swapped in the forward", s, "gamma and beta swapped", true});

  s = base;
  s.forward = [](const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
    Tensor mean = attn::mean(x, {-1}, true);
    Tensor var = attn::mean(x * x, {-1}, true) - mean * mean;  // cancels catastrophically
    return (x - mean) / attn::sqrt(var + eps) * gamma + beta;
  };
  out.push_back({"the variance as mean(x^2) - mean^2", s, "not mean(x^2) - mean^2"});

  s = base;
  s.forward = [](const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
    Tensor centered = x - attn::mean(x, {-1}, true);
    return centered / (attn::sqrt(attn::mean(centered * centered, {-1}, true)) + eps) * gamma + beta;
  };
  out.push_back({"eps outside the square root", s, "eps added outside the square root", true});

  s = base;
  s.forward = [](const Tensor& x, const Tensor& gamma, const Tensor& beta, double) {
    Tensor centered = x - attn::mean(x, {-1}, true);
    return centered / attn::sqrt(attn::mean(centered * centered, {-1}, true)) * gamma + beta;  // eps unused
  };
  out.push_back({"the forward ignores eps", s, "eps left out", true});

  s = base;
  s.backward = [](const Tensor& x, const Tensor& gamma, const Tensor& g, double) {
    return good::layer_norm_backward(x, gamma, g, 1e-5);  // the usual value, not the argument
  };
  out.push_back({"the backward ignores its eps argument and uses 1e-5", s, "must use its eps argument"});

  s = base;
  s.backward = [](const Tensor& x, const Tensor& gamma, const Tensor& g, double) {
    return good::layer_norm_backward(x, gamma, g, 0.0);  // eps left out: rstd = 1 / sqrt(var)
  };
  out.push_back({"the backward leaves eps out", s, "eps left out of the backward", true});

  s = base;
  s.backward = [](const Tensor& x, const Tensor& gamma, const Tensor& g, double eps) {
    Tensor mean = attn::mean(x, {-1}, true);
    Tensor var = attn::mean(x * x, {-1}, true) - mean * mean;  // cancels catastrophically at a large offset
    Tensor rstd = 1.0 / attn::sqrt(var + eps);
    Tensor xhat = (x - mean) * rstd;
    Tensor gh = g * gamma;
    Tensor dx = rstd * (gh - attn::mean(gh, {-1}, true) - xhat * attn::mean(gh * xhat, {-1}, true));
    std::vector<long> axes = good::batch_axes(x);
    return std::tuple<Tensor, Tensor, Tensor>{dx, axes.empty() ? g * xhat : attn::sum(g * xhat, axes),
                                              axes.empty() ? g : attn::sum(g, axes)};
  };
  out.push_back({"the backward's variance as mean(x^2) - mean^2", s, "right without the offset and wrong with it"});

  s = base;
  s.backward = [](const Tensor& x, const Tensor& gamma, const Tensor& g, double eps) {
    auto [dx, dgamma, dbeta] = good::layer_norm_backward(x, gamma, g, eps);
    Tensor centered = x - attn::mean(x, {-1}, true);
    Tensor rstd = 1.0 / attn::sqrt(attn::mean(centered * centered, {-1}, true) + eps);
    Tensor gh = g * gamma;
    return std::tuple<Tensor, Tensor, Tensor>{rstd * (gh - attn::mean(gh, {-1}, true)), dgamma, dbeta};
  };
  out.push_back({"dx forgets the term -xhat * mean(gh * xhat)", s, "three terms"});

  s = base;
  s.backward = [](const Tensor& x, const Tensor& gamma, const Tensor& g, double eps) {
    auto [dx, dgamma, dbeta] = good::layer_norm_backward(x, gamma, g, eps);
    return std::tuple<Tensor, Tensor, Tensor>{dx, dgamma, attn::sum(g, {-1})};  // over the wrong axis
  };
  out.push_back({"dbeta summed over the last axis instead of the batch axes", s, "every axis but the last"});
  return out;
}

}  // namespace layer_norm
}  // namespace planted
}  // namespace lab
