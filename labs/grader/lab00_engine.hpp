// Lab 0's grader: the backward rules of mul, div, exp, tanh and matmul, and the
// un-broadcasting sum of a gradient (labs/00_engine/README.md).
//
//   lab::engine::Engine mine{unbroadcast, mul_backward, div_backward, exp_backward, tanh_backward,
//                             matmul_backward};
//   lab::engine::grade(mine);  // prints every check, ends with "lab 0: k of 13 checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace engine {

using Pair = std::pair<Tensor, Tensor>;

// The learner's functions. Each gets plain tensors (no graph) and returns gradients.
struct Engine {
  // g [broadcast shape] summed down to `shape`, which broadcasts to g's shape.
  std::function<Tensor(const Tensor& g, const Shape& shape)> unbroadcast;
  // y = a * b and y = a / b (broadcasting): {dL/da, dL/db} in a's and b's shapes, g = dL/dy.
  std::function<Pair(const Tensor& a, const Tensor& b, const Tensor& g)> mul_backward;
  std::function<Pair(const Tensor& a, const Tensor& b, const Tensor& g)> div_backward;
  // y = exp(x), y = tanh(x): dL/dx, given x, the output y and g = dL/dy.
  std::function<Tensor(const Tensor& x, const Tensor& y, const Tensor& g)> exp_backward;
  std::function<Tensor(const Tensor& x, const Tensor& y, const Tensor& g)> tanh_backward;
  // Y = A B, A [n, k], B [k, m], G [n, m]: {dL/dA [n, k], dL/dB [k, m]}.
  std::function<Pair(const Tensor& a, const Tensor& b, const Tensor& g)> matmul_backward;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const Engine& e, std::ostream& os = std::cout);

}  // namespace engine
}  // namespace lab
