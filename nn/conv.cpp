#include "conv.hpp"

#include "init.hpp"

#include "../core/ops.hpp"

#include <cmath>

namespace attn::nn {

Conv1d::Conv1d(std::size_t in_channels, std::size_t out_channels, std::size_t kernel_size, std::size_t padding,
               bool bias, Generator& gen)
    : Conv1d(in_channels, out_channels, kernel_size, std::to_string(padding), bias, gen) {}

Conv1d::Conv1d(std::size_t in_channels, std::size_t out_channels, std::size_t kernel_size,
               const std::string& padding, bool bias, Generator& gen)
    : Module("Conv1d"), in_channels(in_channels), out_channels(out_channels), kernel_size(kernel_size),
      padding(padding) {
  if (in_channels == 0 || out_channels == 0 || kernel_size == 0)
    throw ValueError("Conv1d: in_channels, out_channels and kernel_size must be >= 1, got " +
                     std::to_string(in_channels) + ", " + std::to_string(out_channels) + ", " +
                     std::to_string(kernel_size));
  if (padding != "same" && padding != "valid" &&
      (padding.empty() || padding.find_first_not_of("0123456789") != std::string::npos))
    throw ValueError("Conv1d: padding must be \"same\", \"valid\" or a number, got \"" + padding + "\"");
  weight = zeros({out_channels, in_channels, kernel_size});
  register_parameter("weight", weight);
  if (bias) {
    this->bias = zeros({out_channels});
    register_parameter("bias", this->bias);
  }
  reset_parameters(gen);
}

void Conv1d::reset_parameters(Generator& gen) {
  // kaiming_uniform_ with a = sqrt(5) gives the bound 1 / sqrt(fan_in), fan_in = in_channels * kernel_size
  init::kaiming_uniform_(weight, std::sqrt(5.0), "fan_in", "leaky_relu", gen);
  if (bias.defined()) {
    const double bound = 1.0 / std::sqrt(double(in_channels * kernel_size));
    init::uniform_(bias, -bound, bound, gen);
  }
}

Tensor Conv1d::forward(const Tensor& x) const {
  if (!x.defined()) throw ValueError("Conv1d: the input tensor is undefined");
  if (x.dim() != 3 || x.size(1) != in_channels)
    throw ShapeError("Conv1d: expected input [N, " + std::to_string(in_channels) + ", L], got " + shape_str(x.shape()));
  if (padding == "same" || padding == "valid") return conv1d(x, weight, bias, padding);
  return conv1d(x, weight, bias, std::size_t(std::stoul(padding)));  // [N, C_in, L] -> [N, C_out, L + 2p - K + 1]
}

std::string Conv1d::extra_repr() const {
  return std::to_string(in_channels) + ", " + std::to_string(out_channels) +
         ", kernel_size=" + std::to_string(kernel_size) + ", padding=" + padding +
         ", bias=" + (bias.defined() ? "true" : "false");
}

}  // namespace attn::nn
