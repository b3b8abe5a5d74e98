// The parameter copy that builds a Transformer stack (see transformer_stack.hpp).
#include "transformer_stack.hpp"

#include "../core/errors.hpp"

#include <string>

namespace attn::nn {

namespace detail {

void copy_parameters(const Module& from, Module& to) {
  to.to(from.dtype());
  auto source = from.named_parameters();
  auto target = to.named_parameters();
  if (source.size() != target.size())
    throw ValueError("copy_parameters: " + from.type_name() + " has " + std::to_string(source.size()) +
                     " parameters, " + to.type_name() + " has " + std::to_string(target.size()));
  for (std::size_t i = 0; i < source.size(); ++i) {
    const auto& [name, value] = source[i];
    Tensor& copy = target[i].second;  // a handle to the same node as the member tensor
    if (name != target[i].first || value.shape() != copy.shape())
      throw ShapeError("copy_parameters: " + name + " " + shape_str(value.shape()) + " does not match " +
                       target[i].first + " " + shape_str(copy.shape()));
    if (value.dtype() == Dtype::Float64) copy.data<double>() = value.data<double>();
    else copy.data<float>() = value.data<float>();
  }
}

}  // namespace detail

}  // namespace attn::nn
