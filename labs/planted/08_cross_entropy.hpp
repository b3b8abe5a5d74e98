// Wrong solutions of lab 8; labs/tests/test_lab08.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/08_cross_entropy.hpp"

namespace lab {
namespace planted {
namespace cross_entropy {

using attn::Index;
using attn::Tensor;

struct Options {
  bool mean_over_all = false, smoothing_over_others = false, log_of_softmax = false, plus_log = false;
  int ignored_as = 0;  // 1: targets == -100 (a constant), 2: targets < 0, instead of == ignore_index
};

inline Tensor loss(const Options& o, const Tensor& logits, const Index& targets, long ignore_index, double s) {
  std::size_t N = logits.size(0), C = logits.size(1);
  Index safe = targets;
  xt::xarray<double> keep = xt::ones<double>({N});
  for (std::size_t i = 0; i < N; ++i)
    if (o.ignored_as == 1 ? targets(i) == -100 : o.ignored_as == 2 ? targets(i) < 0 : targets(i) == ignore_index)
      safe(i) = 0, keep(i) = 0.0;
  Tensor logp = o.log_of_softmax ? attn::log(attn::softmax(logits, -1)) : attn::log_softmax(logits, -1);
  Tensor hot = attn::one_hot(safe, C);
  Tensor nll = -attn::sum(hot * logp, {-1});
  Tensor per_target;
  if (o.smoothing_over_others)  // s spread over the C - 1 other classes only
    per_target = (1.0 - s) * nll - s * attn::sum((1.0 - hot) * logp, {-1}) / static_cast<double>(C - 1);
  else
    per_target = (1.0 - s) * nll - s * attn::sum(logp, {-1}) / static_cast<double>(C);
  if (o.plus_log) per_target = -per_target;
  double count = o.mean_over_all ? static_cast<double>(N) : xt::sum(keep)();
  return attn::sum(per_target * Tensor(keep)) / count;
}

inline std::vector<Planted<lab::cross_entropy::CrossEntropy>> all() {
  auto make = [](Options o) {
    return lab::cross_entropy::CrossEntropy{[o](const Tensor& l, const Index& t, long ig, double s) {
      return loss(o, l, t, ig, s);
    }};
  };
  std::vector<Planted<lab::cross_entropy::CrossEntropy>> out;
  Options o;
  o.mean_over_all = true;
  out.push_back({"the mean over all N, padding included", make(o), "not by N"});
  o = {};
  o.smoothing_over_others = true;
  out.push_back({"smoothing spread over the other C - 1 classes only", make(o), "the target's included"});
  o = {};
  o.log_of_softmax = true;
  out.push_back({"log(softmax(x)) instead of log_softmax", make(o), "use log_softmax"});
  o = {};
  o.plus_log = true;
  out.push_back({"the sign: +log p", make(o), "the loss is -log p[target]"});
  for (int as : {1, 2}) {
    o = {};
    o.ignored_as = as;
    out.push_back({as == 1 ? "ignored targets found as == -100, a constant" : "ignored targets found as < 0", make(o),
                   "compare each target with the ignore_index argument", true});
  }
  return out;
}

}  // namespace cross_entropy
}  // namespace planted
}  // namespace lab
