// Lab 1's grader: softmax and log-softmax over the last axis, forward and backward
// (labs/01_softmax/README.md).
//
//   lab::softmax::Softmax mine{softmax, softmax_backward, log_softmax, log_softmax_backward};
//   lab::softmax::grade(mine);  // ends with "lab 1: k of 10 checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace softmax {

struct Softmax {
  // x [..., n] -> y [..., n], over the last axis.
  std::function<Tensor(const Tensor& x)> softmax;
  // y = softmax(x), g = dL/dy [..., n] -> dL/dx.
  std::function<Tensor(const Tensor& y, const Tensor& g)> softmax_backward;
  std::function<Tensor(const Tensor& x)> log_softmax;
  // y = log_softmax(x), g = dL/dy -> dL/dx.
  std::function<Tensor(const Tensor& y, const Tensor& g)> log_softmax_backward;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const Softmax& s, std::ostream& os = std::cout);

}  // namespace softmax
}  // namespace lab
