// The keys and values an attention layer has computed, split into heads: what a decoder that
// writes one token at a time keeps, so that each step projects only its new token instead of
// the whole prefix again (the "KV cache").
//
//   nn::KVCache cache;                                    // empty
//   for each step t: y = self_attn.forward_step(x_t, cache).output;   // x_t [B, 1, E]; cache: t + 1 positions
//   nn::KVCache memory_kv = cross_attn.project_kv(memory, memory);    // once per source
//   y = cross_attn.forward_cached(y, memory_kv, source_padding).output;
//
// Both tensors are batch-first, so beam search reorders them with the rest of a decoder's state.
#pragma once

#include "../../core/tensor.hpp"

#include <cstddef>

namespace attn::nn {

struct KVCache {
  Tensor key;             // [B, H_kv, t, d], undefined while empty (H_kv: the layer's key-value heads)
  Tensor value;           // [B, H_kv, t, d]
  std::size_t start = 0;  // the position of the first one cached (a sliding window drops older ones)
  std::size_t length() const { return key.defined() ? key.size(2) : 0; }  // t, the positions cached
  std::size_t end() const { return start + length(); }                  // the next position
};

}  // namespace attn::nn
