// Activation functions as modules, as torch.nn.Tanh, ReLU, GELU, Sigmoid,
// Softmax and LogSoftmax. They hold no parameters; each forward() calls the
// core op of the same name, so `attn::nn::ReLU()(x)` equals `attn::relu(x)`.
#pragma once

#include "module.hpp"

#include <string>

namespace attn::nn {

// Names an activation, for layers that take one as a setting (MLP).
enum class Activation { Identity, ReLU, Tanh, GELU, Sigmoid };

// "identity", "relu", "tanh", "gelu" or "sigmoid" (ValueError otherwise).
Activation activation_from_name(const std::string& name);
std::string activation_name(Activation activation);
// f(x) for the named activation.
Tensor activate(Activation activation, const Tensor& x);

class Tanh : public Module {
 public:
  Tanh() : Module("Tanh") {}
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
};

class ReLU : public Module {
 public:
  ReLU() : Module("ReLU") {}
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
};

// The exact GELU, x * Phi(x) (PyTorch's default approximate="none").
class GELU : public Module {
 public:
  GELU() : Module("GELU") {}
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
};

class Sigmoid : public Module {
 public:
  Sigmoid() : Module("Sigmoid") {}
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
};

// softmax along `dim`: every slice along dim becomes a probability distribution.
class Softmax : public Module {
 public:
  explicit Softmax(long dim) : Module("Softmax"), dim(dim) {}
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  std::string extra_repr() const override;
  long dim;
};

// log(softmax(x)) along `dim`, computed stably.
class LogSoftmax : public Module {
 public:
  explicit LogSoftmax(long dim) : Module("LogSoftmax"), dim(dim) {}
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  std::string extra_repr() const override;
  long dim;
};

}  // namespace attn::nn
