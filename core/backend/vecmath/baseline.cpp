// vecmath for every CPU of the target: xsimd's default instruction set for the
// project's flags (SSE2 on x86-64).
#include "entry_points.hpp"
#include "kernels.hpp"

ATTN_VECMATH_DEFINE(baseline, xsimd::default_arch)
