// Reverse-mode differentiation: Tensor::backward().
//
// 1. Collect every node that requires grad and is reachable from the output,
//    in topological order (inputs before the nodes made from them). The graph
//    is a DAG, not a tree: a node used twice is visited once. An explicit stack
//    replaces recursion, so a 10,000-step chain cannot overflow the stack.
// 2. Seed the output's gradient (ones, or the given grad_output).
// 3. Walk the order backwards: each node pushes its gradient into its inputs.
//    A node used twice receives two contributions, which add up.
// 4. Unless retain_graph, release every op node's inputs and backward function.
#include "interrupt.hpp"
#include "record.hpp"

#include <chrono>

namespace attn {

namespace {

// The walk's two lists, kept per thread from one backward to the next so that
// a small graph's backward allocates nothing for them. (Not inlined: inlined,
// GCC looks the thread_local up again at every use inside the loops.)
struct WalkLists {
  std::vector<NodeBase*> order;
  std::vector<std::pair<NodeBase*, std::size_t>> stack;  // node, next input to visit
};
[[gnu::noinline]] WalkLists& walk_lists() {
  thread_local WalkLists lists;
  return lists;
}

std::vector<NodeBase*> topological_order(NodeBase* root, WalkLists& lists) {
  std::vector<NodeBase*> order = std::move(lists.order);
  order.clear();
  auto& stack = lists.stack;
  stack.clear();
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

// Runs one node's backward function, timed when the profiler is on.
void run_node(NodeBase& node) {
  if (!profiler::detail::on) return node.run_backward();
  const auto start = std::chrono::steady_clock::now();
  node.run_backward();
  profiler::backward_ran(node.op, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

// Seeds the root with grad_output. When only the root's own backward will read
// that gradient (no leaf, no retain_grad, grad_output not one of its inputs), the
// array is not copied: it is moved into the root for that one call and moved
// back after it, even if it throws (while borrowed, take_grad copies: node.hpp).
template <class T>
void run_root_on(NodeBase& root_base, const Tensor& grad_output, bool& root_ran) {
  auto& root = static_cast<Node<T>&>(root_base);
  const NodeBase* lender = grad_output.node().get();
  bool borrow = !root.is_leaf && !root.retains_grad && !root.has_grad && lender != &root;
  for (const auto& in : root.inputs) borrow = borrow && in.get() != lender;
  if (!borrow) return root.accumulate_grad(grad_output.data<T>());  // a copy, added to what it holds
  xt::xarray<T>& lent = static_cast<Node<T>&>(*grad_output.node()).value;
  struct GiveBack {
    Node<T>& root;
    xt::xarray<T>& lent;
    ~GiveBack() {
      lent = std::move(root.grad);
      root.grad_is_borrowed = false;
      root.clear_grad();
    }
  } give_back{root, lent};
  root.grad = std::move(lent);
  root.has_grad = root.grad_is_borrowed = true;
  run_node(root);
  root_ran = true;
}

void run_backward(NodeBase& root, const Tensor* grad_output, bool retain_graph) {
  throw_if_interrupted();  // the notebook kernel's stop button (core/interrupt.hpp)
  if (!root.requires_grad)
    throw GraphError("backward: the tensor does not require grad (no input of it has requires_grad=true)");
  if (grad_output) {
    check_inputs("backward", {grad_output});
    if (grad_output->dtype() != root.dtype() || !root.same_shape_as(*grad_output->node()))
      throw ShapeError("backward: expected grad_output of shape " + shape_str(root.shape()) + " and dtype " +
                       dtype_name(root.dtype()) + ", got " + shape_str(grad_output->shape()) + " " +
                       dtype_name(grad_output->dtype()));
  } else if (root.numel() != 1) {
    throw GraphError("backward: expected a scalar output or an explicit grad_output, got shape " +
                     shape_str(root.shape()));
  }

  WalkLists& lists = walk_lists();
  std::vector<NodeBase*> order = topological_order(&root, lists);
  for (NodeBase* node : order)
    if (node->graph_freed)
      throw GraphError(std::string("backward: the graph through '") + node->op +
                       "' was already freed by an earlier backward(); call the first backward(retain_graph=true)");

  bool root_ran = false;
  if (grad_output) ATTN_DISPATCH(root.dtype(), run_root_on, root, *grad_output, root_ran);
  else root.seed_grad_with_ones();  // d root / d root = 1

  // The root is last in `order`; every node's gradient is complete when its turn comes.
  for (auto it = order.rbegin() + (root_ran ? 1 : 0); it != order.rend(); ++it) {
    NodeBase* node = *it;
    if (node->is_leaf) continue;
    run_node(*node);
    if (!node->retains_grad) node->clear_grad();  // intermediate gradients are not kept
  }

  if (!retain_graph)
    for (NodeBase* node : order)
      if (!node->is_leaf) node->free_graph();
  lists.order = std::move(order);  // for the next backward on this thread
}

}  // namespace

void Tensor::backward(bool retain_graph) { run_backward(checked_node("backward"), nullptr, retain_graph); }

void Tensor::backward(const Tensor& grad_output, bool retain_graph) {
  run_backward(checked_node("backward"), &grad_output, retain_graph);
}

}  // namespace attn
