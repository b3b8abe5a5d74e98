// Lab 15's worked solution (the library's own: nn/attention/monotonic.cpp).
#pragma once

#include "labs/grader/lab15_monotonic.hpp"

namespace lab {
namespace solutions {
namespace monotonic {

using attn::Tensor;

inline Tensor expected_alignment(const Tensor& energy, const std::vector<std::size_t>& lengths) {
  const std::size_t B = energy.size(0), Tq = energy.size(1), Tk = energy.size(2);
  // Never stop on padding: p = 0 at j >= lengths[b], so alpha is 0 there and what reaches it is lost.
  attn::Mask padding = xt::zeros<bool>({B, std::size_t(1), Tk});  // [B, 1, Tk], broadcast over the steps
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t j = lengths[b]; j < Tk; ++j) padding(b, 0, j) = true;
  Tensor p = attn::masked_fill(attn::sigmoid(energy), padding, 0.0);  // [B, Tq, Tk]
  // Before the first step all the mass sits on position 0: the reading starts at h_0.
  xt::xarray<double> start = xt::zeros<double>({B, Tk});
  for (std::size_t b = 0; b < B; ++b) start(b, 0) = 1.0;
  Tensor previous(start);  // alpha_{t-1}: [B, Tk]
  std::vector<Tensor> steps;
  for (std::size_t t = 0; t < Tq; ++t) {
    std::vector<Tensor> alpha;  // alpha_tj for j = 0 .. Tk - 1, each [B]
    Tensor q, p_before;
    for (std::size_t j = 0; j < Tk; ++j) {
      Tensor p_j = attn::select(attn::select(p, 1, long(t)), 1, long(j));  // p_tj: [B]
      Tensor previous_j = attn::select(previous, 1, long(j));            // alpha_{t-1,j}: [B]
      // q_tj: still reading at j, arrived from j - 1 (not stopped there) or started here (step t - 1
      // stopped at j). No division: Raffel et al.'s eq. 10 divides by p_{t,j-1}, which can be 0.
      q = j == 0 ? previous_j : (1.0 - p_before) * q + previous_j;
      alpha.push_back(p_j * q);  // and stops at j
      p_before = p_j;
    }
    previous = attn::stack(alpha, 1);  // [B, Tk]
    steps.push_back(previous);
  }
  return attn::stack(steps, 1);  // [B, Tq, Tk]
}

inline std::vector<std::vector<long>> hard_alignment(const Tensor& energy, const std::vector<std::size_t>& lengths) {
  const std::size_t B = energy.size(0), Tq = energy.size(1);
  const xt::xarray<double> e = energy.data<double>();
  std::vector<std::vector<long>> out(B, std::vector<long>(Tq));
  for (std::size_t b = 0; b < B; ++b) {
    std::size_t j = 0;  // where the previous step stopped: the pointer never moves back
    for (std::size_t t = 0; t < Tq; ++t) {
      while (j < lengths[b] && e(b, t, j) < 0.0) ++j;  // p < 0.5: read on
      out[b][t] = j < lengths[b] ? long(j) : -1;       // ran off the end: attend to nothing
    }
  }
  return out;
}

inline lab::monotonic::Monotonic solution() { return {expected_alignment, hard_alignment}; }

}  // namespace monotonic
}  // namespace solutions
}  // namespace lab
