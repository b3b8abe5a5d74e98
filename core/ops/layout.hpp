// How the ops in this folder walk contiguous arrays (an internal header).
//
// Every Tensor's data is a contiguous row-major xt::xarray. Seen around one
// dim d, an array of shape [s0, ..., s(d-1), n, s(d+1), ...] is a 3-d block
// [outer, n, inner]:
//   outer = s0 * ... * s(d-1)   (how many times the dim d repeats)
//   inner = s(d+1) * ...        (how many consecutive values one position of d holds)
// Element (o, i, k) sits at flat offset (o * n + i) * inner + k. So "positions
// [start, start + len) of dim d" are `outer` runs of len * inner consecutive
// values: one copy per run moves them, with no index arithmetic per element.
// Slicing, concatenation, index_select and embedding are all built on that.
#pragma once

#include "../errors.hpp"
#include "../kernels.hpp"
#include "../node.hpp"

#include <xtensor/xarray.hpp>

#include <algorithm>
#include <string>
#include <type_traits>

namespace attn {

struct Blocks {
  std::size_t outer = 1, n = 1, inner = 1;
};

template <class S>  // a Shape, or an xt::xarray's own shape
Blocks blocks_around(const S& shape, std::size_t dim) {
  Blocks b;
  for (std::size_t i = 0; i < dim; ++i) b.outer *= shape[i];
  b.n = shape[dim];
  for (std::size_t i = dim + 1; i < shape.size(); ++i) b.inner *= shape[i];
  return b;
}

// to[i] = from[i] for i < n: the copy kernel for float and double (as copy_of,
// node.hpp), std::copy for masks and indices.
template <class T>
void copy_values(const T* from, std::size_t n, T* to) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) kernels::copy(from, to, n);
  else std::copy(from, from + n, to);
}

// Copies positions [src_start, src_start + len) of dim d of `src` (which has
// src_n positions there) to positions [dst_start, dst_start + len) of `dst`
// (dst_n positions there). Both arrays share `outer` and `inner`.
template <class T>
void copy_slab(const T* src, std::size_t src_n, std::size_t src_start, T* dst, std::size_t dst_n,
               std::size_t dst_start, std::size_t len, std::size_t outer, std::size_t inner) {
  for (std::size_t o = 0; o < outer; ++o) {
    const T* from = src + (o * src_n + src_start) * inner;
    copy_values(from, len * inner, dst + (o * dst_n + dst_start) * inner);
  }
}

// Input i's gradient array, for an op that adds its share straight into it (no
// temporary, no second pass; a slice adds O(slice), not O(x)): zeros of the
// input's shape if it has none yet. Only when out.input_requires_grad(i).
template <class T>
xt::xarray<T>& input_grad_buffer(Node<T>& out, std::size_t i) {
  Node<T>& in = out.input(i);
  if (!in.has_grad) in.grad = filled(in.value.shape(), T(0));
  in.has_grad = true;
  return in.grad;
}

// The same, adding into dst instead of overwriting it (scatter-add in backward).
template <class T>
void add_slab(const T* src, std::size_t src_n, std::size_t src_start, T* dst, std::size_t dst_n,
              std::size_t dst_start, std::size_t len, std::size_t outer, std::size_t inner) {
  for (std::size_t o = 0; o < outer; ++o) {
    const T* from = src + (o * src_n + src_start) * inner;
    T* to = dst + (o * dst_n + dst_start) * inner;
    for (std::size_t k = 0; k < len * inner; ++k) to[k] += from[k];
  }
}

// The position of a new dim inserted into an ndim-d tensor (unsqueeze, stack):
// 0..ndim, or negative from the end, -1 being a new last dim.
inline std::size_t normalize_new_dim(long dim, std::size_t ndim, const char* op) {
  const long n = static_cast<long>(ndim);
  if (dim < -n - 1 || dim > n)
    throw ShapeError(std::string(op) + ": dim " + std::to_string(dim) + " is out of range for a new dim of a " +
                     std::to_string(ndim) + "-d tensor (expected " + std::to_string(-n - 1) + " <= dim <= " +
                     std::to_string(n) + ")");
  return static_cast<std::size_t>(dim < 0 ? dim + n + 1 : dim);
}

// The shape of a plain array (a Mask or an Index) as attn's Shape.
template <class A>
Shape shape_of(const A& a) {
  return Shape(a.shape().begin(), a.shape().end());
}

// The shape that a and b broadcast to (numpy's rules), or a ShapeError naming op.
inline Shape broadcast_shape(const char* op, const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (std::size_t i = 1; i <= out.size(); ++i) {
    const std::size_t x = i <= a.size() ? a[a.size() - i] : 1;
    const std::size_t y = i <= b.size() ? b[b.size() - i] : 1;
    if (x != y && x != 1 && y != 1)
      throw ShapeError(std::string(op) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                       " do not broadcast (dim -" + std::to_string(i) + ": " + std::to_string(x) + " vs " +
                       std::to_string(y) + ")");
    out[out.size() - i] = x == 1 ? y : x;
  }
  return out;
}

// Visits every position of `shape` in row-major order and calls f(offset) with
// offset = sum over d of index[d] * step[d]: where a permuted or broadcast read
// finds that position's value in its source array. The last dim is a tight
// loop; the other dims advance like an odometer.
template <class F>
void walk(const Shape& shape, const Shape& step, F f) {
  for (std::size_t size : shape)
    if (size == 0) return;
  if (shape.empty()) {  // a 0-d array: one value
    f(std::size_t{0});
    return;
  }
  const std::size_t last = shape.size() - 1, n = shape[last], s = step[last];
  Shape index(shape.size(), 0);
  std::size_t offset = 0;
  while (true) {
    for (std::size_t k = 0; k < n; ++k) f(offset + k * s);
    std::size_t d = last;
    while (d-- > 0) {  // carry into the dims before the last
      offset += step[d];
      if (++index[d] < shape[d]) break;
      offset -= step[d] * shape[d];
      index[d] = 0;
    }
    if (d == static_cast<std::size_t>(-1)) return;  // every dim wrapped around: done
  }
}

// Row-major strides of a contiguous array of `shape`.
inline Shape strides_of(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

// Output dim i is input dim perm[i], as PyTorch's permute: y.shape[i] = x.shape[perm[i]].
// Walks the output row-major; one step along output dim d is one step along
// input dim perm[d], i.e. x's stride of that dim (walk, above).
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
    // The last dim stays last (transpose(x, 1, 2), split_heads): copy whole runs.
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

// A contiguous copy of `a` broadcast to `shape` (numpy's rules, already checked).
// Plain loops on purpose: xtensor 0.24 with xsimd evaluates broadcast expressions
// involving bool arrays wrongly (xtensor issues #2025, #2040), so the mask ops
// broadcast their operands first and then compare or select element by element.
// It is also several times faster than xtensor's strided loop over a broadcast
// operand, so the arithmetic ops (elementwise.cpp), linear's bias and sum's
// backward stretch their operands with it too.
template <class X>
xt::xarray<X> broadcast_to(const xt::xarray<X>& a, const Shape& shape) {
  const Shape a_shape(a.shape().begin(), a.shape().end());
  if (a_shape == shape) {  // nothing to stretch: one plain copy (linear's whole bias)
    xt::xarray<X> out = xt::xarray<X>::from_shape(shape);
    copy_values(a.data(), a.size(), out.data());
    return out;
  }
  const std::size_t lead = shape.size() - a.dimension();
  const Shape a_strides = strides_of(a_shape);
  Shape step(shape.size(), 0);  // a broadcast dim (size 1, or missing) does not move
  for (std::size_t d = lead; d < shape.size(); ++d)
    if (a_shape[d - lead] != 1) step[d] = a_strides[d - lead];
  xt::xarray<X> out = xt::xarray<X>::from_shape(shape);
  std::size_t i = 0;
  walk(shape, step, [&](std::size_t offset) { out.flat(i++) = a.flat(offset); });
  return out;
}

}  // namespace attn
