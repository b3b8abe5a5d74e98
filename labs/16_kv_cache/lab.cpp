// Lab 16: one decoding step of causal self-attention with a KV cache.
// What to write: labs/16_kv_cache/README.md. Check it: tools/lab.sh 16 (your copy is labs/work/16_kv_cache.cpp).
#include "labs/grader/lab16_kv_cache.hpp"

using attn::Tensor;
using lab::kv_cache::Cache;
using lab::kv_cache::Projections;

// ---- your code ----
// x_t [B, 1, E]: the token at position t = cache.length(). project.query(x), project.key(x) and project.value(x)
// map [B, n, E] to [B, n, d]. Project x_t only (the earlier positions' keys and values are in the cache), append
// its key and value to cache.key and cache.value ([B, t, d] each, undefined while empty: cache.key.defined()) with
// attn::concat({old, new}, 1), then attend over the t + 1 cached positions:
//   out = softmax(q_t K^T / sqrt(d)) V   -> [B, 1, d]
// (attn::matmul, attn::transpose(K, -2, -1), attn::softmax(scores, -1)).
Tensor decode_step(const Tensor& x_t, const Projections& project, Cache& cache) {
  lab::not_implemented("decode_step");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::kv_cache::KVCache mine{decode_step};
  return lab::kv_cache::grade(mine).exit_code();
}
#endif
