// The four ops of issue 7's (c), each as a case with two calls: attn() runs
// forward + backward through attn (graph, closures, gradients), raw() the same
// arithmetic on bare arrays with the kernels attn uses (vecmath, gemm, the
// copies attn makes with copy_of). attn() - raw() is attn's overhead above the
// arithmetic. Used by ops_bench.cpp (timed) and op_instructions.cpp (counted).
#pragma once

#include "attn.hpp"
#include "core/backend/blas.hpp"
#include "core/backend/vecmath.hpp"

#include <xtensor/xmath.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace bench {

using attn::Tensor;

// Keeps the compiler from dropping a computation whose result is unused: p's
// memory counts as read (what Google Benchmark's DoNotOptimize does).
inline void keep(const void* p) { asm volatile("" : : "r"(p) : "memory"); }
// Every write so far counts as done (benchmark::ClobberMemory).
inline void keep_memory() { asm volatile("" : : : "memory"); }

constexpr std::size_t kRows = 32, kCols = 128;

template <class T>
Tensor input(const attn::Shape& shape, std::uint64_t seed, bool requires_grad = true) {
  attn::Generator gen(seed);
  Tensor t = attn::randn(shape, attn::dtype_of<T>(), gen);
  t.requires_grad_(requires_grad);
  return t;
}

// The same values as a bare array, for the raw rows.
template <class T>
xt::xarray<T> values(const attn::Shape& shape, std::uint64_t seed) {
  return input<T>(shape, seed, false).template data<T>();
}

// Each case holds its inputs, made once; grad_output g is fixed.

template <class T>
struct AddCase {
  Tensor a = input<T>({kRows, kCols}, 1), b = input<T>({kRows, kCols}, 3), g = input<T>({kRows, kCols}, 2, false);
  xt::xarray<T> av = values<T>({kRows, kCols}, 1), bv = values<T>({kRows, kCols}, 3), gv = values<T>({kRows, kCols}, 2);
  void attn() {
    Tensor y = a + b;
    y.backward(g);
    keep_memory();  // (reading .grad() would copy it)
    a.zero_grad();
    b.zero_grad();
  }
  void raw() {
    xt::xarray<T> y = av + bv;
    xt::xarray<T> ga = attn::copy_of(gv), gb = attn::copy_of(gv);  // d(a + b)/da = d(a + b)/db = 1
    keep(y.data());
    keep(ga.data());
    keep(gb.data());
  }
};

template <class T>
struct TanhCase {
  Tensor x = input<T>({kRows, kCols}, 1), g = input<T>({kRows, kCols}, 2, false);
  xt::xarray<T> xv = values<T>({kRows, kCols}, 1), gv = values<T>({kRows, kCols}, 2);
  void attn() {
    Tensor y = attn::tanh(x);
    y.backward(g);
    keep_memory();
    x.zero_grad();
  }
  void raw() {
    xt::xarray<T> y = xt::xarray<T>::from_shape(xv.shape());
    attn::vecmath::tanh(xv.data(), y.data(), y.size());
    xt::xarray<T> gx = gv * (T(1) - y * y);
    keep(gx.data());
  }
};

// raw(): the loops of core/ops/softmax.cpp for the last dim (rows are contiguous), no graph.
template <class T>
struct SoftmaxCase {
  Tensor x = input<T>({kRows, kCols}, 1), g = input<T>({kRows, kCols}, 2, false);
  xt::xarray<T> xv = values<T>({kRows, kCols}, 1), gv = values<T>({kRows, kCols}, 2);
  void attn() {
    Tensor y = attn::softmax(x, -1);
    y.backward(g);
    keep_memory();
    x.zero_grad();
  }
  void raw() {
    const std::size_t n = kCols;
    xt::xarray<T> y = xt::xarray<T>::from_shape(xv.shape()), dx = xt::xarray<T>::from_shape(xv.shape());
    for (std::size_t r = 0; r < kRows; ++r) {  // y = x - max of its row
      const T* in = xv.data() + r * n;
      T m = -std::numeric_limits<T>::infinity();
      for (std::size_t j = 0; j < n; ++j) m = std::max(m, in[j]);
      for (std::size_t j = 0; j < n; ++j) y.data()[r * n + j] = in[j] - m;
    }
    attn::vecmath::exp(y.data(), y.data(), y.size());  // y = exp(y), the whole array at once
    for (std::size_t r = 0; r < kRows; ++r) {           // y = y / sum of its row
      T* out = y.data() + r * n;
      T sum = 0;
      for (std::size_t j = 0; j < n; ++j) sum += out[j];
      for (std::size_t j = 0; j < n; ++j) out[j] /= sum;
    }
    for (std::size_t r = 0; r < kRows; ++r) {  // dx = y * (g - sum(g * y))
      const T *yr = y.data() + r * n, *gr = gv.data() + r * n;
      T gy = 0;
      for (std::size_t j = 0; j < n; ++j) gy += gr[j] * yr[j];
      for (std::size_t j = 0; j < n; ++j) dx.data()[r * n + j] = yr[j] * (gr[j] - gy);
    }
    keep(dx.data());
  }
};

template <class T>
struct MatmulCase {
  Tensor a = input<T>({kRows, kCols}, 1), w = input<T>({kCols, kCols}, 3), g = input<T>({kRows, kCols}, 2, false);
  xt::xarray<T> av = values<T>({kRows, kCols}, 1), wv = values<T>({kCols, kCols}, 3), gv = values<T>({kRows, kCols}, 2);
  void attn() {
    Tensor y = attn::matmul(a, w);  // [32, 128] x [128, 128] -> [32, 128]
    y.backward(g);
    keep_memory();
    a.zero_grad();
    w.zero_grad();
  }
  void raw() {
    const std::size_t m = kRows, k = kCols, n = kCols;
    xt::xarray<T> y = xt::xarray<T>::from_shape({m, n}), da = xt::xarray<T>::from_shape({m, k}),
                  dw = xt::xarray<T>::from_shape({k, n});
    // [m, k] x [k, n] -> [m, n];  dA = G W^T: [m, n] x [k, n]^T -> [m, k];  dW = A^T G: [m, k]^T x [m, n] -> [k, n]
    attn::blas::gemm(false, false, m, n, k, T(1), av.data(), k, wv.data(), n, T(0), y.data(), n);
    attn::blas::gemm(false, true, m, k, n, T(1), gv.data(), n, wv.data(), n, T(0), da.data(), k);
    attn::blas::gemm(true, false, k, n, m, T(1), av.data(), k, gv.data(), n, T(0), dw.data(), n);
    keep(dw.data());
  }
};

}  // namespace bench
