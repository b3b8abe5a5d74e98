#include "init.hpp"

#include <cmath>

namespace attn::nn::init {

namespace {

// Sets every value of t to draw(), in row-major order, without recording a graph.
template <class Draw>
Tensor& fill(Tensor& t, const char* fn, Draw draw) {
  if (!t.defined()) throw ValueError(std::string("init.") + fn + ": the tensor is undefined");
  no_grad guard;
  if (t.dtype() == Dtype::Float64)
    for (double& v : t.data<double>()) v = draw();
  else
    for (float& v : t.data<float>()) v = static_cast<float>(draw());
  return t;
}

std::size_t correct_fan(const Tensor& t, const std::string& mode, const char* fn) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  if (mode == "fan_in") return fan_in;
  if (mode == "fan_out") return fan_out;
  throw ValueError(std::string("init.") + fn + ": mode must be \"fan_in\" or \"fan_out\", got \"" + mode + "\"");
}

}  // namespace

Tensor& uniform_(Tensor& t, double a, double b, Generator& gen) {
  if (!(a <= b)) throw ValueError("init.uniform_: expected a <= b, got a=" + std::to_string(a) + ", b=" + std::to_string(b));
  return fill(t, "uniform_", [&] { return gen.uniform(a, b); });
}

Tensor& normal_(Tensor& t, double mean, double std, Generator& gen) {
  if (!(std >= 0)) throw ValueError("init.normal_: expected std >= 0, got " + std::to_string(std));
  if (std == 0) return constant_(t, mean);  // std::normal_distribution needs std > 0
  return fill(t, "normal_", [&] { return gen.normal(mean, std); });
}

Tensor& constant_(Tensor& t, double value) {
  return fill(t, "constant_", [value] { return value; });
}
Tensor& zeros_(Tensor& t) { return constant_(t, 0.0); }
Tensor& ones_(Tensor& t) { return constant_(t, 1.0); }

std::pair<std::size_t, std::size_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  if (!t.defined()) throw ValueError("init.calculate_fan_in_and_fan_out: the tensor is undefined");
  const Shape shape = t.shape();
  if (shape.size() < 2)
    throw ValueError("init.calculate_fan_in_and_fan_out: fan in and fan out need at least 2 dims, got shape " +
                     shape_str(shape));
  std::size_t receptive_field = 1;  // the product of the dims after the first two
  for (std::size_t d = 2; d < shape.size(); ++d) receptive_field *= shape[d];
  return {shape[1] * receptive_field, shape[0] * receptive_field};
}

double calculate_gain(const std::string& nonlinearity, std::optional<double> param) {
  if (nonlinearity == "linear" || nonlinearity == "sigmoid") return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") {
    const double slope = param.value_or(0.01);
    return std::sqrt(2.0 / (1 + slope * slope));
  }
  if (nonlinearity == "selu") return 3.0 / 4;
  throw ValueError("init.calculate_gain: unsupported nonlinearity \"" + nonlinearity +
                   "\" (linear, sigmoid, tanh, relu, leaky_relu, selu)");
}

Tensor& xavier_uniform_(Tensor& t, double gain, Generator& gen) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  const double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  const double bound = std::sqrt(3.0) * std;  // uniform(-b, b) has std b / sqrt(3)
  return uniform_(t, -bound, bound, gen);
}

Tensor& xavier_normal_(Tensor& t, double gain, Generator& gen) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  const double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  return normal_(t, 0.0, std, gen);
}

Tensor& kaiming_uniform_(Tensor& t, double a, const std::string& mode, const std::string& nonlinearity,
                         Generator& gen) {
  if (t.defined() && t.numel() == 0) return t;  // nothing to fill (PyTorch only warns)
  const double fan = static_cast<double>(correct_fan(t, mode, "kaiming_uniform_"));
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(fan);
  const double bound = std::sqrt(3.0) * std;
  return uniform_(t, -bound, bound, gen);
}

Tensor& kaiming_normal_(Tensor& t, double a, const std::string& mode, const std::string& nonlinearity,
                        Generator& gen) {
  if (t.defined() && t.numel() == 0) return t;
  const double fan = static_cast<double>(correct_fan(t, mode, "kaiming_normal_"));
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(fan);
  return normal_(t, 0.0, std, gen);
}

}  // namespace attn::nn::init
