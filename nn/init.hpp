// Weight initialization, as torch.nn.init. Every function fills a tensor's
// values in place (no gradient is recorded) and returns the tensor:
//
//   attn::manual_seed(0);
//   attn::nn::init::xavier_uniform_(layer.weight);
//
// Random values come from a Generator (attn::default_generator() unless one is
// given), so attn::manual_seed(n) makes the initial weights reproducible bit
// for bit. Values are drawn in double, in row-major order, then stored in the
// tensor's dtype.
#pragma once

#include "../core/random.hpp"
#include "../core/tensor.hpp"

#include <optional>
#include <string>
#include <utility>

namespace attn::nn::init {

Tensor& uniform_(Tensor& t, double a = 0.0, double b = 1.0, Generator& gen = default_generator());
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0, Generator& gen = default_generator());
Tensor& constant_(Tensor& t, double value);
Tensor& zeros_(Tensor& t);
Tensor& ones_(Tensor& t);

// fan_in and fan_out of a weight: a Linear weight [out, in] has fan_in = in and
// fan_out = out; for more dims, both are multiplied by prod(shape[2:]).
// Needs at least 2 dims (ValueError otherwise).
std::pair<std::size_t, std::size_t> calculate_fan_in_and_fan_out(const Tensor& t);

// The recommended gain for a nonlinearity: "linear" and "sigmoid" 1, "tanh" 5/3,
// "relu" sqrt(2), "leaky_relu" sqrt(2 / (1 + slope^2)) (slope = param, default 0.01),
// "selu" 3/4.
double calculate_gain(const std::string& nonlinearity, std::optional<double> param = std::nullopt);

// Glorot & Bengio (2010): keeps the variance of activations and gradients alike.
// uniform in [-b, b] with b = gain * sqrt(6 / (fan_in + fan_out)).
Tensor& xavier_uniform_(Tensor& t, double gain = 1.0, Generator& gen = default_generator());
// normal with std = gain * sqrt(2 / (fan_in + fan_out)).
Tensor& xavier_normal_(Tensor& t, double gain = 1.0, Generator& gen = default_generator());

// He et al. (2015): uniform in [-b, b] with b = gain * sqrt(3 / fan), gain =
// calculate_gain(nonlinearity, a), fan = fan_in (mode "fan_in") or fan_out.
// nn::Linear uses a = sqrt(5), which gives b = 1 / sqrt(fan_in).
Tensor& kaiming_uniform_(Tensor& t, double a = 0.0, const std::string& mode = "fan_in",
                         const std::string& nonlinearity = "leaky_relu", Generator& gen = default_generator());
// normal with std = gain / sqrt(fan).
Tensor& kaiming_normal_(Tensor& t, double a = 0.0, const std::string& mode = "fan_in",
                        const std::string& nonlinearity = "leaky_relu", Generator& gen = default_generator());

}  // namespace attn::nn::init
