// Picking values by integer index or boolean mask: index_select, embedding,
// masked_fill, where. The indices and masks are plain data (no gradient);
// backward closures keep copies of them.
#include "../ops.hpp"
#include "../record.hpp"
#include "layout.hpp"

namespace attn {

namespace {

// Gathers positions rows[0], rows[1], ... of dim `dim` of x into a new dim of
// size rows.size(), laid out as [outer, rows.size(), inner] and given out_shape.
// index_select keeps x's other dims around it; embedding (dim 0 of [V, D]) puts
// the ids' own shape in front of D.
template <class T>
Tensor gather_(const Tensor& x, std::size_t dim, const std::vector<std::size_t>& rows, const Shape& out_shape,
               const char* op) {
  const Blocks b = blocks_around(x.shape(), dim);           // x as [outer, n, inner]
  xt::xarray<T> y = xt::xarray<T>::from_shape(out_shape);   // [outer, m, inner]
  const std::size_t m = rows.size();
  for (std::size_t j = 0; j < m; ++j)
    copy_slab(x.data<T>().data(), b.n, rows[j], y.data(), m, j, 1, b.outer, b.inner);
  return record<T>(op, std::move(y), {x}, [b, rows](Node<T>& out) {
    // d y[j]/d x[rows[j]] = 1: scatter-add, so a row picked twice gets both gradients
    xt::xarray<T> g = filled(out.input(0).shape(), T(0));
    const std::size_t m = rows.size();
    for (std::size_t j = 0; j < m; ++j)
      add_slab(out.grad.data(), m, j, g.data(), b.n, rows[j], 1, b.outer, b.inner);
    out.add_to_input_grad(0, std::move(g));
  });
}

// `mask` is already broadcast to x's shape (broadcast_to, layout.hpp).
template <class T>
Tensor masked_fill_(const Tensor& x, const Mask& mask, double value) {
  xt::xarray<T> y = copy_of(x.data<T>());
  for (std::size_t i = 0; i < y.size(); ++i)
    if (mask.flat(i)) y.flat(i) = static_cast<T>(value);
  return record<T>("masked_fill", std::move(y), {x}, [mask](Node<T>& out) {
    // filled positions are constants (gradient 0); the others pass x through (gradient 1)
    xt::xarray<T> g = out.take_grad();  // zeroed in place
    for (std::size_t i = 0; i < g.size(); ++i)
      if (mask.flat(i)) g.flat(i) = T(0);
    out.add_to_input_grad(0, std::move(g));
  });
}

// `condition` is already broadcast to the output shape.
template <class T>
Tensor where_(const Mask& condition, const Tensor& a, const Tensor& b) {
  const Shape shape(condition.shape().begin(), condition.shape().end());
  const xt::xarray<T> av = broadcast_to(a.data<T>(), shape), bv = broadcast_to(b.data<T>(), shape);
  xt::xarray<T> y = xt::xarray<T>::from_shape(shape);
  for (std::size_t i = 0; i < y.size(); ++i) y.flat(i) = condition.flat(i) ? av.flat(i) : bv.flat(i);
  return record<T>("where", std::move(y), {a, b}, [condition](Node<T>& out) {
    // d y/da = 1 where condition holds, d y/db = 1 elsewhere; add_to_input_grad
    // then sums each gradient back over the dims that a or b was broadcast along
    xt::xarray<T> ga = filled(out.grad.shape(), T(0)), gb = ga;
    for (std::size_t i = 0; i < ga.size(); ++i) {
      if (condition.flat(i)) ga.flat(i) = out.grad.flat(i);
      else gb.flat(i) = out.grad.flat(i);
    }
    out.add_to_input_grad(0, std::move(ga));
    out.add_to_input_grad(1, std::move(gb));
  });
}

}  // namespace

Tensor index_select(const Tensor& x, long dim, const Index& index) {
  check_inputs("index_select", {&x});
  const std::size_t d = normalize_dim(dim, x.dim(), "index_select");
  if (index.dimension() != 1)
    throw ShapeError("index_select: expected a 1-d index, got shape " + shape_str(shape_of(index)));
  Shape shape = x.shape();
  std::vector<std::size_t> rows;
  for (std::int64_t i : index) {
    if (i < 0 || i >= static_cast<std::int64_t>(shape[d]))
      throw ValueError("index_select: index " + std::to_string(i) + " is out of range for dim " +
                       std::to_string(dim) + " of size " + std::to_string(shape[d]) + " (shape " + shape_str(shape) +
                       ")");
    rows.push_back(static_cast<std::size_t>(i));
  }
  shape[d] = rows.size();
  return ATTN_DISPATCH(x.dtype(), gather_, x, d, rows, shape, "index_select");
}

Tensor embedding(const Tensor& weight, const Index& ids) {
  check_inputs("embedding", {&weight});
  if (weight.dim() != 2)
    throw ShapeError("embedding: expected weight of shape [V, D], got " + shape_str(weight.shape()));
  const std::int64_t vocab = static_cast<std::int64_t>(weight.shape()[0]);
  std::vector<std::size_t> rows;
  for (std::int64_t id : ids) {
    if (id < 0 || id >= vocab)
      throw ValueError("embedding: id " + std::to_string(id) + " is out of range for a vocabulary of V = " +
                       std::to_string(vocab) + " (expected 0 <= id < " + std::to_string(vocab) + ")");
    rows.push_back(static_cast<std::size_t>(id));
  }
  Shape shape = shape_of(ids);  // ids [S...] -> [S..., D]
  shape.push_back(weight.shape()[1]);
  return ATTN_DISPATCH(weight.dtype(), gather_, weight, 0, rows, shape, "embedding");
}

Tensor masked_fill(const Tensor& x, const Mask& mask, double value) {
  check_inputs("masked_fill", {&x});
  if (broadcast_shape("masked_fill", shape_of(mask), x.shape()) != x.shape())
    throw ShapeError("masked_fill: mask of shape " + shape_str(shape_of(mask)) + " does not broadcast to x of shape " +
                     shape_str(x.shape()));
  return ATTN_DISPATCH(x.dtype(), masked_fill_, x, broadcast_to(mask, x.shape()), value);
}

Tensor where(const Mask& condition, const Tensor& a, const Tensor& b) {
  check_inputs("where", {&a, &b});
  const Shape shape = broadcast_shape("where", shape_of(condition), broadcast_shape("where", a.shape(), b.shape()));
  return ATTN_DISPATCH(a.dtype(), where_, broadcast_to(condition, shape), a, b);
}

}  // namespace attn
