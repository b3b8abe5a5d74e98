#include "context.hpp"

#include "../init.hpp"

#include "../../core/ops.hpp"

#include <cmath>

namespace attn::nn {

namespace {

// Checked before proj is built, so that the message names this layer.
std::size_t checked_input_dim(std::size_t input_dim, std::size_t attention_dim) {
  if (input_dim == 0 || attention_dim == 0)
    throw ValueError("ContextAttention: input_dim and attention_dim must be positive, got " +
                     std::to_string(input_dim) + " and " + std::to_string(attention_dim));
  return input_dim;
}

}  // namespace

ContextAttention::ContextAttention(std::size_t input_dim, std::size_t attention_dim, Generator& gen)
    : Module("ContextAttention"), input_dim(checked_input_dim(input_dim, attention_dim)),
      attention_dim(attention_dim), proj(input_dim, attention_dim, /*bias=*/true, gen) {
  register_module("proj", proj);
  context = zeros({attention_dim});
  register_parameter("context", context);
  const double bound = 1.0 / std::sqrt(static_cast<double>(attention_dim));
  init::uniform_(context, -bound, bound, gen);
}

ContextAttentionOutput ContextAttention::forward(const Tensor& states, const std::optional<Mask>& key_padding_mask) {
  if (!states.defined()) throw ValueError("ContextAttention: the states are undefined");
  if (states.dim() != 3 || states.size(2) != input_dim)
    throw ShapeError("ContextAttention: expected states [B, T, " + std::to_string(input_dim) + "], got " +
                     shape_str(states.shape()));
  if (states.dtype() != context.dtype())
    throw ValueError(std::string("ContextAttention: states are ") + dtype_name(states.dtype()) + ", the parameters " +
                     dtype_name(context.dtype()) + " (convert one with .to())");
  const std::size_t B = states.size(0), T = states.size(1);
  if (key_padding_mask && (key_padding_mask->dimension() != 2 || key_padding_mask->shape()[0] != B ||
                           key_padding_mask->shape()[1] != T))
    throw ShapeError("ContextAttention: expected key_padding_mask [" + std::to_string(B) + ", " + std::to_string(T) +
                     "] for states " + shape_str(states.shape()) + ", got " +
                     shape_str(Shape(key_padding_mask->shape().begin(), key_padding_mask->shape().end())));
  Tensor u = tanh(proj(states));                                            // [B, T, A]
  Tensor e = reshape(matmul(u, reshape(context, {-1, 1})), {long(B), long(T)});  // [B, T, A] x [A, 1] -> [B, T, 1] -> [B, T]
  Tensor a = masked_softmax(e, key_padding_mask, 1);                         // [B, T]
  Tensor s = reshape(matmul(unsqueeze(a, 1), states), {long(B), -1});        // [B, 1, T] x [B, T, D] -> [B, D]
  last_weights_ = a.detach();
  return {s, a};
}

std::string ContextAttention::extra_repr() const {
  return "input_dim=" + std::to_string(input_dim) + ", attention_dim=" + std::to_string(attention_dim);
}

}  // namespace attn::nn
