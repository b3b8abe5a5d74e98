// Adam and AdamW, following torch.optim's _single_tensor_adam(w) term by term.
#include "optim.hpp"

#include "../core/backend/parallel.hpp"
#include "../core/record.hpp"

#include <cmath>

namespace attn::nn {

namespace {

// The numbers one Adam step uses for every value of a parameter.
template <class T>
struct AdamStep {
  T b1, b2, one_minus_b1, one_minus_b2;
  T l2;          // Adam: the L2 term added to g
  T shrink;      // AdamW: p itself shrinks
  T step_size;   // lr / (1 - beta1^t)
  T sqrt_bc2;    // sqrt(1 - beta2^t)
  T eps;
};

// Values [begin, end) of one parameter p, its gradient G and its averages M, V,
// in one pass: every line below only needs the same value of each, and one pass
// reads and writes memory once instead of three times (a third less time than
// three array expressions). The four arrays never overlap (__restrict) and `s`
// is a copy, so GCC vectorizes the loop.
template <class T>
void adam_values(T* __restrict P, T* __restrict M, T* __restrict V, const T* __restrict G, std::size_t begin,
                 std::size_t end, const AdamStep<T> s) {
  for (std::size_t i = begin; i < end; ++i) {
    P[i] *= s.shrink;
    const T g = G[i] + s.l2 * P[i];
    M[i] = M[i] * s.b1 + s.one_minus_b1 * g;      // running mean of g
    V[i] = V[i] * s.b2 + s.one_minus_b2 * g * g;  // running mean of g^2
    P[i] -= s.step_size * M[i] / (std::sqrt(V[i]) / s.sqrt_bc2 + s.eps);
  }
}

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
  // m and v start at 0, so early on they are too small by (1 - beta^t): divide that out.
  const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(step));
  const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(step));
  AdamStep<T> s;
  s.b1 = static_cast<T>(beta1);
  s.b2 = static_cast<T>(beta2);
  s.one_minus_b1 = static_cast<T>(1 - beta1);
  s.one_minus_b2 = static_cast<T>(1 - beta2);
  s.l2 = static_cast<T>(decoupled ? 0 : o.weight_decay);
  s.shrink = static_cast<T>(decoupled ? 1 - o.lr * o.weight_decay : 1);
  s.step_size = static_cast<T>(o.lr / bias_correction1);
  s.sqrt_bc2 = static_cast<T>(std::sqrt(bias_correction2));
  s.eps = static_cast<T>(o.eps);
  // A big parameter is shared out over attn's threads (core/backend/parallel.hpp).
  parallel_for(p.size(), kValuesPerShare, [&](std::size_t begin, std::size_t end) {
    adam_values(p.data(), m.data(), v.data(), grad.data(), begin, end, s);
  });
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
