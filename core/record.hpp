// How an op records itself in the graph. Every op in core/ops/ ends with
//
//   return record<T>("tanh", std::move(y), {x}, [](Node<T>& out) {
//     // d tanh(x)/dx = 1 - tanh(x)^2
//     out.add_to_input_grad(0, out.grad * (1 - out.value * out.value));
//   });
//
// The backward function receives its own node (`out`): out.value, out.grad
// and out.input(i).value are all it may read. It must not capture Tensors or
// node pointers, so the graph never keeps itself alive.
#pragma once

#include "kernels.hpp"
#include "tensor.hpp"

#include <initializer_list>

namespace attn {

// Throws unless every tensor is defined and of the same dtype.
void check_inputs(const char* op, std::initializer_list<const Tensor*> inputs);

// Wraps `value` in a new node. If gradients are on and any input requires grad,
// the node remembers its inputs and its backward function. `inputs` is a brace
// list, {x} or {a, b}, or a std::vector of them (concat).
template <class T, class Inputs>
Tensor record_node(const char* op, xt::xarray<T>&& value, const Inputs& inputs,
                   typename Node<T>::BackwardFn&& backward) {
  bool needs_grad = false;
  if (is_grad_enabled())
    for (const Tensor& in : inputs) needs_grad = needs_grad || in.requires_grad();
  auto node = std::make_shared<Node<T>>(op, std::move(value), needs_grad, !needs_grad);
  if (needs_grad) {
    node->inputs.reserve(inputs.size());
    for (const Tensor& in : inputs) node->inputs.push_back(in.node());
    node->backward_fn = std::move(backward);
  }
  if (profiler::detail::on) profiler::forward_recorded(op);  // (core/backend/profiler.hpp)
  return Tensor(std::move(node));
}

template <class T>
Tensor record(const char* op, xt::xarray<T>&& value, std::initializer_list<Tensor> inputs,
              typename Node<T>::BackwardFn backward) {
  return record_node<T>(op, std::move(value), inputs, std::move(backward));
}

template <class T>
Tensor record(const char* op, xt::xarray<T>&& value, const std::vector<Tensor>& inputs,
              typename Node<T>::BackwardFn backward) {
  return record_node<T>(op, std::move(value), inputs, std::move(backward));
}

}  // namespace attn
