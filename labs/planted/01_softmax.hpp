// Wrong solutions of lab 1; labs/tests/test_lab01.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/01_softmax.hpp"

namespace lab {
namespace planted {
namespace softmax {

using attn::Tensor;
namespace good = lab::solutions::softmax;

inline std::vector<Planted<lab::softmax::Softmax>> all() {
  std::vector<Planted<lab::softmax::Softmax>> out;
  auto base = good::solution();

  auto s = base;
  s.softmax = [](const Tensor& x) {
    Tensor e = attn::exp(x);
    return e / attn::sum(e, {-1}, true);
  };
  out.push_back({"softmax without subtracting the row max (overflows)", s, "subtract each row's max"});

  s = base;
  s.softmax = [](const Tensor& x) {
    Tensor e = attn::exp(x - attn::max(x));  // the tensor's max: a row far below it underflows
    return e / attn::sum(e, {-1}, true);
  };
  out.push_back({"softmax subtracting the tensor's max, not each row's", s, "not the tensor's max", true});

  s = base;
  s.softmax_backward = [](const Tensor& y, const Tensor& g) { return y * g; };
  out.push_back({"softmax_backward forgets the term -y * sum(g * y)", s, "off-diagonal term"});

  s = base;
  s.softmax_backward = [](const Tensor& y, const Tensor& g) { return y * (g - attn::sum(g * y, {0}, true)); };
  out.push_back({"softmax_backward sums over the first axis, not the last", s, "the sum over the last axis"});

  s = base;
  s.softmax = [](const Tensor& x) {
    Tensor e = attn::exp(x - attn::max(x, -1, true));
    return e / attn::sum(e, {0}, true);
  };
  out.push_back({"softmax normalizes over the first axis", s, "all over the last axis"});

  s = base;
  s.log_softmax_backward = [](const Tensor& y, const Tensor& g) {
    return g + attn::exp(y) * attn::sum(g, {-1}, true);
  };
  out.push_back({"log_softmax_backward: sign error", s, "dx = g - exp(y) * sum(g)"});

  s = base;
  s.log_softmax = [](const Tensor& x) { return attn::log(good::softmax(x)); };
  out.push_back({"log_softmax as log(softmax(x)): log(0) for tiny probabilities", s, "(x - m) - log(sum(exp(x - m)))"});
  return out;
}

}  // namespace softmax
}  // namespace planted
}  // namespace lab
