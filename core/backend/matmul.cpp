// The fused path's matmul (numpy's semantics) and linear, through BLAS gemm
// (core/ops/matmul.cpp is the teaching version, on xt::linalg, and the switch).
//
// xt::xarray stores its values row-major and contiguous, so its data() is a
// ready BLAS matrix: an array [..., M, K] is a stack of [M, K] matrices, M*K
// values apart, each with leading dim K. A transposed operand is never copied:
// gemm reads it transposed through its trans flag (see core/backend/blas.hpp).
//
// Backward of C = A B, with G = dL/dC:   dA = G B^T,   dB = A^T G.
// gemm writes straight into the input's gradient buffer: it overwrites a fresh
// one (beta = 0) and adds to one that already holds a gradient (beta = 1), so an
// operand used by several products, or whose batch dims were broadcast, sums them.
#include "../kernels.hpp"
#include "../ops.hpp"
#include "../ops/layout.hpp"
#include "../record.hpp"
#include "blas.hpp"
#include "parallel.hpp"

namespace attn {

namespace {

// How matmul sees its operands: a stack of [m, k] matrices times a stack of
// [k, n] matrices. Product i multiplies a's matrix a_matrix(i) by b's matrix
// b_matrix(i) and writes the i-th [m, n] matrix of the result. When b is one
// matrix there is one product (a's stack folded into one tall matrix) and the
// lists a_of, b_of stay empty.
struct MatmulPlan {
  std::size_t m = 0, k = 0, n = 0;
  std::size_t products = 1;
  std::vector<std::size_t> a_of, b_of;
  Shape out_shape;
  std::size_t a_matrix(std::size_t i) const { return a_of.empty() ? 0 : a_of[i]; }
  std::size_t b_matrix(std::size_t i) const { return b_of.empty() ? 0 : b_of[i]; }
};

std::size_t product(const Shape& shape) {
  std::size_t p = 1;
  for (std::size_t s : shape) p *= s;
  return p;
}

MatmulPlan plan_matmul(const Shape& sa, const Shape& sb) {
  // The end of every error message (built only when one is thrown).
  auto got = [&] { return ", got a " + shape_str(sa) + " and b " + shape_str(sb); };
  if (sa.empty() || sb.empty()) throw ShapeError("matmul: expected operands with at least 1 dim" + got());
  // A 1-D a is one row [1, k], a 1-D b one column [k, 1]; that added dim is dropped from the result.
  Shape a_row, b_column;  // only for a 1-D operand
  const Shape& a = sa.size() == 1 ? (a_row = {1, sa[0]}) : sa;
  const Shape& b = sb.size() == 1 ? (b_column = {sb[0], 1}) : sb;
  MatmulPlan p;
  p.m = a[a.size() - 2];
  p.k = a.back();
  p.n = b.back();
  if (b[b.size() - 2] != p.k)
    throw ShapeError(std::string("matmul: expected a.shape[-1] == b.shape[") + (sb.size() == 1 ? "0" : "-2") + "]" + got());

  // Batch dims: all but the last two, aligned from the right and broadcast as numpy does.
  Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  const std::size_t nb = std::max(a_batch.size(), b_batch.size());
  a_batch.insert(a_batch.begin(), nb - a_batch.size(), 1);
  b_batch.insert(b_batch.begin(), nb - b_batch.size(), 1);
  Shape batch(nb);
  for (std::size_t d = 0; d < nb; ++d) {
    if (a_batch[d] != b_batch[d] && a_batch[d] != 1 && b_batch[d] != 1)
      throw ShapeError("matmul: batch dims do not broadcast (" + std::to_string(a_batch[d]) + " vs " +
                       std::to_string(b_batch[d]) + ")" + got());
    batch[d] = a_batch[d] == 1 ? b_batch[d] : a_batch[d];
  }
  p.out_shape = batch;
  p.out_shape.reserve(nb + 2);
  if (sa.size() > 1) p.out_shape.push_back(p.m);
  if (sb.size() > 1) p.out_shape.push_back(p.n);

  if (sb.size() <= 2) {
    // b is one matrix: a's stack [..., m, k] is one tall matrix [(...) * m, k], so ONE gemm does it all.
    p.m *= product(a_batch);
    return p;
  }
  // Otherwise one gemm per output matrix. Walk the batch index (i_0, ..., i_nb-1) of
  // each output matrix; a broadcast dim (size 1) of an operand always uses its index 0.
  const std::size_t count = product(batch);
  p.products = count;
  for (std::size_t i = 0; i < count; ++i) {
    std::size_t rest = i, ai = 0, bi = 0, a_stride = 1, b_stride = 1;
    for (std::size_t d = nb; d-- > 0;) {
      const std::size_t idx = rest % batch[d];
      rest /= batch[d];
      if (a_batch[d] != 1) ai += idx * a_stride;
      if (b_batch[d] != 1) bi += idx * b_stride;
      a_stride *= a_batch[d];
      b_stride *= b_batch[d];
    }
    p.a_of.push_back(ai);
    p.b_of.push_back(bi);
  }
  return p;
}

// Where gemm writes an input's gradient, and with which beta. An input with no
// gradient yet gets a fresh buffer that gemm overwrites (beta = 0): filling it
// with zeros first would cost a pass over memory for nothing. Otherwise gemm
// adds into the gradient it already has (beta = 1). When several products add
// into the same matrix of the input (its batch dims were broadcast), the fresh
// buffer starts at zeros and every product adds.
template <class T>
struct GradTarget {
  T* data;
  T beta;
};

template <class T>
GradTarget<T> grad_target(Node<T>& in, bool each_matrix_once = true) {
  if (in.has_grad) return {in.grad.data(), T(1)};
  in.has_grad = true;
  if (!each_matrix_once) {
    in.grad = filled(in.value.shape(), T(0));
    return {in.grad.data(), T(1)};
  }
  in.grad = xt::xarray<T>::from_shape(in.value.shape());
  return {in.grad.data(), T(0)};
}

// Runs product(i) for every product of the plan. When they write disjoint
// matrices (every matrix of an operand is used, so as many products as
// matrices means each matrix once), the threads take an even share each
// (parallel.hpp), if the shares are worth it: at least kShareWork
// multiply-adds each (blas::gemm splits one big product on its own; a stack of
// small products such as Bahdanau's context product gains from sharing,
// docs/benchmarks.md). Products that add into the same matrix run in order.
constexpr std::size_t kShareWork = 64 * 1024;

template <class Product>
void for_each_product(const MatmulPlan& p, bool disjoint, const Product& product) {
  const std::size_t count = p.products;
  if (count == 1) return product(0);  // one gemm, which splits itself over the threads
  if (!disjoint) {
    for (std::size_t i = 0; i < count; ++i) product(i);
    return;
  }
  parallel_for(count, even_grain(count, p.m * p.n * p.k, kShareWork), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) product(i);
  });
}

template <class T>
Tensor matmul_(const Tensor& a, const Tensor& b, MatmulPlan p) {
  const std::size_t m = p.m, k = p.k, n = p.n;
  xt::xarray<T> c = xt::xarray<T>::from_shape(p.out_shape);
  const T* A = a.data<T>().data();
  const T* B = b.data<T>().data();
  for_each_product(p, /*disjoint=*/true, [&](std::size_t i) {
    // [m, k] x [k, n] -> [m, n]   (folded: [B*T, D] x [D, O] -> [B*T, O])
    blas::gemm(false, false, m, n, k, T(1), A + p.a_matrix(i) * m * k, k, B + p.b_matrix(i) * k * n, n, T(0),
               c.data() + i * m * n, n);
  });

  return record<T>("matmul", std::move(c), {a, b}, [p = std::move(p)](Node<T>& out) {
    const std::size_t m = p.m, k = p.k, n = p.n;
    const T* G = out.grad.data();
    const T* A = out.input(0).value.data();
    const T* B = out.input(1).value.data();
    if (out.input_requires_grad(0)) {
      // every matrix of a used once (as many products as matrices), or some used by several
      // (an empty a, m * k = 0, has nothing to add up)
      const bool disjoint = m * k == 0 || p.products == out.input(0).value.size() / (m * k);
      const GradTarget<T> dA = grad_target(out.input(0), disjoint);
      for_each_product(p, disjoint, [&](std::size_t i) {
        // dA = G B^T: [m, n] x [k, n]^T -> [m, k]
        blas::gemm(false, true, m, k, n, T(1), G + i * m * n, n, B + p.b_matrix(i) * k * n, n, dA.beta,
                   dA.data + p.a_matrix(i) * m * k, k);
      });
    }
    if (out.input_requires_grad(1)) {
      const bool disjoint = k * n == 0 || p.products == out.input(1).value.size() / (k * n);
      const GradTarget<T> dB = grad_target(out.input(1), disjoint);
      for_each_product(p, disjoint, [&](std::size_t i) {
        // dB = A^T G: [m, k]^T x [m, n] -> [k, n]   (folded: [B*T, D]^T x [B*T, O] -> [D, O], one gemm)
        blas::gemm(true, false, k, n, m, T(1), A + p.a_matrix(i) * m * k, k, G + i * m * n, n, dB.beta,
                   dB.data + p.b_matrix(i) * k * n, n);
      });
    }
  });
}

// x [..., in] seen as one matrix [rows, in]; y = x W^T + bias is [rows, out].
template <class T>
Tensor linear_(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const Shape sx = x.shape();
  const std::size_t in = weight.shape()[1], outs = weight.shape()[0];
  const std::size_t rows = product(Shape(sx.begin(), sx.end() - 1));
  Shape out_shape = sx;
  out_shape.back() = outs;
  const bool has_bias = bias.defined();
  const bool whole_bias = has_bias && bias.dim() > 1;  // [..., out], the output's shape (checked in linear)
  // With a bias, y starts as the bias (in every row, or as a copy of a whole one) and gemm adds x W^T to it (beta = 1).
  xt::xarray<T> y = whole_bias ? copy_of(bias.data<T>()) : xt::xarray<T>::from_shape(out_shape);
  if (has_bias && !whole_bias)  // the bias [out] copied into each row: a plain copy, not a broadcast walk
    for (std::size_t r = 0; r < rows; ++r) kernels::copy(bias.data<T>().data(), y.data() + r * outs, outs);
  // [rows, in] x [out, in]^T -> [rows, out]
  blas::gemm(false, true, rows, outs, in, T(1), x.data<T>().data(), in, weight.data<T>().data(), in,
             T(has_bias ? 1 : 0), y.data(), outs);

  std::vector<Tensor> inputs{x, weight};
  if (has_bias) inputs.push_back(bias);
  return record<T>("linear", std::move(y), inputs, [rows, in, outs, has_bias, whole_bias](Node<T>& out) {
    const T* G = out.grad.data();  // [rows, out]
    if (out.input_requires_grad(0)) {
      // dx = G W: [rows, out] x [out, in] -> [rows, in]
      const GradTarget<T> dx = grad_target(out.input(0));
      blas::gemm(false, false, rows, in, outs, T(1), G, outs, out.input(1).value.data(), in, dx.beta, dx.data, in);
    }
    if (out.input_requires_grad(1)) {
      // dW = G^T x: [rows, out]^T x [rows, in] -> [out, in]
      const GradTarget<T> dW = grad_target(out.input(1));
      blas::gemm(true, false, outs, in, rows, T(1), G, outs, out.input(0).value.data(), in, dW.beta, dW.data, in);
    }
    if (whole_bias && out.input_requires_grad(2)) {
      // d bias = G, handed over whole (G's last use: no copy)
      out.add_to_input_grad(2, out.take_grad());
    } else if (has_bias && out.input_requires_grad(2)) {
      // d bias = G summed over the rows: [rows, out] -> [out]
      const GradTarget<T> db = grad_target(out.input(2));
      if (db.beta == T(0)) std::fill(db.data, db.data + outs, T(0));
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t j = 0; j < outs; ++j) db.data[j] += G[r * outs + j];
    }
  });
}

}  // namespace

// Inputs checked by core/ops/matmul.cpp (plan_matmul checks matmul's shapes).
Tensor fused::matmul(const Tensor& a, const Tensor& b) {
  return ATTN_DISPATCH(a.dtype(), matmul_, a, b, plan_matmul(a.shape(), b.shape()));
}

Tensor fused::linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return ATTN_DISPATCH(x.dtype(), linear_, x, weight, bias);
}

}  // namespace attn
