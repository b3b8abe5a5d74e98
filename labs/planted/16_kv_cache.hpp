// Wrong solutions of lab 16; labs/tests/test_lab16.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/16_kv_cache.hpp"

#include <cmath>

namespace lab {
namespace planted {
namespace kv_cache {

using attn::Tensor;
using lab::kv_cache::Cache;
using lab::kv_cache::Projections;

enum class Mistake {
  no_scale,             // scores not divided by sqrt(d)
  scale_d,              // divided by d
  scale_width,          // divided by sqrt(E), the input's width
  scale_positions,      // divided by sqrt(t + 1), the positions cached
  scale_after_softmax,  // the weights divided by sqrt(d) instead of the scores
  overwrite,            // the cache replaced by this step's key and value
  before_append,        // attends over the old cache, appends after (its own key left out)
  prepend,              // the new key and value put first
  recompute,            // the cache keeps the inputs x and every step projects them all again
  softmax_query_axis,   // softmax over the query axis (of size 1)
  values_are_keys,      // the value cache filled with keys
  unstable_exp,         // exp(scores) / sum, no maximum subtracted
};

inline Tensor step(Mistake m, const Tensor& x_t, const Projections& project, Cache& cache) {
  auto append = [&](const Tensor& old, const Tensor& now) {
    if (!old.defined()) return now;
    return m == Mistake::prepend ? attn::concat({now, old}, 1) : attn::concat({old, now}, 1);
  };
  Tensor q = project.query(x_t), k, v, keys, values;
  if (m == Mistake::recompute) {  // a cache of inputs: every step projects the whole prefix again
    cache.key = append(cache.key, x_t);
    cache.value = cache.key;
    keys = project.key(cache.key);
    values = project.value(cache.value);
  } else {
    k = project.key(x_t);
    v = project.value(x_t);
    if (m == Mistake::before_append) {
      if (!cache.key.defined()) {  // nothing to attend to yet
        cache.key = k, cache.value = v;
        return attn::zeros(q.shape());
      }
      keys = cache.key, values = cache.value;
      cache.key = append(cache.key, k), cache.value = append(cache.value, v);
    } else if (m == Mistake::overwrite) {
      keys = cache.key = k;
      values = cache.value = v;
    } else {
      keys = cache.key = append(cache.key, k);
      values = cache.value = append(cache.value, m == Mistake::values_are_keys ? k : v);
    }
  }
  const double d = double(q.size(-1)), E = double(x_t.size(-1));
  Tensor scores = attn::matmul(q, attn::transpose(keys, -2, -1));
  if (m == Mistake::scale_d) scores = scores / d;
  else if (m == Mistake::scale_width) scores = scores / std::sqrt(E);
  else if (m == Mistake::scale_positions) scores = scores / std::sqrt(double(keys.size(1)));
  else if (m != Mistake::no_scale && m != Mistake::scale_after_softmax) scores = scores / std::sqrt(d);
  Tensor weights;
  if (m == Mistake::softmax_query_axis) weights = attn::softmax(scores, 1);
  else if (m == Mistake::unstable_exp) {
    Tensor e = attn::exp(scores);
    weights = e / attn::sum(e, {-1}, true);
  } else weights = attn::softmax(scores, -1);
  if (m == Mistake::scale_after_softmax) weights = weights / std::sqrt(d);
  return attn::matmul(weights, values);
}

inline std::vector<Planted<lab::kv_cache::KVCache>> all() {
  using lab::kv_cache::KVCache;
  auto with = [](Mistake m) {
    return KVCache{[m](const Tensor& x_t, const Projections& p, Cache& c) { return step(m, x_t, p, c); }};
  };
  return {
      {"scores not divided by sqrt(d)", with(Mistake::no_scale), "scores not divided by sqrt(d)", true},
      {"scores divided by d", with(Mistake::scale_d), "scores divided by d", true},
      {"scores divided by sqrt(E), the input's width", with(Mistake::scale_width), "sqrt(E), the input's width", true},
      {"scores divided by sqrt(t + 1), the positions cached", with(Mistake::scale_positions),
       "sqrt(t + 1), the positions cached", true},
      {"the weights divided by sqrt(d) after the softmax", with(Mistake::scale_after_softmax),
       "after the softmax", true},
      {"the cache replaced by this step's key and value", with(Mistake::overwrite), "this step's value alone", true},
      {"attends over the old cache, then appends (its own key left out)", with(Mistake::before_append),
       "its own key and value left out", true},
      {"the new key and value put before the old ones", with(Mistake::prepend), "the positions newest first", true},
      {"the cache keeps the inputs and every step projects them all again", with(Mistake::recompute),
       "holds the inputs x", true},
      {"softmax over the query axis (of size 1)", with(Mistake::softmax_query_axis), "softmax over the query axis",
       true},
      {"the value cache filled with keys", with(Mistake::values_are_keys), "the keys where the values go", true},
      {"exp(scores) / sum without the maximum subtracted", with(Mistake::unstable_exp), "overflow", true},
  };
}

}  // namespace kv_cache
}  // namespace planted
}  // namespace lab
