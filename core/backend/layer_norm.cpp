// layer_norm: one fused op for LayerNorm, as PyTorch's F.layer_norm.
//
// Each row (the last n = prod(normalized_shape) values) is normalized:
//   mu = mean(x),  var = mean((x - mu)^2)  (biased),  rstd = 1 / sqrt(var + eps)
//   xhat = (x - mu) * rstd,                y = xhat * weight + bias
// Composed from mean, sub, mul, sqrt, div, mul and add, the same math takes
// about ten ops, each with its own pass over memory and its own saved array;
// fused, it is three passes forward and three back. tests/core/test_norm.cpp
// checks it against the composed version, value and gradient.
#include "fused.hpp"

#include "../kernels.hpp"
#include "../ops.hpp"
#include "../record.hpp"

#include <xtensor/xadapt.hpp>

#include <cmath>

namespace attn {

namespace {

// sum over j < n of value(j), in four interleaved partial sums. One running sum
// waits for each add to finish before the next; four independent ones keep the
// adder busy (about 3x faster here on rows of 128).
template <class T, class F>
T sum_of(std::size_t n, F value) {
  T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    s0 += value(j);
    s1 += value(j + 1);
    s2 += value(j + 2);
    s3 += value(j + 3);
  }
  for (; j < n; ++j) s0 += value(j);
  return (s0 + s1) + (s2 + s3);
}

// weight's values, or n ones when there is no weight (bias: n zeros), so the
// loops below need no branch and vectorize.
template <class T>
std::vector<T> values_or(const Tensor& t, std::size_t n, T fill) {
  if (!t.defined()) return std::vector<T>(n, fill);
  const xt::xarray<T>& v = t.data<T>();
  return std::vector<T>(v.begin(), v.end());
}

template <class T>
Tensor layer_norm_(const Tensor& x, std::size_t n, const Tensor& weight, const Tensor& bias, double eps) {
  const xt::xarray<T>& X = x.data<T>();
  const std::size_t rows = X.size() / n;
  const std::vector<T> w = values_or<T>(weight, n, T(1)), b = values_or<T>(bias, n, T(0));
  xt::xarray<T> y = xt::xarray<T>::from_shape(X.shape());
  std::vector<T> mean(rows), rstd(rows);  // per row, kept for backward
  for (std::size_t r = 0; r < rows; ++r) {
    const T* xr = X.data() + r * n;
    T* yr = y.data() + r * n;
    const T mu = sum_of<T>(n, [&](std::size_t j) { return xr[j]; }) / T(n);
    const T var = sum_of<T>(n, [&](std::size_t j) { return (xr[j] - mu) * (xr[j] - mu); }) / T(n);
    const T rs = T(1) / std::sqrt(var + T(eps));
    for (std::size_t j = 0; j < n; ++j) yr[j] = (xr[j] - mu) * rs * w[j] + b[j];  // xhat * weight + bias
    mean[r] = mu;
    rstd[r] = rs;
  }

  std::vector<Tensor> inputs{x};
  if (weight.defined()) inputs.push_back(weight);
  if (bias.defined()) inputs.push_back(bias);
  const bool has_w = weight.defined(), has_b = bias.defined();
  return record<T>("layer_norm", std::move(y), inputs,
                   [n, rows, has_w, has_b, w, mean = std::move(mean), rstd = std::move(rstd)](Node<T>& out) {
    const T* X = out.input(0).value.data();
    const T* G = out.grad.data();
    const std::size_t bias_at = has_w ? 2 : 1;
    const bool want_x = out.input_requires_grad(0);
    const bool want_w = has_w && out.input_requires_grad(1), want_b = has_b && out.input_requires_grad(bias_at);
    std::vector<T> dw(n, T(0)), db(n, T(0)), xhat(n), gh(n);
    xt::xarray<T> dx = want_x ? xt::xarray<T>::from_shape(out.input(0).value.shape()) : empty_array<T>();
    for (std::size_t r = 0; r < rows; ++r) {
      const T* xr = X + r * n;
      const T* gr = G + r * n;
      for (std::size_t j = 0; j < n; ++j) xhat[j] = (xr[j] - mean[r]) * rstd[r];
      // d weight = sum over rows of g * xhat;  d bias = sum over rows of g
      for (std::size_t j = 0; j < n; ++j) dw[j] += gr[j] * xhat[j];
      for (std::size_t j = 0; j < n; ++j) db[j] += gr[j];
      if (!want_x) continue;
      // with gh = g * weight (the gradient of xhat):
      // dx = rstd * (gh - mean(gh) - xhat * mean(gh * xhat))
      for (std::size_t j = 0; j < n; ++j) gh[j] = gr[j] * w[j];
      const T mean_gh = sum_of<T>(n, [&](std::size_t j) { return gh[j]; }) / T(n);
      const T mean_gh_xhat = sum_of<T>(n, [&](std::size_t j) { return gh[j] * xhat[j]; }) / T(n);
      T* dxr = dx.data() + r * n;
      for (std::size_t j = 0; j < n; ++j) dxr[j] = rstd[r] * (gh[j] - mean_gh - xhat[j] * mean_gh_xhat);
    }
    if (want_x) out.input(0).accumulate_grad(std::move(dx));
    if (want_w) out.input(1).accumulate_grad(xt::adapt(dw, out.input(1).shape()));
    if (want_b) out.input(bias_at).accumulate_grad(xt::adapt(db, out.input(bias_at).shape()));
  });
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  check_inputs("layer_norm", {&x});
  const Shape shape = x.shape();
  const std::size_t k = normalized_shape.size();
  if (k == 0 || shape.size() < k || !std::equal(normalized_shape.begin(), normalized_shape.end(), shape.end() - k))
    throw ShapeError("layer_norm: expected input [..., " + shape_str(normalized_shape).substr(1) + ", got " +
                     shape_str(shape));
  for (const Tensor* p : {&weight, &bias}) {
    if (!p->defined()) continue;
    check_inputs("layer_norm", {&x, p});
    if (p->shape() != normalized_shape)
      throw ShapeError(std::string("layer_norm: expected ") + (p == &weight ? "weight " : "bias ") +
                       shape_str(normalized_shape) + ", got " + shape_str(p->shape()));
  }
  if (!(eps >= 0.0)) throw ValueError("layer_norm: expected eps >= 0, got " + std::to_string(eps));
  std::size_t n = 1;
  for (std::size_t s : normalized_shape) n *= s;
  if (n == 0 || x.numel() == 0) throw ShapeError("layer_norm: expected a non-empty input, got " + shape_str(shape));
  if (!fused_ops_enabled()) {
    // Composed: (x - mean) / sqrt(var + eps) over the last k dims, * weight + bias
    std::vector<long> dims;
    for (std::size_t i = 0; i < k; ++i) dims.push_back(-1 - long(i));
    const Tensor centered = x - mean(x, dims, true);
    Tensor y = centered / sqrt(mean(centered * centered, dims, true) + eps);
    if (weight.defined()) y = y * weight;
    return bias.defined() ? y + bias : y;
  }
  return ATTN_DISPATCH(x.dtype(), layer_norm_, x, n, weight, bias, eps);
}

}  // namespace attn
