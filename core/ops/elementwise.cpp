// Elementwise ops. Binary ops broadcast as numpy does (broadcast_shape in
// layout.hpp checks the shapes); Node::accumulate_grad sums each gradient back
// over the broadcast axes.
#include "../ops.hpp"
#include "../record.hpp"
#include "../kernels.hpp"
#include "layout.hpp"

#include <xtensor/xmath.hpp>

#include <cmath>
#include <optional>

namespace attn {

namespace {

// The shape two operands broadcast to (layout.hpp checks it, naming op), or
// nothing when their shapes already agree, as they mostly do (then no Shape is built).
std::optional<Shape> broadcast_target(const char* op, const Tensor& a, const Tensor& b) {
  if (a.node()->same_shape_as(*b.node())) return std::nullopt;
  return broadcast_shape(op, a.shape(), b.shape());
}

// v as an array of the target shape: v itself if it has that shape (or there is no
// target), else its broadcast copy, kept in `copy`. xtensor could broadcast v lazily
// inside the expression, but its strided loop over a stretched [..., 1] operand is
// much slower than this contiguous copy (layout.hpp) followed by a plain,
// vectorized loop (docs/benchmarks.md). (`copy` stays empty, no array built, when v needs no stretching.)
template <class T>
const xt::xarray<T>& stretched(const xt::xarray<T>& v, const std::optional<Shape>& shape,
                               std::optional<xt::xarray<T>>& copy) {
  if (!shape || (v.dimension() == shape->size() && std::equal(shape->begin(), shape->end(), v.shape().begin())))
    return v;
  copy = broadcast_to(v, *shape);
  return *copy;
}

// The same in backward, stretching v to the shape of the op's output.
template <class T>
const xt::xarray<T>& stretched_like(const xt::xarray<T>& v, const xt::xarray<T>& like,
                                    std::optional<xt::xarray<T>>& copy) {
  if (std::equal(v.shape().begin(), v.shape().end(), like.shape().begin(), like.shape().end())) return v;
  copy = broadcast_to(v, shape_of(like));
  return *copy;
}

template <class T>
Tensor add_(const Tensor& a, const Tensor& b) {
  const std::optional<Shape> shape = broadcast_target("add", a, b);
  std::optional<xt::xarray<T>> a_copy, b_copy;  // filled only when stretched
  xt::xarray<T> y = stretched(a.data<T>(), shape, a_copy) + stretched(b.data<T>(), shape, b_copy);
  return record<T>("add", std::move(y), {a, b}, [](Node<T>& out) {
    // d(a + b)/da = 1, d(a + b)/db = 1 (b takes the gradient itself: its last use)
    out.add_to_input_grad(0, out.grad);
    out.add_to_input_grad(1, out.take_grad());
  });
}

template <class T>
Tensor sub_(const Tensor& a, const Tensor& b) {
  const std::optional<Shape> shape = broadcast_target("sub", a, b);
  std::optional<xt::xarray<T>> a_copy, b_copy;  // filled only when stretched
  xt::xarray<T> y = stretched(a.data<T>(), shape, a_copy) - stretched(b.data<T>(), shape, b_copy);
  return record<T>("sub", std::move(y), {a, b}, [](Node<T>& out) {
    // d(a - b)/da = 1, d(a - b)/db = -1 (a takes the gradient itself: its last use)
    out.add_to_input_grad(1, -out.grad);
    out.add_to_input_grad(0, out.take_grad());
  });
}

template <class T>
Tensor mul_(const Tensor& a, const Tensor& b) {
  const std::optional<Shape> shape = broadcast_target("mul", a, b);
  std::optional<xt::xarray<T>> a_copy, b_copy;  // filled only when stretched
  xt::xarray<T> y = stretched(a.data<T>(), shape, a_copy) * stretched(b.data<T>(), shape, b_copy);
  return record<T>("mul", std::move(y), {a, b}, [](Node<T>& out) {
    // d(a * b)/da = b, d(a * b)/db = a
    std::optional<xt::xarray<T>> a_copy, b_copy;  // filled only when stretched
    if (out.input_requires_grad(0))
      out.add_to_input_grad(0, out.grad * stretched_like(out.input(1).value, out.value, b_copy));
    if (out.input_requires_grad(1))
      out.add_to_input_grad(1, out.grad * stretched_like(out.input(0).value, out.value, a_copy));
  });
}

template <class T>
Tensor div_(const Tensor& a, const Tensor& b) {
  const std::optional<Shape> shape = broadcast_target("div", a, b);
  std::optional<xt::xarray<T>> a_copy, b_copy;  // filled only when stretched
  xt::xarray<T> y = stretched(a.data<T>(), shape, a_copy) / stretched(b.data<T>(), shape, b_copy);
  return record<T>("div", std::move(y), {a, b}, [](Node<T>& out) {
    // d(a / b)/da = 1 / b, d(a / b)/db = -a / b^2 = -(a / b) / b
    std::optional<xt::xarray<T>> b_copy;  // filled only when stretched
    const auto& b = stretched_like(out.input(1).value, out.value, b_copy);
    out.add_to_input_grad(0, out.grad / b);
    out.add_to_input_grad(1, -out.grad * out.value / b);
  });
}

template <class T>
Tensor add_scalar_(const Tensor& a, double s) {
  xt::xarray<T> y = a.data<T>() + static_cast<T>(s);
  return record<T>("add", std::move(y), {a}, [](Node<T>& out) {
    // d(a + s)/da = 1
    out.add_to_input_grad(0, out.take_grad());
  });
}

template <class T>
Tensor mul_scalar_(const Tensor& a, double s) {
  const T factor = static_cast<T>(s);
  xt::xarray<T> y = a.data<T>() * factor;
  return record<T>("mul", std::move(y), {a}, [factor](Node<T>& out) {
    // d(a * s)/da = s
    xt::xarray<T> g = out.take_grad();
    g *= factor;  // in place
    out.add_to_input_grad(0, std::move(g));
  });
}

template <class T>
Tensor neg_(const Tensor& x) {
  xt::xarray<T> y = -x.data<T>();
  return record<T>("neg", std::move(y), {x}, [](Node<T>& out) {
    // d(-x)/dx = -1
    out.add_to_input_grad(0, -out.grad);
  });
}

// x^p elementwise. A negative p is computed as 1 / x^|p|: xsimd 8.1's pow gives
// 0 instead of inf for pow(0, p < 0) (xtensor-stack/xsimd#995).
template <class T>
xt::xarray<T> power(const xt::xarray<T>& x, T p) {
  if (p < 0) return T(1) / xt::pow(x, -p);
  return xt::pow(x, p);
}

template <class T>
Tensor pow_(const Tensor& x, double exponent) {
  const T p = static_cast<T>(exponent);
  xt::xarray<T> y = power(x.data<T>(), p);
  return record<T>("pow", std::move(y), {x}, [p](Node<T>& out) {
    // d x^p / dx = p * x^(p-1); for p = 0 that is 0, even at x = 0 (not 0 * inf)
    if (p == 0) return out.add_to_input_grad(0, filled(out.grad.shape(), T(0)));
    out.add_to_input_grad(0, out.grad * p * power(out.input(0).value, p - 1));
  });
}

template <class T>
Tensor exp_(const Tensor& x) {
  xt::xarray<T> y = xt::xarray<T>::from_shape(x.data<T>().shape());
  kernels::exp(x.data<T>().data(), y.data(), y.size());
  return record<T>("exp", std::move(y), {x}, [](Node<T>& out) {
    // d exp(x)/dx = exp(x)
    out.add_to_input_grad(0, out.grad * out.value);
  });
}

template <class T>
Tensor log_(const Tensor& x) {
  xt::xarray<T> y = xt::log(x.data<T>());
  return record<T>("log", std::move(y), {x}, [](Node<T>& out) {
    // d log(x)/dx = 1 / x
    out.add_to_input_grad(0, out.grad / out.input(0).value);
  });
}

template <class T>
Tensor sqrt_(const Tensor& x) {
  xt::xarray<T> y = xt::sqrt(x.data<T>());
  return record<T>("sqrt", std::move(y), {x}, [](Node<T>& out) {
    // d sqrt(x)/dx = 1 / (2 sqrt(x))
    out.add_to_input_grad(0, out.grad / (T(2) * out.value));
  });
}

template <class T>
Tensor abs_(const Tensor& x) {
  xt::xarray<T> y = xt::abs(x.data<T>());
  return record<T>("abs", std::move(y), {x}, [](Node<T>& out) {
    // d |x|/dx = sign(x)  (0 at 0, as PyTorch)
    out.add_to_input_grad(0, out.grad * xt::sign(out.input(0).value));
  });
}

template <class T>
Tensor tanh_(const Tensor& x) {
  xt::xarray<T> y = xt::xarray<T>::from_shape(x.data<T>().shape());
  kernels::tanh(x.data<T>().data(), y.data(), y.size());
  return record<T>("tanh", std::move(y), {x}, [](Node<T>& out) {
    // d tanh(x)/dx = 1 - tanh(x)^2
    out.add_to_input_grad(0, out.grad * (T(1) - out.value * out.value));
  });
}

template <class T>
Tensor sigmoid_(const Tensor& x) {
  xt::xarray<T> y = xt::xarray<T>::from_shape(x.data<T>().shape());
  kernels::sigmoid(x.data<T>().data(), y.data(), y.size());
  return record<T>("sigmoid", std::move(y), {x}, [](Node<T>& out) {
    // d sigmoid(x)/dx = sigmoid(x) * (1 - sigmoid(x))
    out.add_to_input_grad(0, out.grad * out.value * (T(1) - out.value));
  });
}

template <class T>
Tensor relu_(const Tensor& x) {
  xt::xarray<T> y = xt::maximum(x.data<T>(), T(0));
  return record<T>("relu", std::move(y), {x}, [](Node<T>& out) {
    // d relu(x)/dx = 1 where x > 0, else 0: the gradient zeroed in place where x <= 0
    xt::xarray<T> g = out.take_grad();
    const T* x = out.input(0).value.data();
    for (std::size_t i = 0; i < g.size(); ++i) g.data()[i] = x[i] > T(0) ? g.data()[i] : T(0);
    out.add_to_input_grad(0, std::move(g));
  });
}

template <class T>
Tensor gelu_(const Tensor& x) {
  const T inv_sqrt2 = static_cast<T>(1.0 / std::sqrt(2.0));
  const auto& v = x.data<T>();
  xt::xarray<T> y = v * T(0.5) * (T(1) + xt::erf(v * inv_sqrt2));
  return record<T>("gelu", std::move(y), {x}, [inv_sqrt2](Node<T>& out) {
    // d gelu(x)/dx = Phi(x) + x * phi(x), Phi the normal CDF, phi its density
    const T inv_sqrt_2pi = static_cast<T>(0.3989422804014327);
    const auto& v = out.input(0).value;
    out.add_to_input_grad(0, out.grad * (T(0.5) * (T(1) + xt::erf(v * inv_sqrt2)) +
                                         v * inv_sqrt_2pi * xt::exp(T(-0.5) * v * v)));
  });
}

template <class From, class To>
Tensor cast(const Tensor& x) {
  xt::xarray<To> y = xt::cast<To>(x.data<From>());
  return record<To>("to", std::move(y), {x}, [](Node<To>& out) {
    // d to(x)/dx = 1, cast back to the input's scalar type
    auto& in = static_cast<Node<From>&>(*out.inputs[0]);
    if (in.requires_grad) in.accumulate_grad(xt::cast<From>(out.grad));
  });
}
}  // namespace

Tensor Tensor::to(Dtype target) const {
  if (target == dtype()) return *this;
  return target == Dtype::Float32 ? cast<double, float>(*this) : cast<float, double>(*this);
}

void check_inputs(const char* op, std::initializer_list<const Tensor*> inputs) {
  const Tensor* first = nullptr;
  for (const Tensor* t : inputs) {
    if (!t->defined()) throw ValueError(std::string(op) + ": an input tensor is undefined");
    if (first && t->dtype() != first->dtype())
      throw ValueError(std::string(op) + ": inputs must share a dtype, got " + dtype_name(first->dtype()) +
                       " and " + dtype_name(t->dtype()) + " (convert one with .to())");
    if (!first) first = t;
  }
}

Tensor add(const Tensor& a, const Tensor& b) { check_inputs("add", {&a, &b}); return ATTN_DISPATCH(a.dtype(), add_, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { check_inputs("sub", {&a, &b}); return ATTN_DISPATCH(a.dtype(), sub_, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { check_inputs("mul", {&a, &b}); return ATTN_DISPATCH(a.dtype(), mul_, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { check_inputs("div", {&a, &b}); return ATTN_DISPATCH(a.dtype(), div_, a, b); }
Tensor add(const Tensor& a, double b) { check_inputs("add", {&a}); return ATTN_DISPATCH(a.dtype(), add_scalar_, a, b); }
Tensor mul(const Tensor& a, double b) { check_inputs("mul", {&a}); return ATTN_DISPATCH(a.dtype(), mul_scalar_, a, b); }
Tensor neg(const Tensor& x) { check_inputs("neg", {&x}); return ATTN_DISPATCH(x.dtype(), neg_, x); }
Tensor pow(const Tensor& x, double p) { check_inputs("pow", {&x}); return ATTN_DISPATCH(x.dtype(), pow_, x, p); }
Tensor exp(const Tensor& x) { check_inputs("exp", {&x}); return ATTN_DISPATCH(x.dtype(), exp_, x); }
Tensor log(const Tensor& x) { check_inputs("log", {&x}); return ATTN_DISPATCH(x.dtype(), log_, x); }
Tensor sqrt(const Tensor& x) { check_inputs("sqrt", {&x}); return ATTN_DISPATCH(x.dtype(), sqrt_, x); }
Tensor abs(const Tensor& x) { check_inputs("abs", {&x}); return ATTN_DISPATCH(x.dtype(), abs_, x); }
Tensor tanh(const Tensor& x) { check_inputs("tanh", {&x}); return ATTN_DISPATCH(x.dtype(), tanh_, x); }
Tensor sigmoid(const Tensor& x) { check_inputs("sigmoid", {&x}); return ATTN_DISPATCH(x.dtype(), sigmoid_, x); }
Tensor relu(const Tensor& x) { check_inputs("relu", {&x}); return ATTN_DISPATCH(x.dtype(), relu_, x); }
Tensor gelu(const Tensor& x) { check_inputs("gelu", {&x}); return ATTN_DISPATCH(x.dtype(), gelu_, x); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& x) { return neg(x); }
Tensor operator+(const Tensor& a, double b) { return add(a, b); }
Tensor operator+(double a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, double b) { return add(a, -b); }
Tensor operator-(double a, const Tensor& b) { return add(neg(b), a); }
Tensor operator*(const Tensor& a, double b) { return mul(a, b); }
Tensor operator*(double a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, double b) { return mul(a, 1.0 / b); }
Tensor operator/(double a, const Tensor& b) { return mul(pow(b, -1.0), a); }

}  // namespace attn
