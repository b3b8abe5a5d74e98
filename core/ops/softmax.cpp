// softmax and log_softmax along one dim, computed stably: subtracting the max
// m along the dim changes nothing mathematically (it cancels in the ratio) but
// keeps exp() from overflowing, so inputs of 1000 give no inf or NaN.
// (With fused ops on, core/kernels.hpp, the backend's lane loops run instead.)
#include "../kernels.hpp"
#include "../ops.hpp"
#include "../record.hpp"

#include <xtensor/xmath.hpp>
#include <xtensor/xsort.hpp>

namespace attn {

namespace {

const auto kKeep = xt::keep_dims | xt::evaluation_strategy::immediate;  // a reduced dim stays, as size 1

// The max along axis, kept as a size-1 dim so it broadcasts back: 0 where it is
// +-inf (a lane of -inf would give x - m = NaN).
template <class T>
xt::xarray<T> lane_max(const xt::xarray<T>& x, std::size_t axis) {
  xt::xarray<T> m = xt::amax(x, {axis}, kKeep);
  return xt::where(xt::isfinite(m), m, T(0));
}

// The sum of exp(x - m) along axis, with 1 in place of 0: a lane of -inf (every key
// masked) sums to 0, and dividing by 1 leaves its weights 0 instead of 0/0 = NaN.
template <class T>
xt::xarray<T> lane_sum_or_one(const xt::xarray<T>& e, std::size_t axis) {
  xt::xarray<T> s = xt::sum(e, {axis}, kKeep);
  return xt::where(xt::equal(s, T(0)), T(1), s);
}

template <class T>
Tensor softmax_(const Tensor& x, std::size_t axis) {
  const xt::xarray<T>& v = x.data<T>();
  // softmax(x)_j = exp(x_j - m) / sum_i exp(x_i - m)
  xt::xarray<T> e = xt::exp(v - lane_max(v, axis));
  xt::xarray<T> y = e / lane_sum_or_one(e, axis);  // a lane of -inf gives 0, not NaN
  return record<T>("softmax", std::move(y), {x}, [axis](Node<T>& out) {
    // d y_i/dx_j = y_i (delta_ij - y_j), so dx = y * (g - sum_i g_i y_i)
    const xt::xarray<T>& y = out.value;
    xt::xarray<T> gy = xt::sum(out.grad * y, {axis}, kKeep);
    out.add_to_input_grad(0, y * (out.grad - gy));
  });
}

template <class T>
Tensor log_softmax_(const Tensor& x, std::size_t axis) {
  const xt::xarray<T>& v = x.data<T>();
  // log softmax(x)_j = (x_j - m) - log sum_i exp(x_i - m); a lane of -inf gives -inf (log of softmax's 0)
  xt::xarray<T> shifted = v - lane_max(v, axis);
  xt::xarray<T> y = shifted - xt::log(lane_sum_or_one(xt::xarray<T>(xt::exp(shifted)), axis));
  return record<T>("log_softmax", std::move(y), {x}, [axis](Node<T>& out) {
    // d y_i/dx_j = delta_ij - softmax(x)_j, so dx = g - exp(y) * sum_i g_i
    xt::xarray<T> g_sum = xt::sum(out.grad, {axis}, kKeep);
    out.add_to_input_grad(0, out.grad - xt::exp(out.value) * g_sum);
  });
}

}  // namespace

Tensor softmax(const Tensor& x, long dim) {
  check_inputs("softmax", {&x});
  const std::size_t axis = normalize_dim(dim, x.dim(), "softmax");
  if (fused_ops_enabled()) return fused::softmax(x, axis);
  return ATTN_DISPATCH(x.dtype(), softmax_, x, axis);
}

Tensor log_softmax(const Tensor& x, long dim) {
  check_inputs("log_softmax", {&x});
  const std::size_t axis = normalize_dim(dim, x.dim(), "log_softmax");
  if (fused_ops_enabled()) return fused::log_softmax(x, axis);
  return ATTN_DISPATCH(x.dtype(), log_softmax_, x, axis);
}

}  // namespace attn
