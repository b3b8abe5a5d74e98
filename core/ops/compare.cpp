// Results that carry no gradient: argmax (an Index), comparisons (a Mask with
// numpy broadcasting) and one_hot (a Tensor of constants).
#include "../ops.hpp"
#include "../record.hpp"
#include "layout.hpp"

#include <functional>

namespace attn {

namespace {

// Both operands broadcast to the result's shape, then compared element by
// element (see broadcast_to in layout.hpp for why not an xtensor expression).
template <class T, class Compare>
Mask compare_(const Tensor& a, const Tensor& b, const Shape& shape, Compare compare) {
  const xt::xarray<T> x = broadcast_to(a.data<T>(), shape), y = broadcast_to(b.data<T>(), shape);
  Mask result = Mask::from_shape(shape);
  for (std::size_t i = 0; i < result.size(); ++i) result.flat(i) = compare(x.flat(i), y.flat(i));
  return result;
}

template <class Compare>
Mask compare(const char* op, const Tensor& a, const Tensor& b, Compare compare) {
  check_inputs(op, {&a, &b});
  const Shape shape = broadcast_shape(op, a.shape(), b.shape());  // or a ShapeError naming op
  return ATTN_DISPATCH(a.dtype(), compare_, a, b, shape, compare);
}

template <class T>
Index argmax_(const Tensor& x, std::size_t dim, bool keepdim) {
  Shape shape = x.shape();
  const Blocks b = blocks_around(shape, dim);  // x as [outer, n, inner]
  if (keepdim) shape[dim] = 1;
  else shape.erase(shape.begin() + static_cast<long>(dim));
  Index result = Index::from_shape(shape);     // [outer, inner] whatever the shape
  const T* v = x.data<T>().data();
  for (std::size_t o = 0; o < b.outer; ++o)
    for (std::size_t k = 0; k < b.inner; ++k) {
      const T* row = v + o * b.n * b.inner + k;  // row[i * inner] is position i of dim
      std::size_t best = 0;
      for (std::size_t i = 1; i < b.n; ++i)
        if (row[i * b.inner] > row[best * b.inner]) best = i;  // strict: the first maximum wins
      result.flat(o * b.inner + k) = static_cast<std::int64_t>(best);
    }
  return result;
}

template <class T>
Tensor one_hot_(const Index& ids, std::size_t num_classes) {
  Shape shape(ids.shape().begin(), ids.shape().end());  // ids [S...] -> [S..., C]
  shape.push_back(num_classes);
  xt::xarray<T> y = filled(shape, T(0));
  for (std::size_t i = 0; i < ids.size(); ++i) y.flat(i * num_classes + static_cast<std::size_t>(ids.flat(i))) = T(1);
  return Tensor(std::move(y));
}

}  // namespace

Index argmax(const Tensor& x, long dim, bool keepdim) {
  check_inputs("argmax", {&x});
  const std::size_t d = normalize_dim(dim, x.dim(), "argmax");
  if (x.shape()[d] == 0)
    throw ShapeError("argmax: dim " + std::to_string(dim) + " of shape " + shape_str(x.shape()) +
                     " is empty, there is no maximum");
  return ATTN_DISPATCH(x.dtype(), argmax_, x, d, keepdim);
}

Mask eq(const Tensor& a, const Tensor& b) { return compare("eq", a, b, std::equal_to<>()); }
Mask ne(const Tensor& a, const Tensor& b) { return compare("ne", a, b, std::not_equal_to<>()); }
Mask lt(const Tensor& a, const Tensor& b) { return compare("lt", a, b, std::less<>()); }
Mask le(const Tensor& a, const Tensor& b) { return compare("le", a, b, std::less_equal<>()); }
Mask gt(const Tensor& a, const Tensor& b) { return compare("gt", a, b, std::greater<>()); }
Mask ge(const Tensor& a, const Tensor& b) { return compare("ge", a, b, std::greater_equal<>()); }

Tensor one_hot(const Index& ids, std::size_t num_classes, Dtype dtype) {
  if (num_classes == 0) throw ValueError("one_hot: num_classes must be positive, got 0");
  for (std::int64_t id : ids)
    if (id < 0 || id >= static_cast<std::int64_t>(num_classes))
      throw ValueError("one_hot: id " + std::to_string(id) + " is out of range for num_classes = " +
                       std::to_string(num_classes) + " (expected 0 <= id < " + std::to_string(num_classes) + ")");
  return ATTN_DISPATCH(dtype, one_hot_, ids, num_classes);
}

}  // namespace attn
