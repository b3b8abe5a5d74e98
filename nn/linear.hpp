// nn::Linear: y = x W^T + b, as torch.nn.Linear.
//
//   attn::nn::Linear fc(4, 3);          // weight [3, 4], bias [3]
//   Tensor y = fc(x);                    // x [..., 4] -> y [..., 3]
//
// Initialized as PyTorch does: weight by kaiming_uniform_(a = sqrt(5)), i.e.
// uniform in [-1/sqrt(in), 1/sqrt(in)], and bias uniform in the same range.
#pragma once

#include "module.hpp"

#include "../core/random.hpp"

namespace attn::nn {

class Linear : public Module {
 public:
  Linear(std::size_t in_features, std::size_t out_features, bool bias = true,
         Generator& gen = default_generator());

  Tensor forward(const Tensor& x) const;  // [..., in_features] -> [..., out_features]
  Tensor operator()(const Tensor& x) const { return forward(x); }
  std::string extra_repr() const override;

  // Draws the initial values again (from `gen`), as PyTorch's reset_parameters().
  void reset_parameters(Generator& gen = default_generator());

  std::size_t in_features, out_features;
  Tensor weight;  // [out_features, in_features]
  Tensor bias;    // [out_features], undefined when built with bias = false
};

}  // namespace attn::nn
