// Wrong solutions of lab 0, each a plausible mistake; labs/tests/test_lab00.cpp proves
// the grader fails every one with a message that points at it.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/00_engine.hpp"

namespace lab {
namespace planted {
namespace engine {

using attn::Shape;
using attn::Tensor;
namespace good = lab::solutions::engine;

// Sums only the leading axes: a stretched size-1 axis stays stretched (wrong axes reduced).
inline Tensor unbroadcast_leading_only(const Tensor& g, const Shape& shape) {
  Tensor out = g;
  for (std::size_t added = g.dim() - shape.size(); added > 0; --added) out = attn::sum(out, {0});
  return out;
}

inline std::vector<Planted<lab::engine::Engine>> all() {
  using Pair = std::pair<Tensor, Tensor>;
  std::vector<Planted<lab::engine::Engine>> out;
  auto base = good::solution();

  auto e = base;
  e.unbroadcast = unbroadcast_leading_only;
  e.mul_backward = [](const Tensor& a, const Tensor& b, const Tensor& g) -> Pair {
    return {unbroadcast_leading_only(g * b, a.shape()), unbroadcast_leading_only(g * a, b.shape())};
  };
  out.push_back({"unbroadcast sums the leading axes only, not the size-1 ones", e, "where the target shape has size 1"});

  e = base;
  e.mul_backward = [](const Tensor& a, const Tensor& b, const Tensor& g) -> Pair { return {g * b, g * a}; };
  out.push_back({"mul_backward forgets to un-broadcast", e, "un-broadcast to its own shape"});

  e = base;
  e.div_backward = [](const Tensor& a, const Tensor& b, const Tensor& g) -> Pair {
    return {good::unbroadcast(g / b, a.shape()), good::unbroadcast((g * a) / (b * b), b.shape())};
  };
  out.push_back({"div_backward: sign error in d/db", e, "check the sign"});

  e = base;
  e.exp_backward = [](const Tensor& x, const Tensor& y, const Tensor& g) { return g * x; };
  out.push_back({"exp_backward multiplies by x instead of exp(x)", e, "g * y"});

  e = base;
  e.tanh_backward = [](const Tensor& x, const Tensor& y, const Tensor& g) { return g * (1.0 - x * x); };
  out.push_back({"tanh_backward squares the input x, not the output y", e, "not the input x"});

  e = base;
  e.matmul_backward = [](const Tensor& a, const Tensor& b, const Tensor& g) -> Pair {
    return {attn::matmul(g, attn::transpose(b, 0, 1)), attn::matmul(attn::transpose(g, 0, 1), a)};  // dB = G^T A
  };
  out.push_back({"matmul_backward: dB = G^T A, the transposed product", e, "missing or extra transpose"});
  return out;
}

}  // namespace engine
}  // namespace planted
}  // namespace lab
