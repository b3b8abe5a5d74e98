// Lab 14's grader: rotary position embeddings and ALiBi's linear biases
// (labs/14_rotary_alibi/README.md).
//
//   lab::rotary_alibi::grade(lab::rotary_alibi::RotaryAlibi{rotary, alibi_slopes, alibi_scores});
//   // "lab 14: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace rotary_alibi {

struct RotaryAlibi {
  // x [..., T, d], d even -> [..., T, d]: row t turned as position p = start + t, features k and k + d/2
  // a pair (rotate-half), pair k by the angle p theta_k, theta_k = base^(-2k / d):
  //   out[k] = x[k] cos - x[k + d/2] sin,   out[k + d/2] = x[k + d/2] cos + x[k] sin.
  std::function<Tensor(const Tensor& x, std::size_t start, double base)> rotary;
  // m_1 .. m_H: 2^(-8h / H) for H a power of two; for other H, the slopes of the power of two P below H,
  // then every other slope of 2P (its 1st, 3rd, ...), as many as are missing.
  std::function<std::vector<double>(std::size_t num_heads)> alibi_slopes;
  // scores [B, H, T, T] (queries and keys at positions 0 .. T - 1) -> scores - m_h |i - j|; with `causal`,
  // the keys after their query (j > i) blocked: filled with -1e30.
  std::function<Tensor(const Tensor& scores, bool causal)> alibi_scores;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const RotaryAlibi& r, std::ostream& os = std::cout);

}  // namespace rotary_alibi
}  // namespace lab
