// Matrix products: matmul (numpy's semantics) and linear.
//
// Backward of C = A B, with G = dL/dC:   dA = G B^T,   dB = A^T G.
//
// Every product here is one xt::linalg::dot (xtensor-blas) on [m, k] x [k, n]
// matrices. With fused ops on (core/kernels.hpp) both ops run the backend's
// version instead (core/backend/matmul.cpp): the same products as direct gemm
// calls, writing into the gradients, planned and shared over the threads.
#include "../kernels.hpp"
#include "../ops.hpp"
#include "../record.hpp"
#include "layout.hpp"

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xview.hpp>

namespace attn {

namespace {

// Matrix i of a stack [count, rows, cols].
template <class E>
auto matrix(E& stack, std::size_t i) {
  return xt::view(stack, i, xt::all(), xt::all());
}

// C[i] = A[i] B[i] for stacks A [count, m, k] and B [count, k, n]: C [count, m, n].
template <class T>
Tensor bmm_(const Tensor& a, const Tensor& b) {
  const xt::xarray<T>& A = a.data<T>();
  const xt::xarray<T>& B = b.data<T>();
  const std::size_t count = A.shape()[0];
  xt::xarray<T> C = xt::zeros<T>({count, A.shape()[1], B.shape()[2]});
  for (std::size_t i = 0; i < count; ++i) matrix(C, i) = xt::linalg::dot(matrix(A, i), matrix(B, i));
  return record<T>("matmul", std::move(C), {a, b}, [count](Node<T>& out) {
    const xt::xarray<T>& A = out.input(0).value;
    const xt::xarray<T>& B = out.input(1).value;
    const xt::xarray<T>& G = out.grad;
    if (out.input_requires_grad(0)) {
      xt::xarray<T> dA = xt::zeros<T>(A.shape());
      // dA = G B^T: [m, n] x [n, k] -> [m, k]
      for (std::size_t i = 0; i < count; ++i) matrix(dA, i) = xt::linalg::dot(matrix(G, i), xt::transpose(matrix(B, i)));
      out.add_to_input_grad(0, std::move(dA));
    }
    if (out.input_requires_grad(1)) {
      xt::xarray<T> dB = xt::zeros<T>(B.shape());
      // dB = A^T G: [k, m] x [m, n] -> [k, n]
      for (std::size_t i = 0; i < count; ++i) matrix(dB, i) = xt::linalg::dot(xt::transpose(matrix(A, i)), matrix(G, i));
      out.add_to_input_grad(1, std::move(dB));
    }
  });
}

Shape joined(Shape batch, std::initializer_list<std::size_t> last) {
  batch.insert(batch.end(), last);
  return batch;
}

std::vector<long> as_dims(const Shape& shape) { return std::vector<long>(shape.begin(), shape.end()); }

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_inputs("matmul", {&a, &b});
  if (fused_ops_enabled()) return fused::matmul(a, b);
  if (a.dim() == 0 || b.dim() == 0)
    throw ShapeError("matmul: expected operands with at least 1 dim, got a " + shape_str(a.shape()) + " and b " +
                     shape_str(b.shape()));
  // A 1-D a is one row [1, k], a 1-D b one column [k, 1]; that added dim is dropped from the result.
  if (a.dim() == 1 || b.dim() == 1) {
    Tensor c = matmul(a.dim() == 1 ? unsqueeze(a, 0) : a, b.dim() == 1 ? unsqueeze(b, 1) : b);
    if (b.dim() == 1) c = squeeze(c, -1);
    return a.dim() == 1 ? squeeze(c, b.dim() == 1 ? -1 : -2) : c;
  }
  const Shape sa = a.shape(), sb = b.shape();
  const std::size_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  if (sb[sb.size() - 2] != k)
    throw ShapeError("matmul: expected a.shape[-1] == b.shape[-2], got a " + shape_str(sa) + " and b " + shape_str(sb));
  // Batch dims (all but the last two) broadcast as numpy's: both stacks are
  // stretched to one batch shape (expand's backward sums the stretched copies back).
  const Shape batch = broadcast_shape("matmul", Shape(sa.begin(), sa.end() - 2), Shape(sb.begin(), sb.end() - 2));
  std::size_t count = 1;
  for (std::size_t s : batch) count *= s;
  const Shape a_full = joined(batch, {m, k}), b_full = joined(batch, {k, n});
  const Tensor A = reshape(sa == a_full ? a : expand(a, a_full), as_dims({count, m, k}));  // [count, m, k]
  const Tensor B = reshape(sb == b_full ? b : expand(b, b_full), as_dims({count, k, n}));  // [count, k, n]
  const Tensor C = ATTN_DISPATCH(a.dtype(), bmm_, A, B);                                  // [count, m, n]
  return reshape(C, as_dims(joined(batch, {m, n})));                                     // [..., m, n]
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (bias.defined()) check_inputs("linear", {&x, &weight, &bias});
  else check_inputs("linear", {&x, &weight});
  const Shape sx = x.shape(), sw = weight.shape();
  if (sx.empty()) throw ShapeError("linear: expected x [..., in] with at least 1 dim, got x []");
  if (sw.size() != 2) throw ShapeError("linear: expected a 2-d weight [out, in], got weight " + shape_str(sw));
  if (sx.back() != sw[1])
    throw ShapeError("linear: expected x.shape[-1] == weight.shape[1], got x " + shape_str(sx) + " and weight " +
                     shape_str(sw));
  Shape out_shape = sx;
  out_shape.back() = sw[0];
  if (bias.defined() && bias.shape() != Shape{sw[0]} && (sx.size() < 2 || bias.shape() != out_shape))
    throw ShapeError("linear: expected bias [" + std::to_string(sw[0]) + "] or " + shape_str(out_shape) +
                     " for x " + shape_str(sx) + " and weight " + shape_str(sw) + ", got bias " + shape_str(bias.shape()));
  if (fused_ops_enabled()) return fused::linear(x, weight, bias);
  // y = x W^T + bias: [..., in] x [in, out] -> [..., out]; the bias [out] broadcasts over the rows
  const Tensor y = matmul(x, transpose(weight, 0, 1));
  return bias.defined() ? y + bias : y;
}

}  // namespace attn
