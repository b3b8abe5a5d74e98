// The computation graph made visible, as micrograd draws it.
//
//   Tensor x = attn::tensor({1.0, -2.0}, true);
//   Tensor y = attn::sum(attn::tanh(x) * x);
//   y.backward(/*retain_graph=*/true);     // keep the graph so it can be drawn
//   std::cout << attn::to_dot(y);          // Graphviz text
//   std::ofstream("graph.svg") << attn::to_svg(y);
//
// One box per tensor: the op that made it ("leaf" for inputs), its shape and,
// for tensors of at most 6 elements, its value and gradient. Arrows go from
// inputs to the tensors made from them.
//
// backward() frees the graph unless called as backward(true): draw before
// backward, or call backward(true) to see values and gradients. Only leaves
// keep their gradients; call retain_grad() on an intermediate tensor before
// backward to see its gradient too.
#pragma once

#include "tensor.hpp"

#include <string>

namespace attn {

// Graphviz DOT text (a digraph, left to right) of every node reachable from t.
std::string to_dot(const Tensor& t);

// The same graph rendered to SVG by Graphviz's `dot -Tsvg`. Throws IOError
// when the `dot` program is not installed or fails.
std::string to_svg(const Tensor& t);

}  // namespace attn
