// vecmath for x86-64 CPUs with AVX2 and FMA: this file alone is compiled with
// -mavx2 -mfma (core/meson.build), and vecmath.cpp only calls it on such a CPU.
#include "entry_points.hpp"
#include "kernels.hpp"

ATTN_VECMATH_DEFINE(avx2, xsimd::fma3<xsimd::avx2>)
