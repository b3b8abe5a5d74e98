// Lab 4's grader: Bahdanau's additive attention over padded encoder states
// (labs/04_additive/README.md).
//
//   lab::additive::grade(lab::additive::Additive{additive_attention});  // "lab 4: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace additive {

using Output = std::pair<Tensor, Tensor>;  // {weights [B, T], context [B, He]}

struct Additive {
  // s [B, Hd] (the decoder state), h [B, T, He] (the encoder states), W [A, Hd], U [A, He], v [A],
  // mask [B, T] (true at padded positions) -> {weights [B, T], context [B, He]}:
  // e = tanh(s W^T + h U^T) v, weights = softmax of e over T with padded positions at 0, context = weights h.
  std::function<Output(const Tensor& s, const Tensor& h, const Tensor& W, const Tensor& U, const Tensor& v,
                       const attn::Mask& mask)>
      attend;
};

// Runs every check on the learner's function, printing each to `os`.
Result grade(const Additive& a, std::ostream& os = std::cout);

}  // namespace additive
}  // namespace lab
