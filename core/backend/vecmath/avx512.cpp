// vecmath for x86-64 CPUs with AVX-512 F, CD, DQ, BW and VL (x86-64-v4): this
// file alone is compiled with those flags (core/meson.build), and vecmath.cpp
// only calls it on such a CPU: twice as many values per instruction as AVX2.
#include "entry_points.hpp"
#include "kernels.hpp"

ATTN_VECMATH_DEFINE(avx512, xsimd::avx512bw)
