// softmax and log_softmax along one dim, computed stably: subtracting the max
// along the dim changes nothing mathematically (it cancels in the ratio) but
// keeps exp() from overflowing, so inputs of 1000 give no inf or NaN.
#include "../ops.hpp"
#include "../record.hpp"

#include <xtensor/xmath.hpp>

namespace attn {

namespace {

const auto keep = xt::keep_dims | xt::evaluation_strategy::immediate;  // reductions keep the dim as size 1

// x - max(x) along axis: every value is <= 0, so exp() of it cannot overflow.
template <class T>
xt::xarray<T> minus_max(const xt::xarray<T>& x, std::size_t axis) {
  xt::xarray<T> m = xt::amax(x, {axis}, keep);  // [..., 1, ...]: broadcasts back over the dim
  m = xt::where(xt::isfinite(m), m, T(0));      // a row of -inf would give x - m = NaN
  return x - m;
}

template <class T>
Tensor softmax_(const Tensor& x, std::size_t axis) {
  xt::xarray<T> e = xt::exp(minus_max(x.data<T>(), axis));
  xt::xarray<T> y = e / xt::sum(e, {axis}, keep);  // softmax(x)_i = exp(x_i) / sum_j exp(x_j)
  return record<T>("softmax", std::move(y), {x}, [axis](Node<T>& out) {
    // d y_i/dx_j = y_i (delta_ij - y_j), so dx = y * (g - sum(g * y))
    const auto& y = out.value;
    xt::xarray<T> gy = out.grad * y;
    out.add_to_input_grad(0, y * (out.grad - xt::sum(gy, {axis}, keep)));
  });
}

template <class T>
Tensor log_softmax_(const Tensor& x, std::size_t axis) {
  xt::xarray<T> shifted = minus_max(x.data<T>(), axis);
  // log softmax(x)_i = x_i - log sum_j exp(x_j) = (x_i - m) - log sum_j exp(x_j - m)
  xt::xarray<T> y = shifted - xt::log(xt::sum(xt::exp(shifted), {axis}, keep));
  return record<T>("log_softmax", std::move(y), {x}, [axis](Node<T>& out) {
    // d y_i/dx_j = delta_ij - softmax(x)_j, so dx = g - exp(y) * sum(g)
    out.add_to_input_grad(0, out.grad - xt::exp(out.value) * xt::sum(out.grad, {axis}, keep));
  });
}

}  // namespace

Tensor softmax(const Tensor& x, long dim) {
  check_inputs("softmax", {&x});
  return ATTN_DISPATCH(x.dtype(), softmax_, x, normalize_dim(dim, x.dim(), "softmax"));
}

Tensor log_softmax(const Tensor& x, long dim) {
  check_inputs("log_softmax", {&x});
  return ATTN_DISPATCH(x.dtype(), log_softmax_, x, normalize_dim(dim, x.dim(), "log_softmax"));
}

}  // namespace attn
