// Reverse-mode differentiation: Tensor::backward().
//
// 1. Collect every node that requires grad and is reachable from the output,
//    in topological order (inputs before the nodes made from them). An explicit
//    stack replaces recursion, so a 10,000-step chain cannot overflow the stack.
// 2. Seed the output's gradient (ones, or the given grad_output).
// 3. Walk the order backwards: each node pushes its gradient into its inputs.
//    A node used twice receives two contributions, which add up.
//    (The output's own backward may run on grad_output's array itself,
//    borrowed rather than copied: run_on_borrowed_seed below.)
// 4. Unless retain_graph, release every op node's inputs and backward function.
#include "interrupt.hpp"
#include "record.hpp"

#include <chrono>

namespace attn {

namespace {

// The walk's two lists are kept from one backward to the next (per thread), so a
// small graph's backward allocates nothing for them (a malloc and a free each,
// in every backward: docs/benchmarks.md counts them).
struct WalkLists {
  std::vector<NodeBase*> order;                          // lent to run_backward, which hands it back
  std::vector<std::pair<NodeBase*, std::size_t>> stack;  // node, next input to visit
};
// This thread's lists. Not inlined: inlined, GCC looks the thread's copy up
// again (a call into the dynamic loader) at every use inside the walk's loops.
[[gnu::noinline]] WalkLists& spare_lists() {
  thread_local WalkLists lists;
  return lists;
}

std::vector<NodeBase*> topological_order(NodeBase* root, WalkLists& spare) {
  std::vector<NodeBase*> order = std::move(spare.order);
  order.clear();
  auto& stack = spare.stack;
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

template <class T>
void seed(NodeBase& root, const Tensor& grad_output) {
  // Adds to what the root holds: a leaf root keeps accumulating, as in PyTorch.
  static_cast<Node<T>&>(root).accumulate_grad(grad_output.data<T>());
}

// Runs one node's backward function, timed when the profiler is on.
void run_node(NodeBase& node) {
  if (!profiler::detail::on) return node.run_backward();
  const auto start = std::chrono::steady_clock::now();
  node.run_backward();
  profiler::backward_ran(node.op, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

// backward(grad_output) could seed the root with a copy of grad_output, a pass
// over memory that is a good part of a small op's whole backward
// (docs/benchmarks.md). Instead the root borrows grad_output's array: only the
// root's own backward function reads the root's gradient, so grad_output's array
// is moved into it (no copy) for that one call and moved back right after, even
// if it throws. While borrowed, take_grad() copies the gradient instead of moving it
// away (node.hpp), so the caller's tensor comes back as it was.
// Not when the root must keep a gradient of its own (a leaf, retain_grad, one it
// already has), nor when its backward reads grad_output's values (grad_output is
// the root or one of its inputs): then seed() copies as before.
bool can_borrow_seed(const NodeBase& root, const Tensor& grad_output) {
  const NodeBase* lender = grad_output.node().get();
  if (root.is_leaf || root.retains_grad || root.has_grad || lender == &root) return false;
  for (const auto& in : root.inputs)
    if (in.get() == lender) return false;
  return true;
}

template <class T>
void run_on_borrowed_seed(NodeBase& root_base, const Tensor& grad_output) {
  auto& root = static_cast<Node<T>&>(root_base);
  xt::xarray<T>& lent = static_cast<Node<T>&>(*grad_output.node()).value;
  struct GiveBack {  // at the end of the scope, however it ends
    Node<T>& root;
    xt::xarray<T>& lent;
    ~GiveBack() {
      lent = std::move(root.grad);
      root.grad_is_borrowed = false;
      root.clear_grad();
    }
  };
  root.grad = std::move(lent);  // lent keeps its shape, without its values until GiveBack
  root.has_grad = root.grad_is_borrowed = true;
  GiveBack give_back{root, lent};
  run_node(root);
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

  WalkLists& spare = spare_lists();
  std::vector<NodeBase*> order = topological_order(&root, spare);
  for (NodeBase* node : order)
    if (node->graph_freed)
      throw GraphError(std::string("backward: the graph through '") + node->op +
                       "' was already freed by an earlier backward(); call the first backward(retain_graph=true)");

  auto next = order.rbegin();  // the root: every other node comes before it in `order`
  if (grad_output && can_borrow_seed(root, *grad_output)) {
    ATTN_DISPATCH(root.dtype(), run_on_borrowed_seed, root, *grad_output);
    ++next;  // the root's backward has run
  } else if (grad_output) {
    ATTN_DISPATCH(root.dtype(), seed, root, *grad_output);
  } else {
    root.seed_grad_with_ones();
  }

  for (auto it = next; it != order.rend(); ++it) {
    NodeBase* node = *it;
    if (node->is_leaf) continue;
    run_node(*node);
    if (!node->retains_grad) node->clear_grad();  // intermediate gradients are not kept
  }

  if (!retain_graph)
    for (NodeBase* node : order)
      if (!node->is_leaf) node->free_graph();
  spare.order = std::move(order);  // for the next backward on this thread
}

}  // namespace

void Tensor::backward(bool retain_graph) { run_backward(checked_node("backward"), nullptr, retain_graph); }

void Tensor::backward(const Tensor& grad_output, bool retain_graph) {
  run_backward(checked_node("backward"), &grad_output, retain_graph);
}

}  // namespace attn
