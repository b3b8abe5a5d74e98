// The loops behind vecmath.hpp, written once for any xsimd instruction set A.
//
// Each instruction set gets its own .cpp (baseline.cpp, avx2.cpp, avx512.cpp),
// compiled with that set's flags, which instantiates these templates for its A.
// Every function here is a template on A, so the AVX-512 copy of a loop has a
// different name from the SSE2 one and the linker never mixes them up: code
// for a newer CPU cannot leak into a path an older CPU runs (the pattern
// xsimd's documentation gives for dispatching at run time).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>

namespace attn::vecmath::kernels {

// y[i] = f(x[i]) for n contiguous values (y may be x), a batch of lanes at a time.
// The last n % lanes values go through one padded batch, so every value sees the same f.
template <class A, class T, class F>
void map(const T* x, T* y, std::size_t n, F f) {
  using B = xsimd::batch<T, A>;
  std::size_t i = 0;
  for (; i + B::size <= n; i += B::size) f(B::load_unaligned(x + i)).store_unaligned(y + i);
  if (i == n) return;
  alignas(64) T tail[B::size] = {};
  for (std::size_t j = i; j < n; ++j) tail[j - i] = x[j];
  f(B::load_aligned(tail)).store_aligned(tail);
  for (std::size_t j = i; j < n; ++j) y[j] = tail[j - i];
}

template <class A, class T>
void exp(const T* x, T* y, std::size_t n) {
  map<A>(x, y, n, [](const xsimd::batch<T, A>& x) { return xsimd::exp(x); });
}

template <class A, class T>
void tanh(const T* x, T* y, std::size_t n) {
  map<A>(x, y, n, [](const xsimd::batch<T, A>& x) { return xsimd::tanh(x); });
}

// y[i] = x[i]: the plain loop that vecmath::copy runs instead of memcpy (vecmath.hpp says why).
template <class A, class T>
void copy(const T* x, T* y, std::size_t n) {
  map<A>(x, y, n, [](const xsimd::batch<T, A>& x) { return x; });
}

// sigmoid(x) = 1 / (1 + exp(-x)): exp(-x) = inf for very negative x gives 0, as it should.
template <class A, class T>
void sigmoid(const T* x, T* y, std::size_t n) {
  map<A>(x, y, n, [](const xsimd::batch<T, A>& x) { return T(1) / (T(1) + xsimd::exp(-x)); });
}

}  // namespace attn::vecmath::kernels

// One instruction set's entry points (entry_points.hpp declares them): each ISA's .cpp
// says ATTN_VECMATH_DEFINE(its namespace, its xsimd arch).
#define ATTN_VECMATH_DEFINE(ns, A)                                                          \
  namespace attn::vecmath::ns {                                                             \
  void exp(const float* x, float* y, std::size_t n) { kernels::exp<A>(x, y, n); }           \
  void exp(const double* x, double* y, std::size_t n) { kernels::exp<A>(x, y, n); }         \
  void tanh(const float* x, float* y, std::size_t n) { kernels::tanh<A>(x, y, n); }         \
  void tanh(const double* x, double* y, std::size_t n) { kernels::tanh<A>(x, y, n); }       \
  void sigmoid(const float* x, float* y, std::size_t n) { kernels::sigmoid<A>(x, y, n); }   \
  void sigmoid(const double* x, double* y, std::size_t n) { kernels::sigmoid<A>(x, y, n); } \
  void copy(const float* x, float* y, std::size_t n) { kernels::copy<A>(x, y, n); }         \
  void copy(const double* x, double* y, std::size_t n) { kernels::copy<A>(x, y, n); }       \
  }
