// Lab 12's grader: one decoder step of Luong attention, general score and input feeding
// (labs/12_luong/README.md).
//
//   lab::luong::grade(lab::luong::Luong{luong_step});  // "lab 12: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace luong {

// The step's parameters: an LSTM cell over [y; h~] (E + H inputs) and the two attention matrices.
struct Params {
  Tensor w_ih, w_hh, b_ih, b_hh;  // [4H, E + H], [4H, H], [4H], [4H]: gates i, f, g, o
  Tensor W_a;                     // [H, H]: score(h, hs) = h . (W_a hs)
  Tensor W_c;                     // [H, 2H]: h~ = tanh(W_c [context; h])
};

struct Step {
  Tensor h_tilde;  // [B, H], the attentional vector (fed to the next step and to the output layer)
  Tensor h, c;     // [B, H], the LSTM state
  Tensor weights;  // [B, S]
};

struct Luong {
  // y [B, E] (the previous target word's embedding), h_tilde [B, H] (the previous step's), state h, c [B, H],
  // hs [B, S, H] (the encoder's outputs), mask [B, S] (true = padded) -> the step's outputs.
  std::function<Step(const Tensor& y, const Tensor& h_tilde, const Tensor& h, const Tensor& c, const Tensor& hs,
                     const attn::Mask& mask, const Params& p)>
      step;
};

// Runs every check on the learner's function, printing each to `os`.
Result grade(const Luong& l, std::ostream& os = std::cout);

}  // namespace luong
}  // namespace lab
