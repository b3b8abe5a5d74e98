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

// Sums the leading axes, then compares the target's axis d with g's axis d (a leading one),
// not with the summed gradient's: right unless a leading axis of g has size 1.
inline Tensor unbroadcast_misaligned(const Tensor& g, const Shape& shape) {
  Tensor out = g;
  std::size_t added = g.dim() - shape.size();
  for (std::size_t d = 0; d < added; ++d) out = attn::sum(out, {0});
  std::vector<long> stretched;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (shape[d] == 1 && g.size(static_cast<long>(d)) != 1) stretched.push_back(static_cast<long>(d));  // g's, not out's
  if (!stretched.empty()) out = attn::sum(out, stretched, /*keepdim=*/true);
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
  e.unbroadcast = unbroadcast_misaligned;
  out.push_back({"unbroadcast compares the target's axes with g's leading axes (g [1, 4, 3] -> [1, 3])", e,
                 "not with g's axis d", true});

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
