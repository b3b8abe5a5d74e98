// Reductions over dims, with keepdim as in PyTorch: sum, mean, max, logsumexp.
#include "../ops.hpp"
#include "../record.hpp"
#include "layout.hpp"

#include <xtensor/xmath.hpp>

#include <cmath>

namespace attn {

namespace {

// Normalized, sorted, de-duplicated dims; empty `dims` means all of them.
std::vector<std::size_t> reduction_axes(const char* op, const Tensor& x, const std::vector<long>& dims) {
  std::vector<std::size_t> axes;
  if (dims.empty())
    for (std::size_t d = 0; d < x.dim(); ++d) axes.push_back(d);
  for (long d : dims) axes.push_back(normalize_dim(d, x.dim(), op));
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    throw ShapeError(std::string(op) + ": a dim appears twice in the dims list");
  return axes;
}

// The input shape with the reduced axes set to 1: the gradient broadcasts from it.
Shape kept_shape(const Shape& shape, const std::vector<std::size_t>& axes) {
  Shape kept = shape;
  for (std::size_t a : axes) kept[a] = 1;
  return kept;
}

Shape reduced_shape(const Shape& shape, const std::vector<std::size_t>& axes, bool keepdim) {
  if (keepdim) return kept_shape(shape, axes);
  Shape out;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (!std::binary_search(axes.begin(), axes.end(), d)) out.push_back(shape[d]);
  return out;
}

template <class T>
Tensor sum_(const Tensor& x, std::vector<std::size_t> axes, bool keepdim, double scale, const char* op) {
  const Shape kept = kept_shape(x.shape(), axes);
  xt::xarray<T> y = xt::sum(x.data<T>(), axes, xt::evaluation_strategy::immediate);
  if (scale != 1.0) y *= static_cast<T>(scale);
  y.reshape(reduced_shape(x.shape(), axes, keepdim));
  const T factor = static_cast<T>(scale);
  return record<T>(op, std::move(y), {x}, [kept, factor](Node<T>& out) {
    // d sum(x)/dx_i = 1 (mean: 1/n): the gradient is copied back over the reduced axes
    xt::xarray<T> g = out.grad * factor;
    g.reshape(kept);
    out.add_to_input_grad(0, broadcast_to(g, out.input(0).shape()));  // (layout.hpp: faster than xt::broadcast)
  });
}

std::size_t count(const Shape& shape, const std::vector<std::size_t>& axes) {
  std::size_t n = 1;
  for (std::size_t a : axes) n *= shape[a];
  return n;
}

// Flat index of element (o, j, k) of an array seen as [outer, n, inner] (layout.hpp).
std::size_t at(const Blocks& s, std::size_t o, std::size_t j, std::size_t k) { return (o * s.n + j) * s.inner + k; }

// The max over the middle dim of x seen as [outer, n, inner]; out_shape is
// [outer, inner] laid out as the result wants it (keepdim or not, or []).
template <class T>
Tensor max_(const Tensor& x, Blocks s, const Shape& out_shape) {
  const auto& v = x.data<T>();
  xt::xarray<T> y = xt::xarray<T>::from_shape(out_shape);  // [outer, inner]
  std::vector<std::size_t> argmax(y.size());                // where each maximum was found along n
  for (std::size_t o = 0; o < s.outer; ++o)
    for (std::size_t i = 0; i < s.inner; ++i) {
      std::size_t best = 0;
      for (std::size_t j = 1; j < s.n && !std::isnan(v.flat(at(s, o, best, i))); ++j) {
        const T candidate = v.flat(at(s, o, j, i));
        // strict >: the first maximum wins; a NaN wins at once, as in PyTorch
        if (std::isnan(candidate) || candidate > v.flat(at(s, o, best, i))) best = j;
      }
      y.flat(o * s.inner + i) = v.flat(at(s, o, best, i));
      argmax[o * s.inner + i] = best;
    }
  return record<T>("max", std::move(y), {x}, [s, argmax](Node<T>& out) {
    // d max(x)/dx_j = 1 for the (first) maximum, 0 elsewhere
    xt::xarray<T> dx = filled(out.input(0).value.shape(), T(0));
    for (std::size_t o = 0; o < s.outer; ++o)
      for (std::size_t i = 0; i < s.inner; ++i)
        dx.flat(at(s, o, argmax[o * s.inner + i], i)) = out.grad.flat(o * s.inner + i);
    out.add_to_input_grad(0, std::move(dx));
  });
}

template <class T>
Tensor logsumexp_(const Tensor& x, std::size_t axis, bool keepdim) {
  const auto& v = x.data<T>();
  const Shape kept = kept_shape(x.shape(), {axis});
  // Subtracting the max m keeps exp() from overflowing: log sum exp(x) = m + log sum exp(x - m).
  // A row of -inf has m = -inf and x - m = NaN, so there m = 0 is used instead.
  xt::xarray<T> m = xt::amax(v, {axis}, xt::keep_dims | xt::evaluation_strategy::immediate);  // kept shape
  m = xt::where(xt::isfinite(m), m, T(0));
  xt::xarray<T> y = m + xt::log(xt::sum(xt::exp(v - m), {axis}, xt::keep_dims | xt::evaluation_strategy::immediate));
  y.reshape(reduced_shape(x.shape(), {axis}, keepdim));
  return record<T>("logsumexp", std::move(y), {x}, [kept](Node<T>& out) {
    // d logsumexp(x)/dx_i = exp(x_i - logsumexp(x)) = softmax(x)_i
    xt::xarray<T> y = out.value, g = out.grad;
    y.reshape(kept);  // put the reduced dim back as size 1 so it broadcasts
    g.reshape(kept);
    out.add_to_input_grad(0, g * xt::exp(out.input(0).value - y));
  });
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<long>& dims, bool keepdim) {
  check_inputs("sum", {&x});
  return ATTN_DISPATCH(x.dtype(), sum_, x, reduction_axes("sum", x, dims), keepdim, 1.0, "sum");
}
Tensor sum(const Tensor& x) { return sum(x, {}, false); }

Tensor mean(const Tensor& x, const std::vector<long>& dims, bool keepdim) {
  check_inputs("mean", {&x});
  const auto axes = reduction_axes("mean", x, dims);
  const std::size_t n = count(x.shape(), axes);
  if (n == 0) throw ShapeError("mean: cannot average over zero elements, shape " + shape_str(x.shape()));
  return ATTN_DISPATCH(x.dtype(), sum_, x, axes, keepdim, 1.0 / static_cast<double>(n), "mean");
}
Tensor mean(const Tensor& x) { return mean(x, {}, false); }

Tensor max(const Tensor& x) {
  check_inputs("max", {&x});
  if (x.numel() == 0) throw ShapeError("max: cannot take the max of an empty tensor, shape " + shape_str(x.shape()));
  // (PyTorch splits this gradient evenly among tied maxima; attn gives it to the first, as max(x, dim) does.)
  const Blocks all{1, x.numel(), 1};  // every element in the middle dim
  return ATTN_DISPATCH(x.dtype(), max_, x, all, Shape{});
}

Tensor max(const Tensor& x, long dim, bool keepdim) {
  check_inputs("max", {&x});
  const std::size_t axis = normalize_dim(dim, x.dim(), "max");
  if (x.shape()[axis] == 0)
    throw ShapeError("max: cannot reduce dim " + std::to_string(dim) + " of size 0, shape " + shape_str(x.shape()));
  return ATTN_DISPATCH(x.dtype(), max_, x, blocks_around(x.shape(), axis), reduced_shape(x.shape(), {axis}, keepdim));
}

Tensor logsumexp(const Tensor& x, long dim, bool keepdim) {
  check_inputs("logsumexp", {&x});
  return ATTN_DISPATCH(x.dtype(), logsumexp_, x, normalize_dim(dim, x.dim(), "logsumexp"), keepdim);
}

}  // namespace attn
