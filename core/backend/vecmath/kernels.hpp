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
#include <cstdint>
#include <limits>

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

// exp of doubles, written here rather than taken from xsimd: xsimd 8.1 builds
// 2^n by converting doubles to 64-bit integers, which AVX2 cannot do in one
// instruction, so xsimd does it lane by lane, several times slower than for a
// float (docs/benchmarks.md). Here every step is a vector instruction on AVX2 and SSE2 too:
//   exp(x) = 2^n e^r,  n = round(x / ln 2),  r = x - n ln 2,  |r| <= ln(2) / 2,
// e^r by its Taylor series up to r^13 (the first term left out is below 2e-17 of
// the sum), and 2^n written straight into a double's exponent bits: adding
// 1.5 * 2^52 to a double rounds it to an integer and leaves that integer in the
// low bits, where a 64-bit integer subtraction reads it. 2^n is applied as two
// factors 2^n1 2^n2 (n1 = floor(n / 2)), each a normal double, so that results
// below the smallest normal double come out as subnormals, as std::exp gives.
template <class A>
xsimd::batch<double, A> exp_of_doubles(const xsimd::batch<double, A>& x) {
  using B = xsimd::batch<double, A>;
  using I = xsimd::batch<std::int64_t, A>;
  const B shifter(6755399441055744.0);                              // 1.5 * 2^52
  const B n = xsimd::fma(x, B(1.4426950408889634), shifter) - shifter;  // round(x / ln 2)
  B r = xsimd::fnma(n, B(6.93147180369123816490e-01), x);              // x - n ln 2, ln 2 in two parts
  r = xsimd::fnma(n, B(1.90821492927058770002e-10), r);                // (Cody and Waite)
  // sum_{k <= 13} r^k / k! by Estrin's scheme: pairs of terms, then pairs of
  // pairs, ... Horner's 13 dependent multiply-adds would make each batch wait
  // for the one before (about 2x slower here); these form a tree 4 deep.
  auto pair = [&](double lo, double hi) { return xsimd::fma(B(hi), r, B(lo)); };  // lo + hi r
  const B r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
  const B q0 = xsimd::fma(pair(1.0 / 2, 1.0 / 6), r2, pair(1.0, 1.0));                  // k = 0 .. 3
  const B q1 = xsimd::fma(pair(1.0 / 720, 1.0 / 5040), r2, pair(1.0 / 24, 1.0 / 120));  // k = 4 .. 7
  const B q2 = xsimd::fma(pair(1.0 / 3628800, 1.0 / 39916800), r2, pair(1.0 / 40320, 1.0 / 362880));  // 8 .. 11
  const B q3 = pair(1.0 / 479001600, 1.0 / 6227020800);                                 // k = 12, 13
  const B e = xsimd::fma(xsimd::fma(q3, r4, q2), r8, xsimd::fma(q1, r4, q0));
  auto pow2 = [&](const B& k) {  // 2^k for an integral k in -1022 .. 1023
    const I bits = (xsimd::bitwise_cast<I>(k + shifter) - xsimd::bitwise_cast<I>(shifter) + I(1023)) << 52;
    return xsimd::bitwise_cast<B>(bits);
  };
  const B n1 = xsimd::floor(n * B(0.5));
  B y = e * pow2(n1) * pow2(n - n1);
  // Beyond the ends n is out of pow2's range: e^x overflows to inf, underflows to 0.
  y = xsimd::select(x > B(709.8), B(std::numeric_limits<double>::infinity()), y);
  y = xsimd::select(x < B(-746.0), B(0.0), y);
  return xsimd::select(x != x, x, y);  // NaN stays NaN
}

// tanh of doubles on exp_of_doubles, as Cephes computes it: for |x| < 0.625 the
// rational approximation x + x z P(z) / Q(z), z = x^2; above, 1 - 2 / (e^{2|x|} + 1)
// with x's sign (no cancellation there: tanh(0.625) = 0.55). One division serves both.
template <class A>
xsimd::batch<double, A> tanh_of_doubles(const xsimd::batch<double, A>& x) {
  using B = xsimd::batch<double, A>;
  const B z = x * x, ax = xsimd::abs(x);
  const auto small = ax < B(0.625);
  const B p = xsimd::fma(xsimd::fma(B(-9.64399179425052238628e-1), z, B(-9.92877231001918586564e1)), z,
                         B(-1.61468768441708447952e3));
  const B q = xsimd::fma(xsimd::fma(z + B(1.12811678491632931402e2), z, B(2.23548839060100448583e3)), z,
                         B(4.84406305325125486048e3));
  const B e = exp_of_doubles(ax + ax);
  const B ratio = xsimd::select(small, x * z * p, B(-2.0)) / xsimd::select(small, q, e + B(1.0));
  const B y = xsimd::select(small, x + ratio, xsimd::copysign(B(1.0) + ratio, x));
  return xsimd::select(x == B(0.0), x, y);  // tanh(-0) = -0 (x + ratio would be +0)
}

// exp and tanh of a batch: attn's own for doubles (above), xsimd's for floats.
template <class A>
xsimd::batch<double, A> exp_of(const xsimd::batch<double, A>& x) { return exp_of_doubles(x); }
template <class A>
xsimd::batch<float, A> exp_of(const xsimd::batch<float, A>& x) { return xsimd::exp(x); }
template <class A>
xsimd::batch<double, A> tanh_of(const xsimd::batch<double, A>& x) { return tanh_of_doubles(x); }
template <class A>
xsimd::batch<float, A> tanh_of(const xsimd::batch<float, A>& x) { return xsimd::tanh(x); }

template <class A, class T>
void exp(const T* x, T* y, std::size_t n) {
  map<A>(x, y, n, [](const xsimd::batch<T, A>& x) { return exp_of(x); });
}

template <class A, class T>
void tanh(const T* x, T* y, std::size_t n) {
  map<A>(x, y, n, [](const xsimd::batch<T, A>& x) { return tanh_of(x); });
}

// y[i] = x[i]: the plain loop that vecmath::copy runs instead of memcpy (vecmath.hpp says why).
template <class A, class T>
void copy(const T* x, T* y, std::size_t n) {
  map<A>(x, y, n, [](const xsimd::batch<T, A>& x) { return x; });
}

// sigmoid(x) = 1 / (1 + exp(-x)): exp(-x) = inf for very negative x gives 0, as it should.
template <class A, class T>
void sigmoid(const T* x, T* y, std::size_t n) {
  map<A>(x, y, n, [](const xsimd::batch<T, A>& x) { return T(1) / (T(1) + exp_of(-x)); });
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
