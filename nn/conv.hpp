// nn::Conv1d: a 1-D convolution layer, as torch.nn.Conv1d (stride 1, one group).
//
//   attn::nn::Conv1d conv(8, 16, /*kernel_size=*/3, "same");  // weight [16, 8, 3], bias [16]
//   Tensor y = conv(x);                                        // x [N, 8, L] -> y [N, 16, L]
//
// Initialized as PyTorch does: weight and bias uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)],
// fan_in = in_channels * kernel_size.
#pragma once

#include "module.hpp"

#include "../core/random.hpp"

#include <string>

namespace attn::nn {

class Conv1d : public Module {
 public:
  // padding: "same" (output as long as the input), "valid" (none) or a number of zeros per end.
  Conv1d(std::size_t in_channels, std::size_t out_channels, std::size_t kernel_size, std::size_t padding = 0,
         bool bias = true, Generator& gen = default_generator());
  Conv1d(std::size_t in_channels, std::size_t out_channels, std::size_t kernel_size, const std::string& padding,
         bool bias = true, Generator& gen = default_generator());

  Tensor forward(const Tensor& x) const;  // [N, in_channels, L] -> [N, out_channels, L_out]
  Tensor operator()(const Tensor& x) const { return forward(x); }
  std::string extra_repr() const override;

  void reset_parameters(Generator& gen = default_generator());

  std::size_t in_channels, out_channels, kernel_size;
  std::string padding;  // "same", "valid" or a number
  Tensor weight;        // [out_channels, in_channels, kernel_size]
  Tensor bias;          // [out_channels], undefined when built with bias = false
};

}  // namespace attn::nn
