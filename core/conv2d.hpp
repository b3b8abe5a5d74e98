// 2-D convolution over images [N, C, H, W], as torch.nn.functional.conv2d (dilation 1,
// one group), and the geometry it shares with pooling (core/pool2d.hpp).
// Forward and backward live side by side in core/ops/conv2d.cpp. With fused ops on
// (core/kernels.hpp) conv2d runs the backend's version instead (core/backend/conv2d.cpp).
// Bad shapes throw attn::ShapeError naming the op and the shapes.
//
// Output sizes, per spatial dim, for kernel k, stride s, padding p:  out = (in + 2p - k) / s + 1.
#pragma once

#include "tensor.hpp"

#include <array>
#include <cstddef>

namespace attn {

// (height, width): a kernel size, stride or padding that differs between the two dims.
using Size2 = std::array<std::size_t, 2>;

// x [N, C, H, W], weight [O, C, kH, kW], bias [O] (optional) -> [N, O, outH, outW],
// zero-padded by `padding` on each side of each dim.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2 stride, Size2 padding);
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), std::size_t stride = 1,
              std::size_t padding = 0);

// The geometry both paths share, checked: what conv2d and the pools compute over.
struct Conv2dGeometry {
  std::size_t N, C, H, W;      // input
  std::size_t kH, kW;          // kernel
  std::size_t sH, sW, pH, pW;  // stride, padding
  std::size_t outH, outW;      // output
};
// Throws ShapeError (naming `op` and the shapes) for an input with no channel, row or column
// (only N may be 0, as in PyTorch), a zero kernel or stride, or a kernel larger than the padded input.
Conv2dGeometry conv2d_geometry(const char* op, const Shape& x, Size2 kernel, Size2 stride, Size2 padding);

}  // namespace attn
