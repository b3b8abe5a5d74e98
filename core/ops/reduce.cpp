// Reductions over dims, with keepdim as in PyTorch.
#include "../ops.hpp"
#include "../record.hpp"

#include <xtensor/xmath.hpp>

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
    xt::xarray<T> g = out.grad;
    g.reshape(kept);
    out.add_to_input_grad(0, xt::broadcast(g * factor, out.input(0).value.shape()));
  });
}

std::size_t count(const Shape& shape, const std::vector<std::size_t>& axes) {
  std::size_t n = 1;
  for (std::size_t a : axes) n *= shape[a];
  return n;
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

}  // namespace attn
