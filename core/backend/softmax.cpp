// The fused path's softmax and log_softmax (core/ops/softmax.cpp is the
// teaching version, on xtensor expressions), and the fused masked_softmax.
// The same stable math: x - max along the dim, so exp cannot overflow.
//
// The dim is walked lane by lane: seen as [outer, n, inner] (layout.hpp), the
// array holds outer * inner lanes of n values, `inner` apart in memory. Plain
// loops over lanes are several times faster here than xtensor expressions
// that broadcast a [..., 1, ...] max or sum back over the dim.
#include "fused.hpp"

#include "../kernels.hpp"
#include "../ops.hpp"
#include "../ops/layout.hpp"
#include "../record.hpp"
#include "vecmath.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace attn {

namespace {

// A stride of 1 that the compiler knows at compile time.
using Contiguous = std::integral_constant<std::size_t, 1>;

// One lane of the dim: lane[j] is its j-th value, `stride` (= inner) apart in memory.
// S is std::size_t, or Contiguous for the usual softmax over the last dim: then
// the lane loops below compile to plain vectorized loops over contiguous rows.
template <class T, class S>
struct Lane {
  T* p;
  S stride;
  T& operator[](std::size_t j) const { return p[j * stride]; }
};

// Calls f(start, stride) for each of the outer * inner lanes: the flat index where
// it starts, and its stride (Contiguous{} when inner == 1).
template <class F>
void for_each_lane(const Blocks& b, F f) {
  if (b.inner == 1) {
    for (std::size_t o = 0; o < b.outer; ++o) f(o * b.n, Contiguous{});
    return;
  }
  for (std::size_t o = 0; o < b.outer; ++o)
    for (std::size_t k = 0; k < b.inner; ++k) f(o * b.n * b.inner + k, b.inner);
}

// The max of a lane, or 0 if it is +-inf (a lane of -inf would give x - m = NaN).
template <class T, class S>
T lane_max(Lane<const T, S> x, std::size_t n) {
  T m = -std::numeric_limits<T>::infinity();
  for (std::size_t j = 0; j < n; ++j) m = std::max(m, x[j]);
  return std::isfinite(m) ? m : T(0);
}

// exp of n contiguous values, in place, through vecmath (the widest SIMD the CPU
// has). Called once on a whole array, not lane by lane: the attention weights'
// lanes are 20 values long, too short to fill the vector registers well.
template <class T>
void exp_inplace(T* v, std::size_t n) {
  vecmath::exp(v, v, n);
}

// shifted = x - (the max of x's lane), for every lane: all <= 0, so exp cannot overflow.
template <class T>
void subtract_lane_max(const T* x, const Blocks& b, T* shifted) {
  for_each_lane(b, [&](std::size_t start, auto stride) {
    using S = decltype(stride);
    Lane<const T, S> in{x + start, stride};
    Lane<T, S> out{shifted + start, stride};
    const T m = lane_max(in, b.n);
    for (std::size_t j = 0; j < b.n; ++j) out[j] = in[j] - m;
  });
}

template <class T, class S>
T lane_sum(Lane<const T, S> x, std::size_t n) {
  T s = 0;
  for (std::size_t j = 0; j < n; ++j) s += x[j];
  return s;
}

// Each lane divided by its sum. A lane whose sum is 0 (every entry -inf, or blocked
// in masked_softmax) stays all 0, as on the composed path (core/ops/softmax.cpp).
template <class T>
void divide_by_lane_sums(T* y, const Blocks& b) {
  for_each_lane(b, [&](std::size_t start, auto stride) {
    using S = decltype(stride);
    Lane<T, S> e{y + start, stride};
    const T sum = lane_sum(Lane<const T, S>{e.p, stride}, b.n);
    if (sum == T(0)) return;
    for (std::size_t j = 0; j < b.n; ++j) e[j] /= sum;
  });
}

// softmax's backward, shared with masked_softmax (where y = 0 on blocked entries,
// so their gradient comes out 0 too).
template <class T>
void softmax_backward(Node<T>& out, const Blocks& b) {
  // d y_i/dx_j = y_i (delta_ij - y_j), so dx = y * (g - sum_i g_i y_i)
  xt::xarray<T> dx = xt::xarray<T>::from_shape(out.value.shape());
  for_each_lane(b, [&](std::size_t start, auto stride) {
    using S = decltype(stride);
    Lane<const T, S> y{out.value.data() + start, stride};
    Lane<const T, S> g{out.grad.data() + start, stride};
    Lane<T, S> d{dx.data() + start, stride};
    T gy = 0;
    for (std::size_t j = 0; j < b.n; ++j) gy += g[j] * y[j];
    for (std::size_t j = 0; j < b.n; ++j) d[j] = y[j] * (g[j] - gy);
  });
  out.add_to_input_grad(0, std::move(dx));
}

template <class T>
Tensor softmax_(const Tensor& x, std::size_t axis) {
  const Blocks b = blocks_around(x.data<T>().shape(), axis);
  xt::xarray<T> y = xt::xarray<T>::from_shape(x.data<T>().shape());
  // softmax(x)_j = exp(x_j - m) / sum_i exp(x_i - m), in three passes over y:
  subtract_lane_max(x.data<T>().data(), b, y.data());  // y = x - m
  exp_inplace(y.data(), y.size());                     // y = exp(x - m)
  divide_by_lane_sums(y.data(), b);                    // y = y / sum of its lane
  return record<T>("softmax", std::move(y), {x}, [b](Node<T>& out) { softmax_backward(out, b); });
}

// `blocked` is already broadcast to x's shape. The same three passes as softmax,
// with blocked entries left out of the max and set to -inf, so that exp makes them 0.
template <class T>
Tensor masked_softmax_(const Tensor& x, const Mask& blocked, std::size_t axis) {
  const Blocks b = blocks_around(x.data<T>().shape(), axis);
  const T inf = std::numeric_limits<T>::infinity();
  const T* in = x.data<T>().data();
  xt::xarray<T> y = xt::xarray<T>::from_shape(x.data<T>().shape());
  for_each_lane(b, [&](std::size_t start, auto stride) {  // y = x - m over the open entries, -inf on blocked ones
    using S = decltype(stride);
    Lane<const T, S> v{in + start, stride};
    Lane<const bool, S> m{blocked.data() + start, stride};
    Lane<T, S> out{y.data() + start, stride};
    T mx = -inf;
    for (std::size_t j = 0; j < b.n; ++j)
      if (!m[j]) mx = std::max(mx, v[j]);
    if (!std::isfinite(mx)) mx = T(0);
    for (std::size_t j = 0; j < b.n; ++j) out[j] = m[j] ? -inf : v[j] - mx;
  });
  exp_inplace(y.data(), y.size());   // y = exp(x - m), 0 where blocked
  divide_by_lane_sums(y.data(), b);  // a lane blocked entirely has sum 0 and stays 0
  return record<T>("masked_softmax", std::move(y), {x}, [b](Node<T>& out) { softmax_backward(out, b); });
}

template <class T>
Tensor log_softmax_(const Tensor& x, std::size_t axis) {
  const Blocks b = blocks_around(x.data<T>().shape(), axis);
  // log softmax(x)_j = x_j - log sum_i exp(x_i) = (x_j - m) - log sum_i exp(x_i - m)
  xt::xarray<T> y = xt::xarray<T>::from_shape(x.data<T>().shape());
  subtract_lane_max(x.data<T>().data(), b, y.data());  // y = x - m
  xt::xarray<T> e = xt::xarray<T>::from_shape(y.shape());
  vecmath::exp(y.data(), e.data(), e.size());          // e = exp(x - m)
  for_each_lane(b, [&](std::size_t start, auto stride) {  // y = y - log sum of e's lane
    using S = decltype(stride);
    Lane<T, S> out{y.data() + start, stride};
    const T sum = lane_sum(Lane<const T, S>{e.data() + start, stride}, b.n);
    const T log_sum = sum == T(0) ? T(0) : std::log(sum);  // a lane of -inf stays -inf (log of softmax's 0), not NaN
    for (std::size_t j = 0; j < b.n; ++j) out[j] -= log_sum;
  });
  return record<T>("log_softmax", std::move(y), {x}, [b](Node<T>& out) {
    // d y_i/dx_j = delta_ij - softmax(x)_j, so dx = g - exp(y) * sum_i g_i
    xt::xarray<T> dx = xt::xarray<T>::from_shape(out.value.shape());
    vecmath::exp(out.value.data(), dx.data(), dx.size());  // dx = softmax(x) = exp(y), for now
    for_each_lane(b, [&](std::size_t start, auto stride) {
      using S = decltype(stride);
      Lane<const T, S> g{out.grad.data() + start, stride};
      Lane<T, S> d{dx.data() + start, stride};
      const T g_sum = lane_sum(g, b.n);
      for (std::size_t j = 0; j < b.n; ++j) d[j] = g[j] - d[j] * g_sum;
    });
    out.add_to_input_grad(0, std::move(dx));
  });
}

}  // namespace

Tensor fused::softmax(const Tensor& x, std::size_t axis) { return ATTN_DISPATCH(x.dtype(), softmax_, x, axis); }

Tensor fused::log_softmax(const Tensor& x, std::size_t axis) {
  return ATTN_DISPATCH(x.dtype(), log_softmax_, x, axis);
}

Tensor masked_softmax(const Tensor& x, const Mask& mask, long dim) {
  check_inputs("masked_softmax", {&x});
  const std::size_t axis = normalize_dim(dim, x.dim(), "masked_softmax");
  if (broadcast_shape("masked_softmax", shape_of(mask), x.shape()) != x.shape())
    throw ShapeError("masked_softmax: mask of shape " + shape_str(shape_of(mask)) +
                     " does not broadcast to x of shape " + shape_str(x.shape()));
  if (!fused_ops_enabled()) {
    // Composed: blocked scores to -1e30 (exp gives exactly 0), softmax, blocked weights to 0
    // (a lane blocked entirely was uniform: now all 0)
    return masked_fill(softmax(masked_fill(x, mask, -1e30), dim), mask, 0.0);
  }
  return ATTN_DISPATCH(x.dtype(), masked_softmax_, x, broadcast_to(mask, x.shape()), axis);
}

}  // namespace attn
