// nn::MultiheadAttention, as torch.nn.MultiheadAttention(embed_dim, num_heads,
// dropout, bias, batch_first=True): same parameters, names, initialization and
// results (tests compare against PyTorch within 1e-10).
//
// Inputs are BATCH-FIRST, [B, T, E], as everywhere in attn (PyTorch's default
// is [T, B, E]; attn matches batch_first=True).
//
// H heads of size d = E / H each attend on their own, then are joined:
//   [Q | K | V] = X_q W_q^T + b_q, ...       in_proj_weight [3E, E] holds W_q, W_k, W_v
//   head_h = softmax(Q_h K_h^T / sqrt(d)) V_h
//   output = concat(head_1, ..., head_H) W_o^T + b_o   (out_proj)
//
//   nn::MultiheadAttention mha(/*embed_dim=*/8, /*num_heads=*/2);
//   auto [out, weights] = mha(x, x, x);      // self-attention: out [B, T, 8], weights [B, T, T]
//
// Masks follow masks.hpp (true = may not be attended): key_padding_mask [B, Tk],
// attn_mask [Tq, Tk] or PyTorch's [B * H, Tq, Tk] (row b * H + h for sequence b,
// head h). One difference from PyTorch: a query whose keys are all masked gets
// weights 0 and output out_proj.bias, where PyTorch gives NaN.
#pragma once

#include "attention.hpp"
#include "kv_cache.hpp"

#include "../linear.hpp"

namespace attn::nn {

// Grouped-query attention (Ainslie et al. 2023): num_kv_heads key-value heads, each shared by
// num_heads / num_kv_heads query heads; 1 is multi-query attention (Shazeer 2019).
struct GroupedQuery {
  std::size_t num_kv_heads;
};

// Positions inside attention (chapter 15), besides what the inputs carry: none (the Transformer's
// encodings added to the inputs), rotary embeddings of the queries and keys (rotary.hpp), or ALiBi's
// distance penalties on the scores (alibi.hpp). Both count positions from 0 in forward() and from the
// cache's positions in forward_step, so they are meant for self-attention.
enum class AttentionPosition { None, Rotary, ALiBi };

struct MultiheadAttentionOutput {
  Tensor output;   // [B, Tq, E]
  Tensor weights;  // [B, Tq, Tk] averaged over heads, or [B, H, Tq, Tk]; undefined if !need_weights
};

class MultiheadAttention : public Module {
 public:
  MultiheadAttention(std::size_t embed_dim, std::size_t num_heads, double dropout = 0.0, bool bias = true,
                     Generator& gen = default_generator());
  // Grouped-query attention: in_proj_weight is [E + 2 * num_kv_heads * d, E] (queries, then the
  // fewer keys and values), and keys and values (and a decoder's cache of them) have num_kv_heads
  // heads, each used by num_heads / num_kv_heads consecutive query heads.
  //   nn::MultiheadAttention mqa(256, 8, nn::GroupedQuery{1});   // multi-query: one key-value head
  MultiheadAttention(std::size_t embed_dim, std::size_t num_heads, GroupedQuery grouped, double dropout = 0.0,
                     bool bias = true, Generator& gen = default_generator());

  // query [B, Tq, E], key [B, Tk, E], value [B, Tk, E]. Dropout (on the weights)
  // acts only while training. is_causal blocks key j for query i when j > i, on top of
  // the masks, as F.scaled_dot_product_attention's is_causal (PyTorch's layer takes it
  // only as a hint that attn_mask is causal); with use_flash_attention it costs no mask.
  // When Tq != Tk it is top-left (query i sees keys 0..i, as PyTorch's): to decode new
  // positions after cached ones, use forward_step, which counts positions from the cache.
  MultiheadAttentionOutput forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                   const std::optional<Mask>& key_padding_mask = std::nullopt,
                                   bool need_weights = true, const std::optional<Mask>& attn_mask = std::nullopt,
                                   bool average_attn_weights = true, bool is_causal = false);
  MultiheadAttentionOutput operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                                      const std::optional<Mask>& key_padding_mask = std::nullopt,
                                      bool need_weights = true, const std::optional<Mask>& attn_mask = std::nullopt,
                                      bool average_attn_weights = true, bool is_causal = false) {
    return forward(query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights, is_causal);
  }

  // The pieces of forward, for decoders that reuse keys and values (kv_cache.hpp):
  // key and value [B, Tk, E] projected and split into heads, [B, H, Tk, d] each, the keys at
  // positions start, start + 1, ... (with rotary positions, rotated there; kv.start = start);
  KVCache project_kv(const Tensor& key, const Tensor& value, std::size_t start = 0);
  // attention of query [B, Tq, E], at positions query_start, query_start + 1, ..., over keys and
  // values already projected (forward is forward_cached(query, project_kv(key, value), ...), with
  // the same masks);
  MultiheadAttentionOutput forward_cached(const Tensor& query, const KVCache& kv,
                                          const std::optional<Mask>& key_padding_mask = std::nullopt,
                                          bool need_weights = true,
                                          const std::optional<Mask>& attn_mask = std::nullopt,
                                          bool average_attn_weights = true, bool is_causal = false,
                                          std::size_t query_start = 0);
  // one step of causal self-attention: the keys and values of the new positions x [B, Tn, E]
  // are appended to `cache`, and x's queries attend over every cached position up to their
  // own. Step by step, the outputs are forward(prefix, prefix, prefix, causal)'s last rows.
  MultiheadAttentionOutput forward_step(const Tensor& x, KVCache& cache, bool need_weights = false,
                                        bool average_attn_weights = true);

  // Draws in_proj_weight again (xavier_uniform_) and zeroes both biases, as PyTorch.
  void reset_parameters(Generator& gen = default_generator());
  // Per-head weights of the last call, [B, H, Tq, Tk], detached: for per-head heatmaps.
  const Tensor& last_weights() const { return last_weights_; }
  std::string extra_repr() const override;

  std::size_t embed_dim, num_heads, head_dim;
  std::size_t num_kv_heads;  // num_heads unless grouped
  double dropout;
  // Sliding-window self-attention (Beltagy et al. 2020; Mistral): when > 0, query position i
  // sees key positions i - window + 1 .. i at most (with a causal mask; without one, also the
  // later ones up to i + window - 1), and forward_step keeps only the last `window` positions
  // in its cache. In forward() the positions are the row numbers of query and key, so it is
  // meant for self-attention; forward_cached applies none (it does not know the positions).
  std::size_t window = 0;
  // When true, the heads attend through flash_attention (flash_attention.hpp) instead of
  // scaled_dot_product_attention: the same values and gradients, to rounding, in memory that
  // grows with Tq + Tk instead of Tq * Tk (is_causal and a window cost no mask, grouped heads read
  // their key-value head without a copy; an attn_mask [Tq, Tk] is the caller's own Tq * Tk bytes). It makes no weights, so forward needs
  // need_weights = false and last_weights() is left undefined; it drops no weights either, so
  // with dropout > 0 it runs only in eval mode; and its attn_mask is [Tq, Tk]. Each of these
  // is a clear error otherwise. Off by default.
  bool use_flash_attention = false;
  // Rotary embeddings or ALiBi biases (AttentionPosition above); None by default. ALiBi needs the
  // plain path (not use_flash_attention), since the tiled one adds no bias.
  AttentionPosition position = AttentionPosition::None;
  double rotary_base = 10000.0;  // theta_k = rotary_base^(-2k / d)
  Tensor in_proj_weight;  // [3E, E]: rows 0..E-1 project queries, E..2E-1 keys, 2E..3E-1 values
                          // (grouped: [E + 2K, E] with K = num_kv_heads * head_dim rows for keys, then values)
  Tensor in_proj_bias;    // [3E] (grouped: [E + 2K]), undefined when bias = false
  Linear out_proj;        // E -> E

 private:
  // Attention of q [B, H, Tq, d] over kv's fewer heads, each read in place by its group of query heads.
  AttentionOutput grouped_attention(const Tensor& q, const KVCache& kv, const Tensor& bias,
                                    const std::optional<Mask>& mask);
  std::optional<Mask> window_mask(std::size_t Tq, std::size_t q0, std::size_t Tk, std::size_t k0, bool causal) const;
  MultiheadAttentionOutput forward_flash(const Tensor& q, const KVCache& kv,
                                         const std::optional<Mask>& key_padding_mask, bool need_weights,
                                         const std::optional<Mask>& attn_mask, bool is_causal);
  Generator* gen_;  // for dropout
  Tensor last_weights_;
};

}  // namespace attn::nn
