// Bahdanau's additive score as one fused op (nn::AdditiveScore calls it):
//
//   additive_score(q, k, v)[b, i, j] = v . tanh(q[b, i] + k[b, j])
//
// q [B, Tq, A] holds the projected queries W1 s_i, k [B, Tk, A] the projected
// keys W2 h_j, v is [A]. Composed from the ops before it, the same score is
//
//   matmul(tanh(unsqueeze(q, 2) + unsqueeze(k, 1)), v)   // [B, Tq, Tk, A] x [A] -> [B, Tq, Tk]
//
// which passes over a [B, Tq, Tk, A] array five times forward (copy, broadcast,
// add, tanh, product) and as often backward. Fused: one pass builds
// t = tanh(q_i + k_j), kept for backward, and gemm does both products with v.
//
// Backward, with G = dL/de [B, Tq, Tk]:
//   dL/dv = sum over b, i, j of G[b,i,j] t[b,i,j]       (one gemm: t^T G)
//   dL/dp[b,i,j] = G[b,i,j] v * (1 - t[b,i,j]^2)         (p = q_i + k_j; d tanh(p)/dp = 1 - tanh(p)^2)
//   dL/dq[b,i] = sum over j of dL/dp[b,i,j],   dL/dk[b,j] = sum over i of dL/dp[b,i,j]
// tests/core/test_additive.cpp checks values and gradients against the composed ops.
#include "fused.hpp"

#include "../kernels.hpp"
#include "../ops.hpp"
#include "../ops/layout.hpp"
#include "../record.hpp"
#include "blas.hpp"
#include "parallel.hpp"
#include "vecmath.hpp"

namespace attn {

namespace {

template <class T>
Tensor additive_score_(const Tensor& q, const Tensor& k, const Tensor& v) {
  const std::size_t B = q.size(0), Tq = q.size(1), Tk = k.size(1), A = q.size(2);
  const T* Q = q.data<T>().data();  // [B, Tq, A]
  const T* K = k.data<T>().data();  // [B, Tk, A]
  xt::xarray<T> t = xt::xarray<T>::from_shape({B, Tq, Tk, A});
  // t = tanh(q_i + k_j) for every pair, batch by batch, a share of the batches per thread
  parallel_for(B, even_grain(B, Tq * Tk * A, kValuesPerShare), [&](std::size_t b0, std::size_t b1) {
    for (std::size_t b = b0; b < b1; ++b) {
      T* tb = t.data() + b * Tq * Tk * A;  // [Tq, Tk, A]
      for (std::size_t i = 0; i < Tq; ++i)
        for (std::size_t j = 0; j < Tk; ++j) {
          const T* qi = Q + (b * Tq + i) * A;
          const T* kj = K + (b * Tk + j) * A;
          T* p = tb + (i * Tk + j) * A;
          for (std::size_t a = 0; a < A; ++a) p[a] = qi[a] + kj[a];
        }
      vecmath::tanh(tb, tb, Tq * Tk * A);
    }
  });
  // e = t v:   [B*Tq*Tk, A] x [A] -> [B*Tq*Tk]
  xt::xarray<T> e = xt::xarray<T>::from_shape({B, Tq, Tk});
  blas::gemm(false, false, B * Tq * Tk, 1, A, T(1), t.data(), A, v.data<T>().data(), 1, T(0), e.data(), 1);

  return record<T>("additive_score", std::move(e), {q, k, v}, [t = std::move(t), B, Tq, Tk, A](Node<T>& out) {
    const T* G = out.grad.data();               // dL/de [B, Tq, Tk]
    const T* V = out.input(2).value.data();     // [A]
    if (out.input_requires_grad(2)) {
      // dL/dv = t^T G:   [B*Tq*Tk, A]^T x [B*Tq*Tk] -> [A]
      xt::xarray<T> dv = xt::xarray<T>::from_shape({A});
      blas::gemm(true, false, A, 1, B * Tq * Tk, T(1), t.data(), A, G, 1, T(0), dv.data(), 1);
      out.add_to_input_grad(2, std::move(dv));
    }
    if (!out.input_requires_grad(0) && !out.input_requires_grad(1)) return;
    // Added straight into the gradients of q and k: a decoder adds into the same keys'
    // gradient at every step. (A scratch array stands in for one that needs none.)
    xt::xarray<T> scratch = empty_array<T>();
    auto grad_of = [&](std::size_t i) {
      if (out.input_requires_grad(i)) return input_grad_buffer(out, i).data();
      scratch = filled(out.input(i).value.shape(), T(0));
      return scratch.data();
    };
    T* dq = grad_of(0);  // [B, Tq, A]
    T* dk = grad_of(1);  // [B, Tk, A]
    // batch b writes only rows b of dq and dk: a share of the batches per thread
    parallel_for(B, even_grain(B, Tq * Tk * A, kValuesPerShare), [&](std::size_t b0, std::size_t b1) {
      for (std::size_t b = b0; b < b1; ++b)
        for (std::size_t i = 0; i < Tq; ++i)
          for (std::size_t j = 0; j < Tk; ++j) {
            const T g = G[(b * Tq + i) * Tk + j];
            const T* tp = t.data() + ((b * Tq + i) * Tk + j) * A;
            T* dqi = dq + (b * Tq + i) * A;
            T* dkj = dk + (b * Tk + j) * A;
            for (std::size_t a = 0; a < A; ++a) {
              const T dp = g * V[a] * (T(1) - tp[a] * tp[a]);  // dL/dp = G v (1 - t^2)
              dqi[a] += dp;
              dkj[a] += dp;
            }
          }
    });
  });
}

}  // namespace

Tensor additive_score(const Tensor& q, const Tensor& k, const Tensor& v) {
  check_inputs("additive_score", {&q, &k, &v});
  const Shape sq = q.shape(), sk = k.shape(), sv = v.shape();
  if (sq.size() != 3 || sk.size() != 3 || sv.size() != 1 || sq[0] != sk[0] || sq[2] != sk[2] || sv[0] != sq[2])
    throw ShapeError("additive_score: expected q [B, Tq, A], k [B, Tk, A] and v [A], got q " + shape_str(sq) +
                     ", k " + shape_str(sk) + " and v " + shape_str(sv));
  if (!fused_ops_enabled()) {
    // Composed: tanh of every query-key sum [B, Tq, Tk, A], times v [A] -> [B, Tq, Tk]
    return matmul(tanh(unsqueeze(q, 2) + unsqueeze(k, 1)), v);
  }
  return ATTN_DISPATCH(q.dtype(), additive_score_, q, k, v);
}

}  // namespace attn
