// Exact attention in linear memory: the same softmax(Q K^T / sqrt(D)) V as
// scaled_dot_product_attention (attention.hpp), computed a block of queries against a block of
// keys at a time, so the [Tq, Tk] weights are never held whole (Dao 2023, FlashAttention-2).
//
//   Tensor context = nn::flash_attention(q, k, v);                      // q [B, H, T, d] -> [B, H, T, d]
//   Tensor causal  = nn::flash_attention(q, k, v, std::nullopt, std::nullopt, /*is_causal=*/true);
//
// Per block of queries, a running max m and sum l of the softmax, and an accumulator of
// exp(s - m) v, are rescaled whenever a new block of keys raises the max (the online softmax);
// the output is acc / l, and the row log-sum-exp m + log l is all that backward keeps to
// recompute each block's weights. docs/ops/flash_attention.md derives forward and backward.
//
// With fused ops on (the default) it runs as one op of the backend (core/backend/flash_attention.cpp)
// whose memory grows with Tq + Tk; off, as the same blocks composed from core ops, which autograd
// differentiates (each block's weights are then kept for backward: same values and gradients,
// to rounding, but not the memory). Returns no weights: that is the point.
//
// Masks follow masks.hpp (true = may not be attended), in the forms that are never widened to
// one per sequence and head: key_padding_mask [B, Tk] (B = query's first dim; the same for every
// head), attn_mask [Tq, Tk] (the same for every sequence and head; backward keeps a copy, Tq * Tk
// bytes), and is_causal (query i sees keys 0..i, PyTorch's is_causal), which costs no memory.
// window > 0 is a sliding window (Beltagy et al. 2020): query i sees keys j with |i - j| < window
// (with is_causal, i - window < j <= i); it costs no memory, and the blocks it blocks whole are
// skipped, so time grows with T * window.
// A query with every key blocked gets 0.
//
// Grouped-query attention (Ainslie et al. 2023), as PyTorch's enable_gqa: with enable_gqa, key and
// value may have fewer heads than query, [B, H_kv, Tk, D] against [B, H, Tq, D] with H_kv dividing H,
// and query head h reads key-value head h / (H / H_kv). No key or value is copied per head.
// No dropout on the weights: use scaled_dot_product_attention to train with attention dropout.
#pragma once

#include "../../core/tensor.hpp"

#include <cstddef>
#include <optional>

namespace attn::nn {

// query [..., Tq, D], key [..., Tk, D], value [..., Tk, Dv] (the same leading dims, e.g. [B, H];
// with enable_gqa, key's and value's heads H_kv dividing query's H) -> context [..., Tq, Dv].
// block_q queries by block_k keys at a time.
Tensor flash_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                       const std::optional<Mask>& key_padding_mask = std::nullopt,
                       const std::optional<Mask>& attn_mask = std::nullopt, bool is_causal = false,
                       std::size_t block_q = 64, std::size_t block_k = 64, std::size_t window = 0,
                       bool enable_gqa = false);

}  // namespace attn::nn
