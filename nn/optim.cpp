// The Optimizer base, SGD and clip_grad_norm_ (Adam and AdamW: adam.cpp).
#include "optim.hpp"

#include "../core/record.hpp"

#include <cmath>

namespace attn::nn {

namespace {

template <class T>
Node<T>& node_of(const Tensor& t) { return static_cast<Node<T>&>(*t.node()); }

// p -= lr * (g + ...), following torch.optim.SGD's _single_tensor_sgd.
template <class T>
void sgd_update(Tensor& param, Tensor& buffer, const SGD& o) {
  xt::xarray<T>& p = param.data<T>();
  xt::xarray<T> d_p = node_of<T>(param).grad;
  if (o.weight_decay != 0) d_p = d_p + static_cast<T>(o.weight_decay) * p;  // L2 term: d(wd/2 p^2)/dp = wd p
  if (o.momentum != 0) {
    if (!buffer.defined()) {
      buffer = Tensor(d_p);  // the first step starts the running direction at g
    } else {
      xt::xarray<T>& b = buffer.data<T>();
      b = b * static_cast<T>(o.momentum) + static_cast<T>(1 - o.dampening) * d_p;
    }
    const xt::xarray<T>& b = buffer.data<T>();
    if (o.nesterov) d_p = d_p + static_cast<T>(o.momentum) * b;  // look ahead along the momentum
    else d_p = b;
  }
  p = p + static_cast<T>(-o.lr) * d_p;
}

template <class T>
double grad_norm(const Tensor& param) {
  const xt::xarray<T>& g = node_of<T>(param).grad;
  double sum = 0.0;
  for (T v : g) sum += static_cast<double>(v) * static_cast<double>(v);
  return std::sqrt(sum);
}

template <class T>
void scale_grad(const Tensor& param, double factor) {
  node_of<T>(param).grad *= static_cast<T>(factor);
}

}  // namespace

Optimizer::Optimizer(std::vector<Tensor> params, double lr) : lr(lr), params_(std::move(params)) {
  if (!(lr >= 0.0)) throw ValueError("optimizer: invalid learning rate " + std::to_string(lr) + " (must be >= 0)");
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].defined()) throw ValueError("optimizer: parameter " + std::to_string(i) + " is undefined");
    if (!params_[i].is_leaf())
      throw ValueError("optimizer: parameter " + std::to_string(i) + " was made by '" + params_[i].op() +
                       "'; only leaf tensors can be optimized");
  }
}

void Optimizer::zero_grad() {
  for (Tensor& p : params_) p.zero_grad();
}

SGD::SGD(std::vector<Tensor> params, double lr, double momentum, double dampening, double weight_decay,
         bool nesterov)
    : Optimizer(std::move(params), lr), momentum(momentum), dampening(dampening), weight_decay(weight_decay),
      nesterov(nesterov), momentum_buffer_(params_.size()) {
  if (!(momentum >= 0.0)) throw ValueError("SGD: invalid momentum " + std::to_string(momentum) + " (must be >= 0)");
  if (!(weight_decay >= 0.0))
    throw ValueError("SGD: invalid weight_decay " + std::to_string(weight_decay) + " (must be >= 0)");
  if (nesterov && (momentum <= 0.0 || dampening != 0.0))
    throw ValueError("SGD: nesterov momentum requires a momentum > 0 and zero dampening");
}

void SGD::step() {
  no_grad guard;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].node()->has_grad) continue;  // not reached by backward: leave it alone
    ATTN_DISPATCH(params_[i].dtype(), sgd_update, params_[i], momentum_buffer_[i], *this);
  }
}

double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm) {
  // As torch.nn.utils.clip_grad_norm_: the norm of the per-parameter norms.
  double sum_of_squares = 0.0;
  for (const Tensor& p : params) {
    if (!p.defined() || !p.node()->has_grad) continue;
    const double norm = ATTN_DISPATCH(p.dtype(), grad_norm, p);
    sum_of_squares += norm * norm;
  }
  const double total = std::sqrt(sum_of_squares);
  const double clip_coef = max_norm / (total + 1e-6);
  if (clip_coef < 1.0)
    for (const Tensor& p : params)
      if (p.defined() && p.node()->has_grad) ATTN_DISPATCH(p.dtype(), scale_grad, p, clip_coef);
  return total;
}

}  // namespace attn::nn
