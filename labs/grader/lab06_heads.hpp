// Lab 6's grader: multi-head attention's split into heads and merge back
// (labs/06_heads/README.md).
//
//   lab::heads::grade(lab::heads::Heads{split_heads, merge_heads});  // "lab 6: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace heads {

struct Heads {
  // x [B, T, H * d] -> [B, H, T, d]: head h takes features h * d .. h * d + d - 1.
  std::function<Tensor(const Tensor& x, std::size_t num_heads)> split_heads;
  // x [B, H, T, d] -> [B, T, H * d], the inverse.
  std::function<Tensor(const Tensor& x)> merge_heads;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const Heads& h, std::ostream& os = std::cout);

}  // namespace heads
}  // namespace lab
