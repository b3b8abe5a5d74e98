// Ops that rearrange values without computing anything: transpose, permute,
// reshape, unsqueeze, squeeze and expand. Each returns a new contiguous
// row-major array; its backward puts the gradient back into the input's layout.
#include "../ops.hpp"
#include "../record.hpp"
#include "layout.hpp"

#include <algorithm>

namespace attn {

namespace {

std::string dims_str(const std::vector<long>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

template <class T>
Tensor permute_(const Tensor& x, const std::vector<std::size_t>& perm, const char* op) {
  xt::xarray<T> y = permuted(x.data<T>(), perm);
  std::vector<std::size_t> inverse(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = i;
  return record<T>(op, std::move(y), {x}, [inverse](Node<T>& out) {
    // a permutation only moves values: the gradient moves back by the inverse permutation
    out.add_to_input_grad(0, permuted(out.grad, inverse));
  });
}

// Same values in the same row-major order, read with a new shape.
template <class T>
Tensor reshape_(const Tensor& x, const Shape& shape, const char* op) {
  xt::xarray<T> y = copy_of(x.data<T>());
  y.reshape(shape);
  return record<T>(op, std::move(y), {x}, [](Node<T>& out) {
    // d reshape(x)/dx = identity on the row-major order: the gradient takes x's shape back
    xt::xarray<T> g = out.take_grad();
    g.reshape(out.input(0).shape());
    out.add_to_input_grad(0, std::move(g));
  });
}

template <class T>
Tensor expand_(const Tensor& x, const Shape& shape) {
  xt::xarray<T> y = broadcast_to(x.data<T>(), shape);
  return record<T>("expand", std::move(y), {x}, [](Node<T>& out) {
    // each input value was copied to many outputs: its gradient is the sum over those copies
    out.add_to_input_grad(0, sum_to_shape(out.grad, out.input(0).shape()));
  });
}

}  // namespace

Tensor permute(const Tensor& x, const std::vector<long>& dims) {
  check_inputs("permute", {&x});
  if (dims.size() != x.dim())
    throw ShapeError("permute: expected " + std::to_string(x.dim()) + " dims for a tensor of shape " +
                     shape_str(x.shape()) + ", got " + dims_str(dims));
  std::vector<std::size_t> perm;
  std::vector<bool> seen(x.dim(), false);
  for (long d : dims) {
    const std::size_t p = normalize_dim(d, x.dim(), "permute");
    if (seen[p]) throw ShapeError("permute: dims " + dims_str(dims) + " repeat dim " + std::to_string(p));
    seen[p] = true;
    perm.push_back(p);
  }
  return ATTN_DISPATCH(x.dtype(), permute_, x, perm, "permute");
}

Tensor transpose(const Tensor& x, long dim0, long dim1) {
  check_inputs("transpose", {&x});
  const std::size_t a = normalize_dim(dim0, x.dim(), "transpose"), b = normalize_dim(dim1, x.dim(), "transpose");
  std::vector<std::size_t> perm(x.dim());
  for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  std::swap(perm[a], perm[b]);
  return ATTN_DISPATCH(x.dtype(), permute_, x, perm, "transpose");
}

Tensor reshape(const Tensor& x, const std::vector<long>& shape) {
  check_inputs("reshape", {&x});
  Shape target;
  std::size_t known = 1;  // product of the sizes given
  long infer = -1;        // position of the -1, if any
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) throw ShapeError("reshape: only one dim may be -1, got " + dims_str(shape));
      infer = static_cast<long>(i);
      target.push_back(1);
    } else if (shape[i] < 0) {
      throw ShapeError("reshape: invalid size " + std::to_string(shape[i]) + " in " + dims_str(shape));
    } else {
      target.push_back(static_cast<std::size_t>(shape[i]));
      known *= target.back();
    }
  }
  const std::size_t n = x.numel();
  if (infer >= 0 && known != 0 && n % known == 0) target[infer] = n / known;
  if ((infer >= 0 && (known == 0 || n % known != 0)) || (infer < 0 && known != n))
    throw ShapeError("reshape: cannot reshape a tensor of shape " + shape_str(x.shape()) + " (" +
                     std::to_string(n) + " elements) into " + dims_str(shape));
  return ATTN_DISPATCH(x.dtype(), reshape_, x, target, "reshape");
}

Tensor unsqueeze(const Tensor& x, long dim) {
  check_inputs("unsqueeze", {&x});
  const std::size_t d = normalize_new_dim(dim, x.dim(), "unsqueeze");
  Shape shape = x.shape();
  shape.insert(shape.begin() + static_cast<long>(d), 1);
  return ATTN_DISPATCH(x.dtype(), reshape_, x, shape, "unsqueeze");
}

Tensor squeeze(const Tensor& x, long dim) {
  check_inputs("squeeze", {&x});
  const std::size_t d = normalize_dim(dim, x.dim(), "squeeze");
  Shape shape = x.shape();
  if (shape[d] != 1)
    throw ShapeError("squeeze: dim " + std::to_string(dim) + " has size " + std::to_string(shape[d]) +
                     ", expected 1 (shape " + shape_str(shape) + ")");
  shape.erase(shape.begin() + static_cast<long>(d));
  return ATTN_DISPATCH(x.dtype(), reshape_, x, shape, "squeeze");
}

Tensor expand(const Tensor& x, const Shape& shape) {
  check_inputs("expand", {&x});
  const Shape in = x.shape();
  bool ok = in.size() <= shape.size();
  for (std::size_t i = 1; ok && i <= in.size(); ++i) {
    const std::size_t from = in[in.size() - i], to = shape[shape.size() - i];
    ok = from == to || from == 1;
  }
  if (!ok)
    throw ShapeError("expand: cannot expand shape " + shape_str(in) + " to " + shape_str(shape) +
                     " (each dim must match or be 1, aligned from the right)");
  return ATTN_DISPATCH(x.dtype(), expand_, x, shape);
}

// Position i of g (row-major) was copied from position offset(i) of the small
// array, where a broadcast dim (size 1, or missing in front) does not move the
// offset: broadcast_to's walk (layout.hpp). Its adjoint adds g there.
template <class T>
xt::xarray<T> sum_to_shape(const xt::xarray<T>& g, const Shape& shape) {
  const Shape g_shape(g.shape().begin(), g.shape().end());
  if (g_shape == shape) return copy_of(g);
  const std::size_t lead = g_shape.size() - shape.size();
  const Shape strides = strides_of(shape);
  Shape step(g_shape.size(), 0);
  for (std::size_t d = lead; d < g_shape.size(); ++d)
    if (shape[d - lead] != 1) step[d] = strides[d - lead];
  xt::xarray<T> summed = filled(shape, T(0));
  std::size_t i = 0;
  walk(g_shape, step, [&](std::size_t offset) { summed.flat(offset) += g.flat(i++); });
  return summed;
}

template xt::xarray<float> sum_to_shape(const xt::xarray<float>&, const Shape&);
template xt::xarray<double> sum_to_shape(const xt::xarray<double>&, const Shape&);

}  // namespace attn
