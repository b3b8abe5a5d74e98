#include "activation.hpp"

#include "../core/ops.hpp"

namespace attn::nn {

Activation activation_from_name(const std::string& name) {
  if (name == "identity") return Activation::Identity;
  if (name == "relu") return Activation::ReLU;
  if (name == "tanh") return Activation::Tanh;
  if (name == "gelu") return Activation::GELU;
  if (name == "sigmoid") return Activation::Sigmoid;
  throw ValueError("activation: unknown activation \"" + name + "\" (identity, relu, tanh, gelu, sigmoid)");
}

std::string activation_name(Activation activation) {
  switch (activation) {
    case Activation::Identity: return "identity";
    case Activation::ReLU: return "relu";
    case Activation::Tanh: return "tanh";
    case Activation::GELU: return "gelu";
    case Activation::Sigmoid: return "sigmoid";
  }
  return "?";
}

Tensor activate(Activation activation, const Tensor& x) {
  switch (activation) {
    case Activation::Identity: return x;
    case Activation::ReLU: return relu(x);
    case Activation::Tanh: return tanh(x);
    case Activation::GELU: return gelu(x);
    case Activation::Sigmoid: return sigmoid(x);
  }
  return x;
}

Tensor Tanh::forward(const Tensor& x) const { return tanh(x); }
Tensor ReLU::forward(const Tensor& x) const { return relu(x); }
Tensor GELU::forward(const Tensor& x) const { return gelu(x); }
Tensor Sigmoid::forward(const Tensor& x) const { return sigmoid(x); }

Tensor Softmax::forward(const Tensor& x) const { return softmax(x, dim); }
std::string Softmax::extra_repr() const { return "dim=" + std::to_string(dim); }

Tensor LogSoftmax::forward(const Tensor& x) const { return log_softmax(x, dim); }
std::string LogSoftmax::extra_repr() const { return "dim=" + std::to_string(dim); }

}  // namespace attn::nn
