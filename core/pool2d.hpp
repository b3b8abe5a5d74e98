// 2-D max and average pooling over images [N, C, H, W], as torch.nn.functional's max_pool2d
// and avg_pool2d (dilation 1, ceil_mode off). Forward and backward live side by side in
// core/ops/pool2d.cpp; the geometry (output sizes, checks) is conv2d's (core/conv2d.hpp).
// Bad shapes throw attn::ShapeError naming the op and the shapes.
#pragma once

#include "conv2d.hpp"
#include "tensor.hpp"

#include <cstddef>
#include <optional>

namespace attn {

// The largest value of each kH x kW window (padding reads as -inf: never picked); the
// gradient goes to the first maximum of each window, as PyTorch's. No stride: the kernel's size.
// padding is at most half the kernel (as PyTorch requires), so every window holds a real value.
Tensor max_pool2d(const Tensor& x, Size2 kernel, std::optional<Size2> stride = std::nullopt, Size2 padding = {0, 0});
Tensor max_pool2d(const Tensor& x, std::size_t kernel, std::optional<std::size_t> stride = std::nullopt,
                  std::size_t padding = 0);

// The mean of each window, padding counted as zeros in it (PyTorch's count_include_pad=True):
// every window divides by kH * kW.
Tensor avg_pool2d(const Tensor& x, Size2 kernel, std::optional<Size2> stride = std::nullopt, Size2 padding = {0, 0});
Tensor avg_pool2d(const Tensor& x, std::size_t kernel, std::optional<std::size_t> stride = std::nullopt,
                  std::size_t padding = 0);

}  // namespace attn
