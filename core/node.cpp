#include "node.hpp"

#include "ops/layout.hpp"

#include <atomic>

namespace attn {

namespace {
std::atomic<long> g_live_nodes{0};
}

NodeBase::NodeBase(const char* op, bool requires_grad, bool is_leaf)
    : op(op), requires_grad(requires_grad), is_leaf(is_leaf) {
  ++g_live_nodes;
}

// Freeing a chain of 10,000 nodes the naive way recurses 10,000 deep
// (each node's destructor releases its inputs). Instead we take over the
// inputs of every node that is about to die and release them in a loop.
NodeBase::~NodeBase() {
  std::vector<std::shared_ptr<NodeBase>> pending = std::move(inputs);
  while (!pending.empty()) {
    std::shared_ptr<NodeBase> node = std::move(pending.back());
    pending.pop_back();
    if (node && node.use_count() == 1) {  // we hold the last reference: it dies now
      for (auto& in : node->inputs) pending.push_back(std::move(in));
      node->inputs.clear();
    }
  }
  --g_live_nodes;
}

long NodeBase::live_count() { return g_live_nodes.load(); }

// Position i of g (row-major) was copied from position offset(i) of the small
// array, where a broadcast dim (size 1, or missing in front) does not move the
// offset: broadcast_to's walk (ops/layout.hpp). Its adjoint adds g there.
template <class T>
xt::xarray<T> sum_to_shape(const xt::xarray<T>& g, const Shape& shape) {
  const Shape g_shape(g.shape().begin(), g.shape().end());
  if (g_shape == shape) return copy_of(g);
  const std::size_t lead = g_shape.size() - shape.size();
  const Shape strides = strides_of(shape);
  Shape step(g_shape.size(), 0);
  for (std::size_t d = lead; d < g_shape.size(); ++d)
    if (shape[d - lead] != 1) step[d] = strides[d - lead];
  xt::xarray<T> summed = filled(shape, T(0));
  std::size_t i = 0;
  walk(g_shape, step, [&](std::size_t offset) { summed.flat(offset) += g.flat(i++); });
  return summed;
}

template xt::xarray<float> sum_to_shape(const xt::xarray<float>&, const Shape&);
template xt::xarray<double> sum_to_shape(const xt::xarray<double>&, const Shape&);

}  // namespace attn
