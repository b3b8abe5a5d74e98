// A node of the computation graph: one value, its gradient, and how it was made.
//
// Tensor (tensor.hpp) is a handle to a node. Ops create nodes whose `inputs`
// point at the nodes they were computed from, and whose `backward_fn` turns
// the node's gradient into gradients of those inputs. Edges point only from
// outputs to inputs, and backward functions never hold their own node, so the
// graph has no shared_ptr cycles: dropping the last handle frees it.
#pragma once

#include "config.hpp"
#include "errors.hpp"
#include "kernels.hpp"

#include <xtensor/xmath.hpp>

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace attn {

class NodeBase {
 public:
  NodeBase(const char* op, bool requires_grad, bool is_leaf);
  virtual ~NodeBase();
  NodeBase(const NodeBase&) = delete;
  NodeBase& operator=(const NodeBase&) = delete;

  virtual Dtype dtype() const = 0;
  virtual Shape shape() const = 0;
  virtual std::size_t numel() const = 0;
  virtual std::size_t dim() const = 0;
  virtual std::size_t size(std::size_t d) const = 0;             // d < dim()
  virtual bool same_shape_as(const NodeBase& other) const = 0;  // other: a node of the same dtype
  virtual void run_backward() = 0;  // push this node's grad into its inputs' grads
  virtual void seed_grad_with_ones() = 0;
  virtual void clear_grad() = 0;
  virtual void free_graph() = 0;    // drop inputs and backward_fn (after backward)

  const char* op;                   // "leaf", "add", "matmul", ...
  bool requires_grad;
  bool is_leaf;                     // made by the user (or needs no grad), not by a recorded op
  bool retains_grad = false;        // keep the gradient of a non-leaf after backward
  bool grad_is_borrowed = false;    // grad is backward(grad_output)'s array, lent for a moment (autograd.cpp)
  bool graph_freed = false;         // backward already ran and released this part of the graph
  bool has_grad = false;            // grad holds a value
  bool visited = false;             // marked by backward's topological sort, false outside it
  std::vector<std::shared_ptr<NodeBase>> inputs;

  // Nodes alive right now: tests use it to prove the graph frees itself.
  static long live_count();
};

// An array of `shape` with every value `value`: one plain fill (cheaper than
// assigning xt::zeros, a broadcast expression).
template <class T, class S>
xt::xarray<T> filled(const S& shape, T value) {
  xt::xarray<T> a = xt::xarray<T>::from_shape(shape);
  std::fill(a.data(), a.data() + a.size(), value);
  return a;
}

// An array with no values, shape [0], for one that may stay unused
// (xt::xarray's default constructor allocates room for one value).
template <class T>
xt::xarray<T> empty_array() {
  return xt::xarray<T>::from_shape(std::array<std::size_t, 1>{0});
}

// A copy of `a`, through the backend's copy kernel (memcpy is slow for some
// placements of the two arrays: docs/benchmarks.md).
template <class T>
xt::xarray<T> copy_of(const xt::xarray<T>& a) {
  xt::xarray<T> c = xt::xarray<T>::from_shape(a.shape());
  kernels::copy(a.data(), c.data(), a.size());
  return c;
}

// The gradient g of an output broadcast from `shape`, summed back down to `shape`:
// backward of broadcasting sums over every axis that broadcasting stretched.
// (Defined in core/ops/shape.cpp, next to expand, whose backward it is.)
template <class T>
xt::xarray<T> sum_to_shape(const xt::xarray<T>& g, const Shape& shape);

template <class T>
class Node final : public NodeBase {
 public:
  using Array = xt::xarray<T>;
  using BackwardFn = std::function<void(Node<T>&)>;

  Node(const char* op, Array&& value, bool requires_grad, bool is_leaf)
      : NodeBase(op, requires_grad, is_leaf), value(std::move(value)) {}

  Array value;
  Array grad = empty_array<T>();  // meaningful only when has_grad
  BackwardFn backward_fn;  // empty for leaves

  Dtype dtype() const override { return dtype_of<T>(); }
  Shape shape() const override { return Shape(value.shape().begin(), value.shape().end()); }
  std::size_t numel() const override { return value.size(); }
  std::size_t dim() const override { return value.dimension(); }
  std::size_t size(std::size_t d) const override { return value.shape()[d]; }
  bool same_shape_as(const NodeBase& other) const override {  // without building a Shape
    const auto& s = static_cast<const Node<T>&>(other).value.shape();
    return std::equal(value.shape().begin(), value.shape().end(), s.begin(), s.end());
  }

  // The i-th input's node. All inputs of an op share the op's dtype.
  Node<T>& input(std::size_t i) { return static_cast<Node<T>&>(*inputs[i]); }

  // grad += g, where g may be a lazy xtensor expression with a broadcast shape.
  // A temporary array of the right shape (an rvalue Array) is moved in, not copied.
  template <class E>
  void accumulate_grad(E&& g) {
    const auto& gshape = g.shape();
    bool same_shape = gshape.size() == value.dimension();
    for (std::size_t d = 0; same_shape && d < gshape.size(); ++d) same_shape = gshape[d] == value.shape()[d];
    if (same_shape) {
      if (has_grad) grad += g;
      else if constexpr (std::is_same_v<std::decay_t<E>, Array> && std::is_lvalue_reference_v<E>) grad = copy_of(g);
      else grad = std::forward<E>(g);
    } else {
      const Array& full = g;  // an array as it is; a lazy expression evaluated into a temporary
      if (has_grad) grad += sum_to_shape(full, shape());
      else grad = sum_to_shape(full, shape());
    }
    has_grad = true;
  }

  // Adds g to input i's gradient, if that input wants one. When it doesn't,
  // the lazy expression g is never evaluated, so no work is wasted.
  template <class E>
  void add_to_input_grad(std::size_t i, E&& g) {
    if (inputs[i]->requires_grad) input(i).accumulate_grad(std::forward<E>(g));
  }

  bool input_requires_grad(std::size_t i) const { return inputs[i]->requires_grad; }

  // This node's gradient, for a backward function's last use of it: moved out
  // (no copy), since the engine drops it right after backward, unless the user
  // asked to keep it (retain_grad) or it is only borrowed (the caller's
  // grad_output). Lets an op compute its input's gradient in place.
  Array take_grad() { return retains_grad || grad_is_borrowed ? copy_of(grad) : std::move(grad); }

  void run_backward() override {
    if (backward_fn && has_grad) backward_fn(*this);
  }
  void seed_grad_with_ones() override {
    // adds, as PyTorch does when a leaf is the root
    if (has_grad) {
      for (T& g : grad) g += T(1);
    } else {
      grad = filled(value.shape(), T(1));
      has_grad = true;
    }
  }
  void clear_grad() override {
    grad = empty_array<T>();
    has_grad = false;
  }
  void free_graph() override {
    backward_fn = nullptr;
    inputs.clear();
    graph_freed = true;
  }
};

}  // namespace attn
