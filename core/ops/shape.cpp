// Ops that rearrange values without computing anything: transpose, permute,
// reshape, unsqueeze, squeeze, expand, and multi-head attention's split_heads
// and merge_heads. Each returns a new contiguous row-major
// array; its backward puts the gradient back into the input's layout.
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

// Output dim i is input dim perm[i], as PyTorch's permute: y.shape[i] = x.shape[perm[i]].
// Walks the output row-major; one step along output dim d is one step along
// input dim perm[d], i.e. x's stride of that dim (walk, layout.hpp).
// x's values are read as an array of `in_shape` (the same number of values):
// a reshape and a permute in one copy.
template <class T>
xt::xarray<T> permuted(const xt::xarray<T>& x, const Shape& in_shape, const std::vector<std::size_t>& perm) {
  const Shape in_strides = strides_of(in_shape);
  Shape shape, step;
  for (std::size_t p : perm) {
    shape.push_back(in_shape[p]);
    step.push_back(in_strides[p]);
  }
  xt::xarray<T> y = xt::xarray<T>::from_shape(shape);
  T* out = y.data();
  const T* in = x.data();
  if (!shape.empty() && step.back() == 1) {
    // The last dim stays last (split_heads, merge_heads, transpose(x, 1, 2)): copy whole runs.
    const std::size_t run = shape.back();
    walk(Shape(shape.begin(), shape.end() - 1), Shape(step.begin(), step.end() - 1),
         [&](std::size_t offset) {
           copy_values(in + offset, run, out);
           out += run;
         });
    return y;
  }
  walk(shape, step, [&](std::size_t offset) { *out++ = in[offset]; });
  return y;
}

template <class T>
xt::xarray<T> permuted(const xt::xarray<T>& x, const std::vector<std::size_t>& perm) {
  return permuted(x, Shape(x.shape().begin(), x.shape().end()), perm);
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

// [B, T, H * d] read as [B, T, H, d] and permuted to [B, H, T, d] (dims 0, 2, 1, 3), or back.
template <class T>
Tensor heads_(const Tensor& x, const Shape& read_as, const Shape& out_shape, const char* op) {
  const std::vector<std::size_t> swap_1_2{0, 2, 1, 3};  // its own inverse
  xt::xarray<T> y = permuted(x.data<T>(), read_as, swap_1_2);
  y.reshape(out_shape);
  // The output read as 4-d: [B, H, T, d] (split) or [B, T, H, d] (merge), read_as with dims 1, 2 swapped.
  const Shape out_as{read_as[0], read_as[2], read_as[1], read_as[3]};
  return record<T>(op, std::move(y), {x}, [swap_1_2, out_as](Node<T>& out) {
    // a permutation only moves values: the gradient, read as 4-d, moves back by the same swap
    xt::xarray<T> g = permuted(out.grad, out_as, swap_1_2);
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

Tensor split_heads(const Tensor& x, std::size_t num_heads) {
  check_inputs("split_heads", {&x});
  const Shape s = x.shape();
  if (s.size() != 3 || num_heads == 0 || s[2] % num_heads != 0)
    throw ShapeError("split_heads: expected x [B, T, E] with E a multiple of num_heads = " +
                     std::to_string(num_heads) + ", got " + shape_str(s));
  const std::size_t B = s[0], T = s[1], H = num_heads, d = s[2] / num_heads;
  // [B, T, E] read as [B, T, H, d] -> [B, H, T, d]
  return ATTN_DISPATCH(x.dtype(), heads_, x, Shape{B, T, H, d}, Shape{B, H, T, d}, "split_heads");
}

Tensor merge_heads(const Tensor& x) {
  check_inputs("merge_heads", {&x});
  const Shape s = x.shape();
  if (s.size() != 4) throw ShapeError("merge_heads: expected x [B, H, T, d], got " + shape_str(s));
  const std::size_t B = s[0], H = s[1], T = s[2], d = s[3];
  // [B, H, T, d] -> [B, T, H, d] read as [B, T, E]
  return ATTN_DISPATCH(x.dtype(), heads_, x, s, Shape{B, T, H * d}, "merge_heads");
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

}  // namespace attn
