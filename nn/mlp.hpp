// nn::MLP: a multilayer perceptron, Linear layers with an activation (and
// optional dropout) between them.
//
//   attn::nn::MLP mlp({2, 32, 32, 3}, "tanh");  // 2 -> 32 -> 32 -> 3
//   Tensor logits = mlp(x);                     // x [N, 2] -> [N, 3]
//
// computes, for sizes {in, h1, ..., out}:
//   x = dropout(act(layers[i](x)))   for every layer but the last,
//   x = layers[last](x)              (also activated if activate_last).
// The Linear layers live in a ModuleList registered as "layers", so the
// parameters are named "layers.0.weight", "layers.0.bias", "layers.1.weight", ...
#pragma once

#include "activation.hpp"
#include "linear.hpp"
#include "module.hpp"
#include "module_list.hpp"

#include <string>
#include <vector>

namespace attn::nn {

class MLP : public Module {
 public:
  MLP(std::vector<std::size_t> sizes, Activation activation = Activation::ReLU, double dropout = 0.0,
      bool activate_last = false, Generator& gen = default_generator());
  // The activation by name: "relu", "tanh", "gelu", "sigmoid" or "identity".
  MLP(std::vector<std::size_t> sizes, const std::string& activation, double dropout = 0.0,
      bool activate_last = false, Generator& gen = default_generator())
      : MLP(std::move(sizes), activation_from_name(activation), dropout, activate_last, gen) {}

  Tensor forward(const Tensor& x) const;  // [..., sizes.front()] -> [..., sizes.back()]
  Tensor operator()(const Tensor& x) const { return forward(x); }
  std::string extra_repr() const override;

  std::vector<std::size_t> sizes;
  Activation activation;
  double dropout;
  bool activate_last;
  ModuleList<Linear> layers;

 private:
  Generator* gen_;  // for the dropout masks
};

}  // namespace attn::nn
