// The functions each instruction set's .cpp defines (kernels.hpp's
// ATTN_VECMATH_DEFINE), declared for vecmath.cpp, which picks one set.
#pragma once

#include <cstddef>

#define ATTN_VECMATH_DECLARE(ns)                           \
  namespace attn::vecmath::ns {                            \
  void exp(const float* x, float* y, std::size_t n);       \
  void exp(const double* x, double* y, std::size_t n);     \
  void tanh(const float* x, float* y, std::size_t n);      \
  void tanh(const double* x, double* y, std::size_t n);    \
  void sigmoid(const float* x, float* y, std::size_t n);   \
  void sigmoid(const double* x, double* y, std::size_t n); \
  void copy(const float* x, float* y, std::size_t n);      \
  void copy(const double* x, double* y, std::size_t n);    \
  }

ATTN_VECMATH_DECLARE(baseline)
#if defined(__x86_64__)  // core/meson.build compiles avx2.cpp and avx512.cpp on x86-64 only
ATTN_VECMATH_DECLARE(avx2)
ATTN_VECMATH_DECLARE(avx512)
#endif
