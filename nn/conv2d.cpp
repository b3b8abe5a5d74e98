#include "conv2d.hpp"

#include "init.hpp"

#include <cmath>

namespace attn::nn {

namespace {
std::string pair_str(Size2 s) { return "(" + std::to_string(s[0]) + ", " + std::to_string(s[1]) + ")"; }
}  // namespace

Conv2d::Conv2d(std::size_t in_channels, std::size_t out_channels, Size2 kernel_size, Size2 stride, Size2 padding,
               bool bias, Generator& gen)
    : Module("Conv2d"), in_channels(in_channels), out_channels(out_channels), kernel_size(kernel_size),
      stride(stride), padding(padding) {
  if (in_channels == 0 || out_channels == 0 || kernel_size[0] == 0 || kernel_size[1] == 0)
    throw ValueError("Conv2d: in_channels, out_channels and kernel_size must be >= 1, got " +
                     std::to_string(in_channels) + ", " + std::to_string(out_channels) + ", " + pair_str(kernel_size));
  if (stride[0] == 0 || stride[1] == 0) throw ValueError("Conv2d: stride must be >= 1, got " + pair_str(stride));
  weight = zeros({out_channels, in_channels, kernel_size[0], kernel_size[1]});
  register_parameter("weight", weight);
  if (bias) {
    this->bias = zeros({out_channels});
    register_parameter("bias", this->bias);
  }
  reset_parameters(gen);
}

void Conv2d::reset_parameters(Generator& gen) {
  // kaiming_uniform_ with a = sqrt(5) gives the bound 1 / sqrt(fan_in), fan_in = in_channels * kH * kW
  init::kaiming_uniform_(weight, std::sqrt(5.0), "fan_in", "leaky_relu", gen);
  if (bias.defined()) {
    const double bound = 1.0 / std::sqrt(double(in_channels * kernel_size[0] * kernel_size[1]));
    init::uniform_(bias, -bound, bound, gen);
  }
}

Tensor Conv2d::forward(const Tensor& x) const {
  if (!x.defined()) throw ValueError("Conv2d: the input tensor is undefined");
  if (x.dim() != 4 || x.size(1) != in_channels)
    throw ShapeError("Conv2d: expected input [N, " + std::to_string(in_channels) + ", H, W], got " + shape_str(x.shape()));
  return conv2d(x, weight, bias, stride, padding);  // [N, C_in, H, W] -> [N, C_out, outH, outW]
}

std::string Conv2d::extra_repr() const {
  return std::to_string(in_channels) + ", " + std::to_string(out_channels) + ", kernel_size=" + pair_str(kernel_size) +
         ", stride=" + pair_str(stride) + ", padding=" + pair_str(padding) +
         ", bias=" + (bias.defined() ? "true" : "false");
}

}  // namespace attn::nn
