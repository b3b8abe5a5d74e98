// nn::MaxPool2d and nn::AvgPool2d: 2-D pooling layers, as torch.nn's (ceil_mode off; AvgPool2d
// counts padding, PyTorch's count_include_pad=True). No parameters; the stride defaults to the kernel.
//
//   attn::nn::MaxPool2d pool(2);  // [N, C, H, W] -> [N, C, H / 2, W / 2]
#pragma once

#include "module.hpp"

#include "../core/pool2d.hpp"

#include <optional>

namespace attn::nn {

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(Size2 kernel_size, std::optional<Size2> stride = std::nullopt, Size2 padding = {0, 0});
  explicit MaxPool2d(std::size_t kernel_size, std::optional<std::size_t> stride = std::nullopt, std::size_t padding = 0);

  Tensor forward(const Tensor& x) const { return max_pool2d(x, kernel_size, stride, padding); }
  Tensor operator()(const Tensor& x) const { return forward(x); }
  std::string extra_repr() const override;

  Size2 kernel_size, stride, padding;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(Size2 kernel_size, std::optional<Size2> stride = std::nullopt, Size2 padding = {0, 0});
  explicit AvgPool2d(std::size_t kernel_size, std::optional<std::size_t> stride = std::nullopt, std::size_t padding = 0);

  Tensor forward(const Tensor& x) const { return avg_pool2d(x, kernel_size, stride, padding); }
  Tensor operator()(const Tensor& x) const { return forward(x); }
  std::string extra_repr() const override;

  Size2 kernel_size, stride, padding;
};

}  // namespace attn::nn
