// Reverse-mode differentiation: Tensor::backward().
//
// 1. Collect every node that requires grad and is reachable from the output,
//    in topological order (inputs before the nodes made from them). An explicit
//    stack replaces recursion, so a 10,000-step chain cannot overflow the stack.
// 2. Seed the output's gradient (ones, or the given grad_output).
// 3. Walk the order backwards: each node pushes its gradient into its inputs.
//    A node used twice receives two contributions, which add up.
// 4. Unless retain_graph, release every op node's inputs and backward function.
#include "record.hpp"

#include <chrono>

namespace attn {

namespace {

std::vector<NodeBase*> topological_order(NodeBase* root) {
  std::vector<NodeBase*> order;
  std::vector<std::pair<NodeBase*, std::size_t>> stack;  // node, next input to visit
  stack.emplace_back(root, 0);
  root->visited = true;
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs.size()) {
      NodeBase* in = node->inputs[next++].get();
      if (in->requires_grad && !in->visited) {
        in->visited = true;
        stack.emplace_back(in, 0);
      }
    } else {
      order.push_back(node);  // all of its inputs are already in `order`
      stack.pop_back();
    }
  }
  for (NodeBase* node : order) node->visited = false;  // ready for the next backward
  return order;
}

template <class T>
void seed(NodeBase& root, const Tensor& grad_output) {
  // Adds to what the root holds: a leaf root keeps accumulating, as in PyTorch.
  static_cast<Node<T>&>(root).accumulate_grad(grad_output.data<T>());
}

void run_backward(NodeBase& root, const Tensor* grad_output, bool retain_graph) {
  if (!root.requires_grad)
    throw GraphError("backward: the tensor does not require grad (no input of it has requires_grad=true)");
  if (grad_output) {
    check_inputs("backward", {grad_output});
    if (grad_output->dtype() != root.dtype() || grad_output->shape() != root.shape())
      throw ShapeError("backward: expected grad_output of shape " + shape_str(root.shape()) + " and dtype " +
                       dtype_name(root.dtype()) + ", got " + shape_str(grad_output->shape()) + " " +
                       dtype_name(grad_output->dtype()));
  } else if (root.numel() != 1) {
    throw GraphError("backward: expected a scalar output or an explicit grad_output, got shape " +
                     shape_str(root.shape()));
  }

  std::vector<NodeBase*> order = topological_order(&root);
  for (NodeBase* node : order)
    if (node->graph_freed)
      throw GraphError(std::string("backward: the graph through '") + node->op +
                       "' was already freed by an earlier backward(); call the first backward(retain_graph=true)");

  if (grad_output) {
    if (root.dtype() == Dtype::Float32) seed<float>(root, *grad_output);
    else seed<double>(root, *grad_output);
  } else {
    root.seed_grad_with_ones();
  }

  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    NodeBase* node = *it;
    if (node->is_leaf) continue;
    if (profiler::detail::on) {
      const auto start = std::chrono::steady_clock::now();
      node->run_backward();
      profiler::backward_ran(node->op, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    } else {
      node->run_backward();
    }
    if (!node->retains_grad) node->clear_grad();  // intermediate gradients are not kept
  }

  if (!retain_graph)
    for (NodeBase* node : order)
      if (!node->is_leaf) node->free_graph();
}

}  // namespace

void Tensor::backward(bool retain_graph) { run_backward(checked_node("backward"), nullptr, retain_graph); }

void Tensor::backward(const Tensor& grad_output, bool retain_graph) {
  run_backward(checked_node("backward"), &grad_output, retain_graph);
}

}  // namespace attn
