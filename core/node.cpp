#include "node.hpp"

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

}  // namespace attn
