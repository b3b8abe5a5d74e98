// Lab 3's grader: one step of an LSTM cell, composed of the library's ops (whose
// backward lab 0 wrote), so autograd gives its gradients (labs/03_lstm_cell/README.md).
//
//   lab::lstm::LSTMCell mine{lstm_cell};
//   lab::lstm::grade(mine);  // ends with "lab 3: k of 5 checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace lstm {

using State = std::pair<Tensor, Tensor>;  // {h', c'}

struct LSTMCell {
  // x [B, I], h [B, H], c [B, H], w_ih [4H, I], w_hh [4H, H], b_ih [4H], b_hh [4H] -> {h' [B, H], c' [B, H]};
  // the gates' rows in PyTorch's order i, f, g, o.
  std::function<State(const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& w_ih, const Tensor& w_hh,
                       const Tensor& b_ih, const Tensor& b_hh)>
      cell;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const LSTMCell& m, std::ostream& os = std::cout);

}  // namespace lstm
}  // namespace lab
