// The backend's conv2d (core/backend/conv2d.cpp): im2col image by image and direct gemm calls.
// attn::conv2d (core/ops/conv2d.cpp) checks the shapes and calls it when fused ops are on
// (core/kernels.hpp); with them off it runs its own, composed version.
#pragma once

#include "../conv2d.hpp"

namespace attn::fused {

// conv2d over a checked geometry (conv2d_geometry): x [N, C, H, W], weight [O, C, kH, kW], bias [O] or undefined.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dGeometry& g);

}  // namespace attn::fused
