// Adam and AdamW, following torch.optim's _single_tensor_adam(w) term by term.
#include "optim.hpp"

#include "../core/record.hpp"

#include <cmath>

namespace attn::nn {

namespace {

template <class T>
void adam_update(Tensor& param, Tensor& exp_avg, Tensor& exp_avg_sq, long step, const Adam& o, bool decoupled) {
  xt::xarray<T>& p = param.data<T>();
  const xt::xarray<T>& grad = static_cast<Node<T>&>(*param.node()).grad;
  if (!exp_avg.defined()) {  // first step: both averages start at zero
    exp_avg = Tensor(xt::xarray<T>(xt::zeros<T>(p.shape())));
    exp_avg_sq = Tensor(xt::xarray<T>(xt::zeros<T>(p.shape())));
  }
  xt::xarray<T>& m = exp_avg.data<T>();
  xt::xarray<T>& v = exp_avg_sq.data<T>();

  const auto [beta1, beta2] = o.betas;
  const T b1 = static_cast<T>(beta1), b2 = static_cast<T>(beta2);
  const T one_minus_b1 = static_cast<T>(1 - beta1), one_minus_b2 = static_cast<T>(1 - beta2);
  const T l2 = static_cast<T>(decoupled ? 0 : o.weight_decay);           // Adam: L2 term added to g
  const T shrink = static_cast<T>(decoupled ? 1 - o.lr * o.weight_decay : 1);  // AdamW: p itself shrinks
  // m and v start at 0, so early on they are too small by (1 - beta^t): divide that out.
  const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(step));
  const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(step));
  const T step_size = static_cast<T>(o.lr / bias_correction1);
  const T sqrt_bc2 = static_cast<T>(std::sqrt(bias_correction2)), eps = static_cast<T>(o.eps);

  // One pass over p, g, m and v, value by value: every step below only needs the
  // same value of each, and one pass reads and writes memory once instead of
  // three times (a third less time here than three array expressions).
  // (__restrict: the four arrays never overlap, so the loop may be vectorized.)
  T* __restrict P = p.data();
  T* __restrict M = m.data();
  T* __restrict V = v.data();
  const T* __restrict G = grad.data();
  for (std::size_t i = 0; i < p.size(); ++i) {
    P[i] *= shrink;
    const T g = G[i] + l2 * P[i];
    M[i] = M[i] * b1 + one_minus_b1 * g;      // running mean of g
    V[i] = V[i] * b2 + one_minus_b2 * g * g;  // running mean of g^2
    P[i] -= step_size * M[i] / (std::sqrt(V[i]) / sqrt_bc2 + eps);
  }
}

}  // namespace

Adam::Adam(std::vector<Tensor> params, double lr, std::pair<double, double> betas, double eps, double weight_decay)
    : Adam(std::move(params), lr, betas, eps, weight_decay, false) {}

Adam::Adam(std::vector<Tensor> params, double lr, std::pair<double, double> betas, double eps, double weight_decay,
           bool decoupled)
    : Optimizer(std::move(params), lr), betas(betas), eps(eps), weight_decay(weight_decay), decoupled_(decoupled),
      exp_avg_(params_.size()), exp_avg_sq_(params_.size()), steps_(params_.size(), 0) {
  const char* name = decoupled ? "AdamW" : "Adam";
  if (!(eps >= 0.0)) throw ValueError(std::string(name) + ": invalid eps " + std::to_string(eps) + " (must be >= 0)");
  if (!(betas.first >= 0.0 && betas.first < 1.0) || !(betas.second >= 0.0 && betas.second < 1.0))
    throw ValueError(std::string(name) + ": betas must be in [0, 1), got (" + std::to_string(betas.first) + ", " +
                     std::to_string(betas.second) + ")");
  if (!(weight_decay >= 0.0))
    throw ValueError(std::string(name) + ": invalid weight_decay " + std::to_string(weight_decay) + " (must be >= 0)");
}

void Adam::step() {
  no_grad guard;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].node()->has_grad) continue;
    ++steps_[i];
    ATTN_DISPATCH(params_[i].dtype(), adam_update, params_[i], exp_avg_[i], exp_avg_sq_[i], steps_[i], *this,
                  decoupled_);
  }
}

AdamW::AdamW(std::vector<Tensor> params, double lr, std::pair<double, double> betas, double eps, double weight_decay)
    : Adam(std::move(params), lr, betas, eps, weight_decay, true) {}

}  // namespace attn::nn
