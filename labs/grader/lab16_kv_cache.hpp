// Lab 16's grader: one decoding step of causal self-attention with a KV cache
// (labs/16_kv_cache/README.md).
//
//   lab::kv_cache::grade(lab::kv_cache::KVCache{decode_step});
//   // "lab 16: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace kv_cache {

// The keys and values of the positions decoded so far, one head: [B, t, d] each, undefined
// (Tensor()) while empty.
struct Cache {
  Tensor key;
  Tensor value;
  std::size_t length() const { return key.defined() ? key.size(1) : 0; }
};

// The layer's projections, given by the grader: x [B, n, E] -> [B, n, d].
struct Projections {
  std::function<Tensor(const Tensor& x)> query, key, value;
};

struct KVCache {
  // x_t [B, 1, E], the token at position t = cache.length() -> its row of causal self-attention [B, 1, d]:
  // its key and value appended to the cache, then softmax(q_t K^T / sqrt(d)) V over the t + 1 cached positions.
  std::function<Tensor(const Tensor& x_t, const Projections& project, Cache& cache)> decode_step;
};

// Runs every check on the learner's function, printing each to `os`.
Result grade(const KVCache& k, std::ostream& os = std::cout);

}  // namespace kv_cache
}  // namespace lab
