// Lab 2's grader: layer normalization over the last axis, forward and backward
// (labs/02_layer_norm/README.md).
//
//   lab::layer_norm::LayerNorm mine{layer_norm, layer_norm_backward};
//   lab::layer_norm::grade(mine);  // ends with "lab 2: k of 9 checks pass"
#pragma once

#include "lab.hpp"

#include <tuple>

namespace lab {
namespace layer_norm {

using Grads = std::tuple<Tensor, Tensor, Tensor>;

struct LayerNorm {
  // x [..., D], gamma [D], beta [D] -> y [..., D]:
  // y = (x - mean) / sqrt(var + eps) * gamma + beta, mean and (biased) var over the last axis.
  std::function<Tensor(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps)> forward;
  // g = dL/dy [..., D] -> {dL/dx [..., D], dL/dgamma [D], dL/dbeta [D]}.
  std::function<Grads(const Tensor& x, const Tensor& gamma, const Tensor& g, double eps)> backward;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const LayerNorm& ln, std::ostream& os = std::cout);

}  // namespace layer_norm
}  // namespace lab
