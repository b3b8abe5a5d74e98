// Picking values by integer index or boolean mask: index_select, embedding,
// gather_windows, place_windows, masked_fill, where. The indices and masks are
// plain data (no gradient); backward closures keep copies of them.
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

// The slots w of a window starting at source position s that fall inside [0, n):
// w in [lo, hi), source positions first = s + lo .. s + hi - 1 (lo = hi when none do).
struct WindowSpan {
  std::size_t lo, hi, first;
};
inline WindowSpan window_span(std::int64_t s, std::size_t width, std::size_t n) {
  const std::int64_t w = static_cast<std::int64_t>(width), nn = static_cast<std::int64_t>(n);
  const std::int64_t lo = std::clamp<std::int64_t>(-s, 0, w), hi = std::clamp<std::int64_t>(nn - s, lo, w);
  return {static_cast<std::size_t>(lo), static_cast<std::size_t>(hi), lo < hi ? static_cast<std::size_t>(s + lo) : 0};
}

// x [B, N, D], start [B, Q] -> y [B, Q, width, D]: y[b, q, w] = x[b, start(b, q) + w],
// 0 where that row is outside [0, N). Each window's rows inside x are one block.
template <class T>
Tensor gather_windows_(const Tensor& x, const Index& start, std::size_t width) {
  const std::size_t B = x.size(0), N = x.size(1), D = x.size(2), Q = start.shape()[1];
  xt::xarray<T> y = xt::xarray<T>::from_shape({B, Q, width, D});  // [B, Q, width, D]
  const T* xs = x.data<T>().data();
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t q = 0; q < Q; ++q) {
      const auto [lo, hi, first] = window_span(start(b, q), width, N);
      T* window = y.data() + (b * Q + q) * width * D;  // y[b, q]: [width, D]
      std::fill(window, window + lo * D, T(0));
      copy_values(xs + (b * N + first) * D, (hi - lo) * D, window + lo * D);  // x[b, first .. first + hi - lo)
      std::fill(window + hi * D, window + width * D, T(0));
    }
  return record<T>("gather_windows", std::move(y), {x}, [start, width](Node<T>& out) {
    // d y[b, q, w]/d x[b, start + w] = 1: each window row's gradient adds into its own row of
    // x's gradient and nowhere else (overlapping windows add up); O(B Q width D), not O(B N D)
    const std::size_t B = out.grad.shape()[0], Q = out.grad.shape()[1], D = out.grad.shape()[3];
    const std::size_t N = out.input(0).value.shape()[1];
    T* g = input_grad_buffer(out, 0).data();  // x's gradient [B, N, D]; zeroed only if x has none yet
    const T* gy = out.grad.data();
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t q = 0; q < Q; ++q) {
        const auto [lo, hi, first] = window_span(start(b, q), width, N);
        const T* from = gy + ((b * Q + q) * width + lo) * D;
        T* to = g + (b * N + first) * D;
        for (std::size_t k = 0; k < (hi - lo) * D; ++k) to[k] += from[k];
      }
  });
}

// w [B, Q, W], start [B, Q] -> y [B, Q, n]: y[b, q, start(b, q) + k] = w[b, q, k], 0 elsewhere.
template <class T>
Tensor place_windows_(const Tensor& w, const Index& start, std::size_t n) {
  const std::size_t B = w.size(0), Q = w.size(1), W = w.size(2);
  xt::xarray<T> y = filled(Shape{B, Q, n}, T(0));  // [B, Q, n]
  const T* ws = w.data<T>().data();
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t q = 0; q < Q; ++q) {
      const auto [lo, hi, first] = window_span(start(b, q), W, n);
      copy_values(ws + (b * Q + q) * W + lo, hi - lo, y.data() + (b * Q + q) * n + first);
    }
  return record<T>("place_windows", std::move(y), {w}, [start](Node<T>& out) {
    // d y[b, q, start + k]/d w[b, q, k] = 1: the window's slots read their positions'
    // gradients back (slots placed outside [0, n) get 0)
    const std::size_t B = out.grad.shape()[0], Q = out.grad.shape()[1], n = out.grad.shape()[2];
    const std::size_t W = out.input(0).value.shape()[2];
    T* g = input_grad_buffer(out, 0).data();  // w's gradient [B, Q, W]
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t q = 0; q < Q; ++q) {
        const auto [lo, hi, first] = window_span(start(b, q), W, n);
        const T* from = out.grad.data() + (b * Q + q) * n + first;
        T* to = g + (b * Q + q) * W + lo;
        for (std::size_t k = 0; k < hi - lo; ++k) to[k] += from[k];
      }
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

Tensor gather_windows(const Tensor& x, const Index& start, std::size_t width) {
  check_inputs("gather_windows", {&x});
  if (x.dim() != 3) throw ShapeError("gather_windows: expected x [B, N, D], got " + shape_str(x.shape()));
  if (start.dimension() != 2 || start.shape()[0] != x.size(0))
    throw ShapeError("gather_windows: expected start [B, Q] with B = " + std::to_string(x.size(0)) + " (x " +
                     shape_str(x.shape()) + "), got start " + shape_str(shape_of(start)));
  if (width == 0) throw ValueError("gather_windows: expected a window width of at least 1, got 0");
  return ATTN_DISPATCH(x.dtype(), gather_windows_, x, start, width);
}

Tensor place_windows(const Tensor& w, const Index& start, std::size_t n) {
  check_inputs("place_windows", {&w});
  if (w.dim() != 3) throw ShapeError("place_windows: expected windows [B, Q, W], got " + shape_str(w.shape()));
  if (start.dimension() != 2 || start.shape()[0] != w.size(0) || start.shape()[1] != w.size(1))
    throw ShapeError("place_windows: expected start [B, Q] = " + shape_str({w.size(0), w.size(1)}) + " (windows " +
                     shape_str(w.shape()) + "), got start " + shape_str(shape_of(start)));
  return ATTN_DISPATCH(w.dtype(), place_windows_, w, start, n);
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
