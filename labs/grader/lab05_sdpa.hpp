// Lab 5's grader: scaled dot-product attention with padding and causal masks
// (labs/05_sdpa/README.md).
//
//   lab::sdpa::grade(lab::sdpa::Attention{causal_mask, padding_mask, attention});  // "lab 5: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace sdpa {

using Output = std::pair<Tensor, Tensor>;  // {out [B, Tq, Dv], weights [B, Tq, Tk]}

struct Attention {
  // [T, T], true where key j may not be seen by query i: j > i.
  std::function<attn::Mask(std::size_t T)> causal_mask;
  // [B, T], true at the padded positions of each sequence: j >= lengths[b].
  std::function<attn::Mask(const std::vector<std::size_t>& lengths, std::size_t T)> padding_mask;
  // q [B, Tq, D], k [B, Tk, D], v [B, Tk, Dv], mask [B, Tq, Tk] (true = blocked) -> {out, weights}:
  // weights = softmax(q k^T / sqrt(D)) over Tk with blocked keys at 0 (a row blocked entirely: all 0),
  // out = weights v.
  std::function<Output(const Tensor& q, const Tensor& k, const Tensor& v, const attn::Mask& mask)> attention;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const Attention& a, std::ostream& os = std::cout);

}  // namespace sdpa
}  // namespace lab
