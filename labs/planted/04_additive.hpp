// Wrong solutions of lab 4; labs/tests/test_lab04.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/04_additive.hpp"

namespace lab {
namespace planted {
namespace additive {

using attn::Mask;
using attn::Tensor;
using Output = std::pair<Tensor, Tensor>;

struct Options {
  bool no_mask = false, mask_after_softmax = false, no_tanh = false, softmax_over_batch = false,
       unstable_softmax = false, renormalised_after_softmax = false;
  double fill = -1e30;  // what blocked scores are filled with
};

inline Output attend(const Options& o, const Tensor& s, const Tensor& h, const Tensor& W, const Tensor& U,
                     const Tensor& v, const Mask& mask) {
  Tensor pre = attn::unsqueeze(attn::linear(s, W), 1) + attn::linear(h, U);
  Tensor e = attn::matmul(o.no_tanh ? pre : attn::tanh(pre), v);
  Tensor weights;
  if (o.no_mask) {
    weights = attn::softmax(e, -1);
  } else if (o.mask_after_softmax) {
    weights = attn::masked_fill(attn::softmax(e, -1), mask, 0.0);
  } else if (o.renormalised_after_softmax) {  // right while no real weight underflows
    Tensor w0 = attn::masked_fill(attn::softmax(e, -1), mask, 0.0);
    weights = w0 / attn::sum(w0, {-1}, true);
  } else if (o.softmax_over_batch) {
    weights = attn::softmax(attn::masked_fill(e, mask, -1e30), 0);
  } else if (o.unstable_softmax) {
    Tensor x = attn::exp(attn::masked_fill(e, mask, -1e30));
    weights = x / attn::sum(x, {-1}, true);
  } else {
    weights = attn::softmax(attn::masked_fill(e, mask, o.fill), -1);
  }
  return {weights, attn::squeeze(attn::matmul(attn::unsqueeze(weights, 1), h), 1)};
}

inline std::vector<Planted<lab::additive::Additive>> all() {
  auto make = [](Options o) {
    return lab::additive::Additive{[o](const Tensor& s, const Tensor& h, const Tensor& W, const Tensor& U,
                                       const Tensor& v, const Mask& mask) { return attend(o, s, h, W, U, v, mask); }};
  };
  std::vector<Planted<lab::additive::Additive>> out;
  Options o;
  o.no_mask = true;
  out.push_back({"the padding mask ignored", make(o), "the mask is not applied"});
  o = {};
  o.mask_after_softmax = true;
  out.push_back({"the mask applied after the softmax", make(o), "mask the scores before it"});
  o = {};
  o.no_tanh = true;
  out.push_back({"no tanh", make(o), "no tanh between the sum and v"});
  o = {};
  o.softmax_over_batch = true;
  out.push_back({"the softmax over the batch axis", make(o), "it runs over T"});
  o = {};
  o.unstable_softmax = true;
  out.push_back({"a softmax without the max subtracted", make(o), "subtracts each row's max"});
  o = {};
  o.fill = -1e4;  // below every score of ordinary size, above a row of scores near -8e11
  out.push_back({"padded scores filled with -1e4, not -1e30", make(o), "the blocked scores outranked real scores", true});
  for (double fill : {-1e5, -1e9}) {  // -1e9: the Annotated Transformer's, still above -8e11
    o = {};
    o.fill = fill;
    out.push_back({"padded scores filled with " + num_str(fill) + ", not -1e30", make(o), "any finite fill above them",
                   true});
  }
  o = {};
  o.renormalised_after_softmax = true;
  out.push_back({"softmax, padded weights zeroed, renormalised", make(o), "block the scores before the softmax", true});
  return out;
}

}  // namespace additive
}  // namespace planted
}  // namespace lab
