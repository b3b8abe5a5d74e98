// Wrong solutions of lab 3; labs/tests/test_lab03.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/03_lstm_cell.hpp"

namespace lab {
namespace planted {
namespace lstm {

using attn::Tensor;
using State = std::pair<Tensor, Tensor>;

// The worked solution with one thing changed.
struct Options {
  bool swap_i_f = false, g_sigmoid = false, h_without_tanh = false, transposed_hidden = false, unstable_tanh = false,
       ifog = false;
};

inline State cell(const Options& o, const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& w_ih,
                  const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  // transposed_hidden: h W_hh instead of h W_hh^T (shapes only agree when 4H = H... never: a shape error)
  Tensor hidden = o.transposed_hidden ? attn::matmul(h, w_hh) + b_hh : attn::linear(h, w_hh, b_hh);
  Tensor gates = attn::linear(x, w_ih, b_ih) + hidden;
  std::vector<Tensor> q = attn::chunk(gates, 4, 1);
  auto tanh = [&](const Tensor& t) {
    if (!o.unstable_tanh) return attn::tanh(t);
    Tensor e = attn::exp(2.0 * t);
    return (e - 1.0) / (e + 1.0);
  };
  if (o.ifog) std::swap(q[2], q[3]);  // the blocks read as i, f, o, g
  Tensor i = attn::sigmoid(q[0]), f = attn::sigmoid(q[1]), out = attn::sigmoid(q[3]);
  Tensor g = o.g_sigmoid ? attn::sigmoid(q[2]) : tanh(q[2]);
  if (o.swap_i_f) std::swap(i, f);
  Tensor c1 = f * c + i * g;
  return {out * (o.h_without_tanh ? c1 : tanh(c1)), c1};
}

inline std::vector<Planted<lab::lstm::LSTMCell>> all() {
  auto make = [](Options o) {
    return lab::lstm::LSTMCell{[o](const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& w_ih,
                                   const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
      return cell(o, x, h, c, w_ih, w_hh, b_ih, b_hh);
    }};
  };
  std::vector<Planted<lab::lstm::LSTMCell>> out;
  Options o;
  o.swap_i_f = true;
  out.push_back({"gates i and f swapped", make(o), "gates i and f swapped"});
  o = {};
  o.ifog = true;
  out.push_back({"gates read in the order i, f, o, g", make(o), "the order i, f, o, g"});
  o = {};
  o.g_sigmoid = true;
  out.push_back({"sigmoid on the candidate g", make(o), "g takes tanh"});
  o = {};
  o.h_without_tanh = true;
  out.push_back({"h' = o * c', the tanh forgotten", make(o), "without the tanh"});
  o = {};
  o.transposed_hidden = true;
  out.push_back({"h W_hh without the transpose", make(o), "h W_hh^T"});
  o = {};
  o.unstable_tanh = true;
  out.push_back({"tanh as (exp(2x) - 1) / (exp(2x) + 1): NaN for large x", make(o), "inf / inf = NaN"});
  return out;
}

}  // namespace lstm
}  // namespace planted
}  // namespace lab
