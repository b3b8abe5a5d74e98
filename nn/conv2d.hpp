// nn::Conv2d: a 2-D convolution layer, as torch.nn.Conv2d (dilation 1, one group).
//
//   attn::nn::Conv2d conv(3, 16, /*kernel_size=*/3, /*stride=*/1, /*padding=*/1);  // weight [16, 3, 3, 3], bias [16]
//   Tensor y = conv(x);                                                              // [N, 3, H, W] -> [N, 16, H, W]
//
// Initialized as PyTorch does: kaiming_uniform_ with a = sqrt(5) for the weight, which is uniform in
// [-1/sqrt(fan_in), 1/sqrt(fan_in)], and the bias uniform in the same range; fan_in = in_channels * kH * kW.
#pragma once

#include "module.hpp"

#include "../core/conv2d.hpp"
#include "../core/random.hpp"

namespace attn::nn {

class Conv2d : public Module {
 public:
  Conv2d(std::size_t in_channels, std::size_t out_channels, Size2 kernel_size, Size2 stride = {1, 1},
         Size2 padding = {0, 0}, bool bias = true, Generator& gen = default_generator());
  Conv2d(std::size_t in_channels, std::size_t out_channels, std::size_t kernel_size, std::size_t stride = 1,
         std::size_t padding = 0, bool bias = true, Generator& gen = default_generator())
      : Conv2d(in_channels, out_channels, Size2{kernel_size, kernel_size}, Size2{stride, stride},
               Size2{padding, padding}, bias, gen) {}

  Tensor forward(const Tensor& x) const;  // [N, in_channels, H, W] -> [N, out_channels, outH, outW]
  Tensor operator()(const Tensor& x) const { return forward(x); }
  std::string extra_repr() const override;

  void reset_parameters(Generator& gen = default_generator());

  std::size_t in_channels, out_channels;
  Size2 kernel_size, stride, padding;
  Tensor weight;  // [out_channels, in_channels, kH, kW]
  Tensor bias;    // [out_channels], undefined when built with bias = false
};

}  // namespace attn::nn
