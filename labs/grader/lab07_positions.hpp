// Lab 7's grader: the Transformer's sinusoidal positional encoding
// (labs/07_positions/README.md).
//
//   lab::positions::grade(lab::positions::Positions{encoding, add_positions});  // "lab 7: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace positions {

struct Positions {
  // [T, d_model], any d_model >= 1: PE(pos, 2i) = sin(pos / 10000^(2i / d_model)), PE(pos, 2i + 1) = cos(same);
  // an odd d_model ends with a lone sine (dim d_model - 1 has no cosine partner).
  std::function<Tensor(std::size_t T, std::size_t d_model)> encoding;
  // x [B, T, d_model] -> x + PE[:T], the same encoding added to every sequence.
  std::function<Tensor(const Tensor& x)> add_positions;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const Positions& p, std::ostream& os = std::cout);

}  // namespace positions
}  // namespace lab
