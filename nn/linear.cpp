#include "linear.hpp"

#include "init.hpp"

#include "../core/ops.hpp"

#include <cmath>

namespace attn::nn {

Linear::Linear(std::size_t in_features, std::size_t out_features, bool bias, Generator& gen)
    : Module("Linear"), in_features(in_features), out_features(out_features) {
  weight = zeros({out_features, in_features});
  register_parameter("weight", weight);
  if (bias) {
    this->bias = zeros({out_features});
    register_parameter("bias", this->bias);
  }
  reset_parameters(gen);
}

void Linear::reset_parameters(Generator& gen) {
  // kaiming_uniform_ with a = sqrt(5): gain sqrt(2 / (1 + 5)), bound gain * sqrt(3 / in) = 1 / sqrt(in)
  init::kaiming_uniform_(weight, std::sqrt(5.0), "fan_in", "leaky_relu", gen);
  if (bias.defined()) {
    const double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
    init::uniform_(bias, -bound, bound, gen);
  }
}

Tensor Linear::forward(const Tensor& x) const {
  if (!x.defined()) throw ValueError("Linear: the input tensor is undefined");
  if (x.dim() == 0 || x.size(-1) != in_features)
    throw ShapeError("Linear: expected input [..., " + std::to_string(in_features) + "], got " + shape_str(x.shape()));
  return linear(x, weight, bias);  // [..., in] x [out, in]^T + [out] -> [..., out]
}

std::string Linear::extra_repr() const {
  return "in_features=" + std::to_string(in_features) + ", out_features=" + std::to_string(out_features) +
         ", bias=" + (bias.defined() ? "true" : "false");
}

}  // namespace attn::nn
