// Joining tensors along a dim and cutting them apart: concat, stack, split,
// chunk, narrow, select. All move runs of values with copy_slab (layout.hpp).
#include "../ops.hpp"
#include "../record.hpp"
#include "layout.hpp"

#include <numeric>

namespace attn {

namespace {

// y of `shape` from the inputs side by side along dim, input j taking sizes[j]
// positions of it. concat: each input's own size along dim. stack: 1 each, in a
// new dim; an input laid out with a size-1 dim added is laid out as it is, so
// it is copied in once, not first unsqueezed (a second copy).
template <class T>
Tensor join_(const std::vector<Tensor>& xs, std::size_t dim, const Shape& shape, const std::vector<std::size_t>& sizes,
             const char* op) {
  const Blocks b = blocks_around(shape, dim);  // y as [outer, total, inner]
  xt::xarray<T> y = xt::xarray<T>::from_shape(shape);
  std::size_t offset = 0;
  for (std::size_t j = 0; j < xs.size(); offset += sizes[j], ++j)
    copy_slab(xs[j].data<T>().data(), sizes[j], 0, y.data(), b.n, offset, sizes[j], b.outer, b.inner);
  return record<T>(op, std::move(y), xs, [sizes, b](Node<T>& out) {
    // d concat/dx_j = 1 on x_j's own positions: each input gets back its slice of the gradient,
    // added straight into the gradient it already has, or else copied into a new one
    std::size_t offset = 0;
    for (std::size_t j = 0; j < sizes.size(); offset += sizes[j], ++j) {
      if (!out.input_requires_grad(j)) continue;
      Node<T>& in = out.input(j);
      if (in.has_grad) {
        add_slab(out.grad.data(), b.n, offset, in.grad.data(), sizes[j], 0, sizes[j], b.outer, b.inner);
        continue;
      }
      xt::xarray<T> g = xt::xarray<T>::from_shape(in.value.shape());
      copy_slab(out.grad.data(), b.n, offset, g.data(), sizes[j], 0, sizes[j], b.outer, b.inner);
      out.add_to_input_grad(j, std::move(g));
    }
  });
}

// Positions [start, start + length) of dim. narrow keeps the dim; select
// (length 1) drops it, which changes the shape but not the memory layout.
template <class T>
Tensor slice_(const Tensor& x, std::size_t dim, std::size_t start, std::size_t length, const Shape& out_shape,
              const char* op) {
  const Blocks b = blocks_around(x.shape(), dim);          // x as [outer, n, inner]
  xt::xarray<T> y = xt::xarray<T>::from_shape(out_shape);  // [outer, length, inner]
  copy_slab(x.data<T>().data(), b.n, start, y.data(), length, 0, length, b.outer, b.inner);
  return record<T>(op, std::move(y), {x}, [b, start, length](Node<T>& out) {
    // d slice/dx = 1 on the sliced positions, 0 elsewhere. The slice's gradient is
    // added straight into x's gradient: a loop that takes one slice per step (an
    // RNN over time) then costs O(slice) per step in backward, not O(x).
    if (!out.input_requires_grad(0)) return;
    add_slab(out.grad.data(), length, 0, input_grad_buffer(out, 0).data(), b.n, start, length, b.outer, b.inner);
  });
}

}  // namespace

Tensor concat(const std::vector<Tensor>& xs, long dim) {
  if (xs.empty()) throw ValueError("concat: expected at least one tensor, got none");
  for (const Tensor& x : xs) check_inputs("concat", {&xs[0], &x});
  const std::size_t d = normalize_dim(dim, xs[0].dim(), "concat");
  const Shape first = xs[0].shape();
  for (std::size_t j = 1; j < xs.size(); ++j) {
    Shape s = xs[j].shape();
    bool ok = s.size() == first.size();
    for (std::size_t i = 0; ok && i < s.size(); ++i) ok = i == d || s[i] == first[i];
    if (!ok)
      throw ShapeError("concat: expected shapes equal except in dim " + std::to_string(dim) + ", got " +
                       shape_str(first) + " (tensor 0) and " + shape_str(s) + " (tensor " + std::to_string(j) + ")");
  }
  std::vector<std::size_t> sizes;  // each input's size along dim
  for (const Tensor& x : xs) sizes.push_back(x.shape()[d]);
  Shape shape = first;
  shape[d] = std::accumulate(sizes.begin(), sizes.end(), std::size_t{0});
  return ATTN_DISPATCH(xs[0].dtype(), join_, xs, d, shape, sizes, "concat");
}

Tensor stack(const std::vector<Tensor>& xs, long dim) {
  if (xs.empty()) throw ValueError("stack: expected at least one tensor, got none");
  for (const Tensor& x : xs) check_inputs("stack", {&xs[0], &x});
  for (std::size_t j = 1; j < xs.size(); ++j)
    if (xs[j].shape() != xs[0].shape())
      throw ShapeError("stack: expected tensors of equal shapes, got " + shape_str(xs[0].shape()) + " (tensor 0) and " +
                       shape_str(xs[j].shape()) + " (tensor " + std::to_string(j) + ")");
  const std::size_t d = normalize_new_dim(dim, xs[0].dim(), "stack");
  // stack = give every tensor a new size-1 dim, then concatenate along it
  Shape shape = xs[0].shape();
  shape.insert(shape.begin() + static_cast<long>(d), xs.size());
  return ATTN_DISPATCH(xs[0].dtype(), join_, xs, d, shape, std::vector<std::size_t>(xs.size(), 1), "stack");
}

Tensor narrow(const Tensor& x, long dim, std::size_t start, std::size_t length) {
  check_inputs("narrow", {&x});
  const std::size_t d = normalize_dim(dim, x.dim(), "narrow");
  Shape shape = x.shape();
  if (start > shape[d] || length > shape[d] - start)
    throw ValueError("narrow: start " + std::to_string(start) + " + length " + std::to_string(length) +
                     " exceeds the size " + std::to_string(shape[d]) + " of dim " + std::to_string(dim) +
                     " (shape " + shape_str(shape) + ")");
  shape[d] = length;
  return ATTN_DISPATCH(x.dtype(), slice_, x, d, start, length, shape, "narrow");
}

Tensor select(const Tensor& x, long dim, long index) {
  check_inputs("select", {&x});
  const std::size_t d = normalize_dim(dim, x.dim(), "select");
  Shape shape = x.shape();
  const long n = static_cast<long>(shape[d]);
  if (index < -n || index >= n)
    throw ValueError("select: index " + std::to_string(index) + " is out of range for dim " + std::to_string(dim) +
                     " of size " + std::to_string(n) + " (shape " + shape_str(shape) + ")");
  const std::size_t i = static_cast<std::size_t>(index < 0 ? index + n : index);
  shape.erase(shape.begin() + static_cast<long>(d));
  return ATTN_DISPATCH(x.dtype(), slice_, x, d, i, 1, shape, "select");
}

// Pieces of split_size along dim; the last one is smaller when split_size does not divide the size.
std::vector<Tensor> split(const Tensor& x, std::size_t split_size, long dim) {
  check_inputs("split", {&x});
  if (split_size == 0) throw ValueError("split: split_size must be positive, got 0");
  const std::size_t n = x.shape()[normalize_dim(dim, x.dim(), "split")];
  std::vector<Tensor> pieces;
  for (std::size_t start = 0; start < n || pieces.empty(); start += split_size)
    pieces.push_back(narrow(x, dim, start, std::min(split_size, n - start)));
  return pieces;
}

// As PyTorch: pieces of ceil(n / chunks) each, so there may be fewer than `chunks` of them.
std::vector<Tensor> chunk(const Tensor& x, std::size_t chunks, long dim) {
  check_inputs("chunk", {&x});
  if (chunks == 0) throw ValueError("chunk: chunks must be positive, got 0");
  const std::size_t n = x.shape()[normalize_dim(dim, x.dim(), "chunk")];
  return split(x, std::max<std::size_t>((n + chunks - 1) / chunks, 1), dim);
}

}  // namespace attn
