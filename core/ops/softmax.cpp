// softmax and log_softmax along one dim, computed stably: subtracting the max
// along the dim changes nothing mathematically (it cancels in the ratio) but
// keeps exp() from overflowing, so inputs of 1000 give no inf or NaN.
//
// The dim is walked lane by lane: seen as [outer, n, inner] (layout.hpp), the
// array holds outer * inner lanes of n values, `inner` apart in memory. Plain
// loops over lanes are several times faster here than xtensor expressions
// that broadcast a [..., 1, ...] max or sum back over the dim.
#include "../ops.hpp"
#include "../record.hpp"
#include "layout.hpp"

#include <xtensor/xadapt.hpp>
#include <xtensor/xnoalias.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace attn {

namespace {

// One lane of the dim: lane[j] is its j-th value, `stride` (= inner) apart in memory.
template <class T>
struct Lane {
  T* p;
  std::size_t stride;
  T& operator[](std::size_t j) const { return p[j * stride]; }
};

// Calls f(start) with the flat index where each of the outer * inner lanes starts.
template <class F>
void for_each_lane(const Blocks& b, F f) {
  for (std::size_t o = 0; o < b.outer; ++o)
    for (std::size_t k = 0; k < b.inner; ++k) f(o * b.n * b.inner + k);
}

// The max of a lane, or 0 if it is +-inf (a lane of -inf would give x - m = NaN).
template <class T>
T lane_max(Lane<const T> x, std::size_t n) {
  T m = -std::numeric_limits<T>::infinity();
  for (std::size_t j = 0; j < n; ++j) m = std::max(m, x[j]);
  return std::isfinite(m) ? m : T(0);
}

// exp of n contiguous values, in place. Through an xtensor expression on the
// adapted buffer, so that xsimd vectorizes it (std::exp one value at a time
// is several times slower).
template <class T>
void exp_inplace(T* v, std::size_t n) {
  auto lane = xt::adapt(v, n, xt::no_ownership(), std::array<std::size_t, 1>{n});
  xt::noalias(lane) = xt::exp(lane);  // noalias: in place, no temporary array
}

// What softmax and log_softmax share, for one lane x: its max m, and
// e_j = exp(x_j - m) written to the contiguous buffer e. Returns sum_j e_j.
template <class T>
T shifted_exp(Lane<const T> x, std::size_t n, T* e, T& m) {
  m = lane_max(x, n);
  for (std::size_t j = 0; j < n; ++j) e[j] = x[j] - m;
  exp_inplace(e, n);
  return std::accumulate(e, e + n, T(0));
}

template <class T>
Tensor softmax_(const Tensor& x, std::size_t axis) {
  const Blocks b = blocks_around(x.shape(), axis);
  const auto& v = x.data<T>();
  xt::xarray<T> y = xt::xarray<T>::from_shape(v.shape());
  std::vector<T> e(b.n);
  for_each_lane(b, [&](std::size_t start) {
    Lane<T> out{y.data() + start, b.inner};
    // softmax(x)_j = exp(x_j - m) / sum_i exp(x_i - m)
    T m;
    const T sum = shifted_exp(Lane<const T>{v.data() + start, b.inner}, b.n, e.data(), m);
    for (std::size_t j = 0; j < b.n; ++j) out[j] = e[j] / sum;
  });
  return record<T>("softmax", std::move(y), {x}, [b](Node<T>& out) {
    // d y_i/dx_j = y_i (delta_ij - y_j), so dx = y * (g - sum_i g_i y_i)
    xt::xarray<T> dx = xt::xarray<T>::from_shape(out.value.shape());
    for_each_lane(b, [&](std::size_t start) {
      Lane<const T> y{out.value.data() + start, b.inner}, g{out.grad.data() + start, b.inner};
      Lane<T> d{dx.data() + start, b.inner};
      T gy = 0;
      for (std::size_t j = 0; j < b.n; ++j) gy += g[j] * y[j];
      for (std::size_t j = 0; j < b.n; ++j) d[j] = y[j] * (g[j] - gy);
    });
    out.add_to_input_grad(0, std::move(dx));
  });
}

template <class T>
Tensor log_softmax_(const Tensor& x, std::size_t axis) {
  const Blocks b = blocks_around(x.shape(), axis);
  const auto& v = x.data<T>();
  xt::xarray<T> y = xt::xarray<T>::from_shape(v.shape());
  std::vector<T> e(b.n);
  for_each_lane(b, [&](std::size_t start) {
    Lane<const T> in{v.data() + start, b.inner};
    Lane<T> out{y.data() + start, b.inner};
    // log softmax(x)_j = x_j - log sum_i exp(x_i) = (x_j - m) - log sum_i exp(x_i - m)
    T m;
    const T log_sum = std::log(shifted_exp(in, b.n, e.data(), m));
    for (std::size_t j = 0; j < b.n; ++j) out[j] = in[j] - m - log_sum;
  });
  return record<T>("log_softmax", std::move(y), {x}, [b](Node<T>& out) {
    // d y_i/dx_j = delta_ij - softmax(x)_j, so dx = g - exp(y) * sum_i g_i
    xt::xarray<T> dx = xt::xarray<T>::from_shape(out.value.shape());
    std::vector<T> p(b.n);  // softmax(x) = exp(y) of one lane
    for_each_lane(b, [&](std::size_t start) {
      Lane<const T> y{out.value.data() + start, b.inner}, g{out.grad.data() + start, b.inner};
      Lane<T> d{dx.data() + start, b.inner};
      T g_sum = 0;
      for (std::size_t j = 0; j < b.n; ++j) {
        g_sum += g[j];
        p[j] = y[j];
      }
      exp_inplace(p.data(), b.n);
      for (std::size_t j = 0; j < b.n; ++j) d[j] = g[j] - p[j] * g_sum;
    });
    out.add_to_input_grad(0, std::move(dx));
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
