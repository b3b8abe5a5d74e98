#include "multihead.hpp"

#include "alibi.hpp"
#include "flash_attention.hpp"
#include "rotary.hpp"

#include "../init.hpp"

#include "../../core/backend/fused.hpp"
#include "../../core/ops.hpp"

#include <string>

namespace attn::nn {

namespace {

// Rows [start, start + count) of in_proj_weight or in_proj_bias (undefined stays undefined).
Tensor rows(const Tensor& packed, std::size_t start, std::size_t count) {
  return packed.defined() ? narrow(packed, 0, start, count) : Tensor();
}

// m or-ed with extra ([Tq, Tk], the trailing dims of m's [B, H, Tq, Tk] or [Tq, Tk]). A loop, not
// `*m || *extra`: xtensor 0.24 with xsimd evaluates broadcast bool expressions wrongly (masks.cpp).
void block_also(std::optional<Mask>& m, const std::optional<Mask>& extra) {
  if (!extra) return;
  if (!m) {
    m = extra;
    return;
  }
  bool* out = m->data();
  const bool* e = extra->data();
  const std::size_t inner = extra->size();  // Tq * Tk; m is row-major, so element i pairs with e[i % inner]
  for (std::size_t i = 0; i < m->size(); ++i) out[i] = out[i] || e[i % inner];
}

}  // namespace

MultiheadAttention::MultiheadAttention(std::size_t embed_dim, std::size_t num_heads, double dropout, bool bias,
                                       Generator& gen)
    : MultiheadAttention(embed_dim, num_heads, GroupedQuery{num_heads}, dropout, bias, gen) {}

MultiheadAttention::MultiheadAttention(std::size_t embed_dim, std::size_t num_heads, GroupedQuery grouped,
                                       double dropout, bool bias, Generator& gen)
    : Module("MultiheadAttention"), embed_dim(embed_dim), num_heads(num_heads),
      head_dim(num_heads ? embed_dim / num_heads : 0), num_kv_heads(grouped.num_kv_heads), dropout(dropout),
      out_proj(embed_dim, embed_dim, bias, gen), gen_(&gen) {
  if (num_heads == 0 || embed_dim == 0 || embed_dim % num_heads != 0)
    throw ValueError("MultiheadAttention: embed_dim (" + std::to_string(embed_dim) +
                     ") must be a positive multiple of num_heads (" + std::to_string(num_heads) + ")");
  if (num_kv_heads == 0 || num_heads % num_kv_heads != 0)
    throw ValueError("MultiheadAttention: num_kv_heads (" + std::to_string(num_kv_heads) +
                     ") must be a positive divisor of num_heads (" + std::to_string(num_heads) + ")");
  if (dropout < 0.0 || dropout >= 1.0)
    throw ValueError("MultiheadAttention: dropout must be in [0, 1), got " + std::to_string(dropout));
  const std::size_t K = num_kv_heads * head_dim;  // rows for the keys, and for the values
  in_proj_weight = zeros({embed_dim + 2 * K, embed_dim});
  register_parameter("in_proj_weight", in_proj_weight);
  if (bias) {
    in_proj_bias = zeros({embed_dim + 2 * K});
    register_parameter("in_proj_bias", in_proj_bias);
  }
  register_module("out_proj", out_proj);
  reset_parameters(gen);
}

void MultiheadAttention::reset_parameters(Generator& gen) {
  init::xavier_uniform_(in_proj_weight, 1.0, gen);
  if (in_proj_bias.defined()) init::zeros_(in_proj_bias);
  if (out_proj.bias.defined()) init::zeros_(out_proj.bias);
}

MultiheadAttentionOutput MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                     const std::optional<Mask>& key_padding_mask, bool need_weights,
                                                     const std::optional<Mask>& attn_mask,
                                                     bool average_attn_weights, bool is_causal) {
  const std::string op = "MultiheadAttention";
  if (!query.defined() || !key.defined() || !value.defined()) throw ValueError(op + ": an input is undefined");
  const std::size_t E = embed_dim, H = num_heads;  // head_dim d = E / H
  auto bad = [&](const std::string& why) {
    return ShapeError(op + ": " + why + ", got query " + shape_str(query.shape()) + ", key " +
                      shape_str(key.shape()) + ", value " + shape_str(value.shape()));
  };
  for (const Tensor* t : {&query, &key, &value})
    if (t->dim() != 3 || t->size(-1) != E)
      throw bad("expected batch-first inputs [B, T, " + std::to_string(E) + "]");
  if (key.size(0) != query.size(0) || value.size(0) != query.size(0)) throw bad("query, key and value must share B");
  if (key.size(1) != value.size(1)) throw bad("key and value must have the same length Tk");
  const std::size_t B = query.size(0), Tq = query.size(1), Tk = key.size(1);

  if (use_flash_attention) {  // the masks go as they are, the window as a number: no [Tq, Tk] array
    Tensor q = linear(query, rows(in_proj_weight, 0, E), rows(in_proj_bias, 0, E));  // [B, Tq, E]
    const KVCache kv = project_kv(key, value);                                       // [B, H_kv, Tk, d] each
    return forward_flash(q, kv, key_padding_mask, need_weights, attn_mask, is_causal);
  }
  // PyTorch's attn_mask [B * H, Tq, Tk] is read as [B, H, Tq, Tk].
  std::optional<Mask> per_head = attn_mask;
  if (attn_mask && attn_mask->dimension() == 3 && H > 1) {
    const Shape got(attn_mask->shape().begin(), attn_mask->shape().end());
    if (got != Shape{B * H, Tq, Tk})
      throw ShapeError(op + ": expected attn_mask [Tq, Tk] = " + shape_str({Tq, Tk}) + " or [B * H, Tq, Tk] = " +
                       shape_str({B * H, Tq, Tk}) + ", got " + shape_str(got));
    per_head->reshape({B, H, Tq, Tk});
  }
  if (window) block_also(per_head, window_mask(Tq, 0, Tk, 0, false));  // [Tq, Tk], or-ed in
  return forward_cached(query, project_kv(key, value), key_padding_mask, need_weights, per_head,
                        average_attn_weights, is_causal);
}

KVCache MultiheadAttention::project_kv(const Tensor& key, const Tensor& value, std::size_t start) {
  const std::size_t E = embed_dim;
  if (!key.defined() || !value.defined() || key.dim() != 3 || value.dim() != 3 || key.size(-1) != E ||
      value.size(-1) != E || key.size(0) != value.size(0) || key.size(1) != value.size(1))
    throw ShapeError("MultiheadAttention::project_kv: expected key and value [B, Tk, " + std::to_string(E) +
                     "], got " + (key.defined() ? shape_str(key.shape()) : std::string("undefined")) + " and " +
                     (value.defined() ? shape_str(value.shape()) : std::string("undefined")));
  const std::size_t K = num_kv_heads * head_dim;
  Tensor k = linear(key, rows(in_proj_weight, E, K), rows(in_proj_bias, E, K));            // [B, Tk, K]
  Tensor v = linear(value, rows(in_proj_weight, E + K, K), rows(in_proj_bias, E + K, K));  // [B, Tk, K]
  // Each head gets its own slice of d = E / H features: split_heads is reshape to
  // [B, T, H_kv, d] then transpose(1, 2), in one copy (core/ops/shape.cpp).
  KVCache kv{split_heads(k, num_kv_heads), split_heads(v, num_kv_heads), start};  // [B, H_kv, Tk, d] each
  if (position == AttentionPosition::Rotary) kv.key = rotary_embedding(kv.key, start, rotary_base);  // turned by position
  return kv;
}

MultiheadAttentionOutput MultiheadAttention::forward_cached(const Tensor& query, const KVCache& kv,
                                                            const std::optional<Mask>& key_padding_mask,
                                                            bool need_weights, const std::optional<Mask>& attn_mask,
                                                            bool average_attn_weights, bool is_causal,
                                                            std::size_t query_start) {
  const std::string op = "MultiheadAttention";
  const std::size_t E = embed_dim, H = num_heads;
  if (!query.defined() || query.dim() != 3 || query.size(-1) != E)
    throw ShapeError(op + ": expected query [B, Tq, " + std::to_string(E) + "], got " +
                     (query.defined() ? shape_str(query.shape()) : std::string("undefined")));
  const std::size_t B = query.size(0), Tq = query.size(1), Tk = kv.length();
  if (!kv.key.defined() || !kv.value.defined() || kv.key.shape() != Shape{B, num_kv_heads, Tk, head_dim} ||
      kv.value.shape() != kv.key.shape())
    throw ShapeError(op + ": expected cached keys and values [B, H_kv, Tk, d] = [" + std::to_string(B) + ", " +
                     std::to_string(num_kv_heads) + ", Tk, " + std::to_string(head_dim) + "], got " +
                     (kv.key.defined() ? shape_str(kv.key.shape()) : std::string("none")) + " and " +
                     (kv.value.defined() ? shape_str(kv.value.shape()) : std::string("none")));
  auto mask = combine_masks({B, H, Tq, Tk}, key_padding_mask, attn_mask, "MultiheadAttention");
  if (is_causal) {
    Mask causal = Mask::from_shape({Tq, Tk});  // true where key j > query i
    for (std::size_t i = 0; i < Tq; ++i)
      for (std::size_t j = 0; j < Tk; ++j) causal(i, j) = j > i;
    block_also(mask, causal);  // [B, H, Tq, Tk] or-ed with [Tq, Tk], broadcast
  }
  Tensor q = split_heads(linear(query, rows(in_proj_weight, 0, E), rows(in_proj_bias, 0, E)), H);  // [B, H, Tq, d]
  if (position == AttentionPosition::Rotary) q = rotary_embedding(q, query_start, rotary_base);
  Tensor bias;  // ALiBi: -m_h |i - j| on head h's scores, [H, Tq, Tk]
  if (position == AttentionPosition::ALiBi) bias = alibi_bias(H, Tq, query_start, Tk, kv.start, q.dtype());
  AttentionOutput heads = num_kv_heads == H ? scaled_dot_product_attention(q, kv.key, kv.value, bias, mask, dropout,
                                                                           is_training(), *gen_)
                                            : grouped_attention(q, kv, bias, mask);

  // heads.context [B, H, Tq, d], heads.weights [B, H, Tq, Tk]
  // The heads side by side again: transpose(1, 2) to [B, Tq, H, d], reshape to [B, Tq, E], in one copy.
  Tensor output = out_proj(merge_heads(heads.context));  // [B, Tq, E] -> [B, Tq, E]
  last_weights_ = heads.weights.detach();

  Tensor weights;
  if (need_weights) weights = average_attn_weights ? mean(heads.weights, {1}) : heads.weights;  // [B, Tq, Tk] or [B, H, Tq, Tk]
  return {output, weights};
}

MultiheadAttentionOutput MultiheadAttention::forward_step(const Tensor& x, KVCache& cache, bool need_weights,
                                                          bool average_attn_weights) {
  if (!x.defined() || x.dim() != 3 || x.size(-1) != embed_dim || x.size(1) == 0)
    throw ShapeError("MultiheadAttention::forward_step: expected x [B, Tn, " + std::to_string(embed_dim) +
                     "] with Tn >= 1, got " + (x.defined() ? shape_str(x.shape()) : std::string("undefined")));
  if (cache.length() && cache.key.size(0) != x.size(0))
    throw ShapeError("MultiheadAttention::forward_step: the cache holds " + std::to_string(cache.key.size(0)) +
                     " sequences, x " + std::to_string(x.size(0)));
  const std::size_t t0 = cache.end(), Tn = x.size(1);  // x's rows are positions t0 .. t0 + Tn - 1
  const KVCache fresh = project_kv(x, x, t0);            // their keys and values: [B, H_kv, Tn, d] each
  const bool empty = cache.length() == 0;  // asked once: setting key changes length()
  cache.key = empty ? fresh.key : concat({cache.key, fresh.key}, 2);          // [B, H_kv, t + Tn, d]
  cache.value = empty ? fresh.value : concat({cache.value, fresh.value}, 2);  // [B, H_kv, t + Tn, d]
  // Position t0 + r sees the cached positions up to its own (and, with a window, the last `window`).
  std::optional<Mask> mask;
  if (Tn > 1 || (window && cache.length() > window)) mask = window_mask(Tn, t0, cache.length(), cache.start, true);
  MultiheadAttentionOutput out =
      forward_cached(x, cache, std::nullopt, need_weights, mask, average_attn_weights, /*is_causal=*/false, t0);
  if (window && cache.length() > window) {  // what no later position can see is dropped
    const std::size_t drop = cache.length() - window;
    cache.key = narrow(cache.key, 2, drop, window);
    cache.value = narrow(cache.value, 2, drop, window);
    cache.start += drop;
  }
  return out;
}

// Grouped-query attention without copying the keys and values into every head: the query heads
// of a group (consecutive, group = H / H_kv of them) become extra query rows of their key-value
// head, [B, H, Tq, d] read as [B, H_kv, group * Tq, d] (the same memory), so each shared key and
// value is read where it is. The masks and biases are laid out the same way, and the results read
// back as [B, H, Tq, .].
AttentionOutput MultiheadAttention::grouped_attention(const Tensor& q, const KVCache& kv, const Tensor& bias,
                                                      const std::optional<Mask>& mask) {
  const std::size_t B = q.size(0), Tq = q.size(2), Tk = kv.length(), G = num_kv_heads, group = num_heads / G;
  const auto L = [](std::size_t n) { return static_cast<long>(n); };
  std::optional<Mask> rows;  // the mask of the rows [B, G, group * Tq, Tk], or [group * Tq, Tk]
  if (mask && mask->dimension() == 4) {
    rows = *mask;  // [B, H, Tq, Tk]: the same order as [B, G, group, Tq, Tk]
    rows->reshape({B, G, group * Tq, Tk});
  } else if (mask) {
    rows = Mask::from_shape({group * Tq, Tk});  // [Tq, Tk] once for each query head of a group
    for (std::size_t k = 0; k < group; ++k) std::copy(mask->begin(), mask->end(), rows->begin() + long(k * Tq * Tk));
  }
  AttentionOutput out = scaled_dot_product_attention(
      reshape(q, {L(B), L(G), L(group * Tq), L(head_dim)}),  // [B, H, Tq, d] -> [B, G, group * Tq, d]
      kv.key, kv.value,                                      // [B, G, Tk, d]
      bias.defined() ? reshape(bias, {L(G), L(group * Tq), L(Tk)}) : Tensor(),  // [H, Tq, Tk] -> [G, group * Tq, Tk]
      rows, dropout, is_training(), *gen_);
  return {reshape(out.context, {L(B), L(num_heads), L(Tq), L(head_dim)}),  // [B, G, group * Tq, d] -> [B, H, Tq, d]
          reshape(out.weights, {L(B), L(num_heads), L(Tq), L(Tk)})};     // -> [B, H, Tq, Tk]
}

std::optional<Mask> MultiheadAttention::window_mask(std::size_t Tq, std::size_t q0, std::size_t Tk, std::size_t k0,
                                                    bool causal) const {
  if (!causal && !window) return std::nullopt;
  Mask m = Mask::from_shape({Tq, Tk});  // query position q0 + i, key position k0 + j
  for (std::size_t i = 0; i < Tq; ++i)
    for (std::size_t j = 0; j < Tk; ++j) {
      const std::size_t qp = q0 + i, kp = k0 + j;
      const bool later = kp > qp, far = window && (qp >= kp ? qp - kp : kp - qp) >= window;
      m(i, j) = (causal && later) || far;
    }
  return m;
}

// The heads' attention through flash_attention, for the projected queries q [B, Tq, E] and the
// keys and values kv [B, H, Tk, d].
MultiheadAttentionOutput MultiheadAttention::forward_flash(const Tensor& q, const KVCache& kv,
                                                           const std::optional<Mask>& key_padding_mask,
                                                           bool need_weights, const std::optional<Mask>& attn_mask,
                                                           bool is_causal) {
  const std::string op = "MultiheadAttention (use_flash_attention)";
  if (need_weights) throw ValueError(op + ": flash attention makes no weights; call forward with need_weights = false");
  if (dropout > 0.0 && is_training())
    throw ValueError(op + ": flash attention drops no weights, and dropout is " + std::to_string(dropout) +
                     " in training mode; train with use_flash_attention off, or with dropout 0");
  if (attn_mask && attn_mask->dimension() != 2)
    throw ShapeError(op + ": attn_mask must be [Tq, Tk], the same for every sequence and head, got " +
                     shape_str(Shape(attn_mask->shape().begin(), attn_mask->shape().end())));
  if (position == AttentionPosition::ALiBi)
    throw ValueError(op + ": flash attention adds no bias, so it cannot apply ALiBi; turn use_flash_attention off");
  Tensor heads_q = split_heads(q, num_heads);  // [B, H, Tq, d]
  if (position == AttentionPosition::Rotary) heads_q = rotary_embedding(heads_q, 0, rotary_base);
  // Grouped heads read their key-value head in place (enable_gqa): no copy per query head.
  Tensor context = flash_attention(heads_q,             // [B, H, Tq, d]
                                   kv.key, kv.value,    // [B, H_kv, Tk, d]
                                   key_padding_mask, attn_mask, is_causal, 64, 64, window,
                                   /*enable_gqa=*/num_kv_heads != num_heads);  // -> [B, H, Tq, d]
  // context [B, H, Tq, d] -> [B, Tq, E]
  last_weights_ = Tensor();
  return {out_proj(merge_heads(context)), Tensor()};
}

std::string MultiheadAttention::extra_repr() const {
  return "embed_dim=" + std::to_string(embed_dim) + ", num_heads=" + std::to_string(num_heads) +
         (num_kv_heads != num_heads ? ", num_kv_heads=" + std::to_string(num_kv_heads) : std::string()) +
         (window ? ", window=" + std::to_string(window) : std::string()) +
         (position == AttentionPosition::Rotary ? std::string(", position=rotary")
          : position == AttentionPosition::ALiBi ? std::string(", position=alibi") : std::string()) +
         ", dropout=" + std::to_string(dropout) +
         ", batch_first=true";
}

}  // namespace attn::nn
