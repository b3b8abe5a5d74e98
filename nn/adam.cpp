// Adam and AdamW, following torch.optim's _single_tensor_adam(w) term by term.
#include "optim.hpp"

#include "../core/record.hpp"

#include <xtensor/xnoalias.hpp>

#include <cmath>

namespace attn::nn {

namespace {

template <class T>
void adam_update(Tensor& param, Tensor& exp_avg, Tensor& exp_avg_sq, long step, const Adam& o, bool decoupled) {
  // Every update below is elementwise, so it may write in place: xt::noalias tells
  // xtensor so, and it skips the temporary it would otherwise evaluate into first.
  xt::xarray<T>& p = param.data<T>();
  const xt::xarray<T>& grad = static_cast<Node<T>&>(*param.node()).grad;
  const bool l2 = !decoupled && o.weight_decay != 0;
  xt::xarray<T> with_l2;  // Adam's L2 term makes a new gradient; otherwise grad is used as it is
  if (decoupled) xt::noalias(p) = p * static_cast<T>(1 - o.lr * o.weight_decay);  // AdamW: shrink p itself
  else if (l2) with_l2 = grad + static_cast<T>(o.weight_decay) * p;                 // Adam: L2 term in g
  const xt::xarray<T>& g = l2 ? with_l2 : grad;

  if (!exp_avg.defined()) {  // first step: both averages start at zero
    exp_avg = Tensor(xt::xarray<T>(xt::zeros<T>(p.shape())));
    exp_avg_sq = Tensor(xt::xarray<T>(xt::zeros<T>(p.shape())));
  }
  const auto [beta1, beta2] = o.betas;
  xt::xarray<T>& m = exp_avg.data<T>();
  xt::xarray<T>& v = exp_avg_sq.data<T>();
  xt::noalias(m) = m * static_cast<T>(beta1) + static_cast<T>(1 - beta1) * g;      // running mean of g
  xt::noalias(v) = v * static_cast<T>(beta2) + static_cast<T>(1 - beta2) * g * g;  // running mean of g^2

  // m and v start at 0, so early on they are too small by (1 - beta^t): divide that out.
  const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(step));
  const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(step));
  const T step_size = static_cast<T>(o.lr / bias_correction1);
  const T sqrt_bc2 = static_cast<T>(std::sqrt(bias_correction2)), eps = static_cast<T>(o.eps);
  xt::noalias(p) = p - step_size * m / (xt::sqrt(v) / sqrt_bc2 + eps);
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
