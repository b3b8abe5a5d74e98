// Wrong solutions of lab 12; labs/tests/test_lab12.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/12_luong.hpp"

namespace lab {
namespace planted {
namespace luong {

using attn::Mask;
using attn::Tensor;
using lab::luong::Params;
using lab::luong::Step;

struct Options {
  bool no_input_feeding = false, score_transposed = false, concat_h_first = false, score_previous_h = false;
  bool unstable_softmax = false, mask_ignored = false, mask_after_softmax = false, cell_input_swapped = false;
  bool feed_previous_h = false, h_tilde_detached = false, renormalise = false;
  double fill = -1e30;  // what blocked scores are filled with
};

inline Step step(const Options& o, const Tensor& y, const Tensor& ht, const Tensor& h, const Tensor& c,
                 const Tensor& hs, const Mask& mask, const Params& p) {
  Tensor feed = o.no_input_feeding ? attn::zeros_like(ht) : o.feed_previous_h ? h : o.h_tilde_detached ? ht.detach() : ht;
  Tensor input = o.cell_input_swapped ? attn::concat({feed, y}, 1) : attn::concat({y, feed}, 1);
  Tensor gates = attn::linear(input, p.w_ih, p.b_ih) + attn::linear(h, p.w_hh, p.b_hh);
  Tensor c1 = attn::lstm_cell_c(gates, c), h1 = attn::lstm_cell_h(gates, c1);
  Tensor query = o.score_previous_h ? h : h1;
  Tensor keys = o.score_transposed ? attn::matmul(hs, p.W_a) : attn::linear(hs, p.W_a);
  Tensor e = attn::squeeze(attn::matmul(keys, attn::unsqueeze(query, 2)), 2);
  Tensor blocked = o.mask_ignored || o.mask_after_softmax ? e : attn::masked_fill(e, mask, o.fill);
  // exp(e) / sum exp(e) without the max subtracted: right math, inf / inf once a score passes ~709
  Tensor ex = attn::exp(blocked);
  Tensor w = o.unstable_softmax ? ex / attn::sum(ex, {-1}, true) : attn::softmax(blocked, -1);
  if (o.mask_after_softmax) w = attn::masked_fill(w, mask, 0.0);
  if (o.mask_after_softmax && o.renormalise) w = w / attn::sum(w, {-1}, true);  // right while no real weight underflows
  Tensor context = attn::squeeze(attn::matmul(attn::unsqueeze(w, 1), hs), 1);
  Tensor both = o.concat_h_first ? attn::concat({h1, context}, 1) : attn::concat({context, h1}, 1);
  return {attn::tanh(attn::linear(both, p.W_c)), h1, c1, w};
}

inline std::vector<Planted<lab::luong::Luong>> all() {
  auto make = [](Options o) {
    return lab::luong::Luong{[o](const Tensor& y, const Tensor& ht, const Tensor& h, const Tensor& c, const Tensor& hs,
                                 const Mask& mask, const Params& p) { return step(o, y, ht, h, c, hs, mask, p); }};
  };
  std::vector<Planted<lab::luong::Luong>> out;
  Options o;
  o.no_input_feeding = true;
  out.push_back({"no input feeding", make(o), "no input feeding"});
  o = {};
  o.score_transposed = true;
  out.push_back({"the score with W_a transposed", make(o), "W_a transposed"});
  o = {};
  o.concat_h_first = true;
  out.push_back({"[h_t; context] instead of [context; h_t]", make(o), "the context c_t comes first"});
  o = {};
  o.score_previous_h = true;
  out.push_back({"the previous h scored instead of the new one", make(o), "scores the new h_t"});
  o = {};
  o.unstable_softmax = true;
  out.push_back({"exp(e) / sum exp(e), the max not subtracted", make(o), "subtract each row's max"});
  o = {};
  o.mask_ignored = true;
  out.push_back({"the mask ignored", make(o), "the mask ignored"});
  o = {};
  o.mask_after_softmax = true;
  out.push_back({"padded weights zeroed after the softmax", make(o), "the mask applied after the softmax"});
  o = {};
  o.cell_input_swapped = true;
  out.push_back({"the cell reads [h_tilde; y]", make(o), "the cell read [h_tilde; y]"});
  o = {};
  o.feed_previous_h = true;
  out.push_back({"h fed instead of h_tilde", make(o), "h fed instead of h_tilde"});
  o = {};
  o.h_tilde_detached = true;
  out.push_back({"h_tilde detached before input feeding", make(o), "no gradient reached h_tilde"});
  o = {};
  o.fill = -1e4;  // below every score of ordinary size, above a row of scores near -1e12
  out.push_back({"padded scores filled with -1e4, not -1e30", make(o), "the blocked scores outranked real scores", true});
  for (double fill : {-1e5, -1e9}) {  // -1e9: the Annotated Transformer's, still above -1e12
    o = {};
    o.fill = fill;
    out.push_back({"padded scores filled with " + num_str(fill) + ", not -1e30", make(o), "any finite fill above them",
                   true});
  }
  o = {};
  o.mask_after_softmax = o.renormalise = true;
  out.push_back({"softmax, padded weights zeroed, renormalised", make(o), "block the scores before the softmax", true});
  return out;
}

}  // namespace luong
}  // namespace planted
}  // namespace lab
