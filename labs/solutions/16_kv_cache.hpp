// Lab 16's worked solution (the library's own: MultiheadAttention::forward_step, nn/attention/multihead.cpp,
// for one head).
#pragma once

#include "labs/grader/lab16_kv_cache.hpp"

#include <cmath>

namespace lab {
namespace solutions {
namespace kv_cache {

using attn::Tensor;
using lab::kv_cache::Cache;
using lab::kv_cache::Projections;

inline Tensor decode_step(const Tensor& x_t, const Projections& project, Cache& cache) {
  // Only the new token is projected: the old positions' keys and values are in the cache.
  Tensor q = project.query(x_t), k = project.key(x_t), v = project.value(x_t);  // [B, 1, d] each
  cache.key = cache.key.defined() ? attn::concat({cache.key, k}, 1) : k;          // [B, t + 1, d]
  cache.value = cache.value.defined() ? attn::concat({cache.value, v}, 1) : v;
  // One query row: every cached key is at or before position t, so no mask is needed.
  Tensor scores = attn::matmul(q, attn::transpose(cache.key, -2, -1)) / std::sqrt(double(q.size(-1)));  // [B, 1, t + 1]
  return attn::matmul(attn::softmax(scores, -1), cache.value);                                          // [B, 1, d]
}

inline lab::kv_cache::KVCache solution() { return {decode_step}; }

}  // namespace kv_cache
}  // namespace solutions
}  // namespace lab
