#include "multihead.hpp"

#include "flash_attention.hpp"

#include "../init.hpp"

#include "../../core/backend/fused.hpp"
#include "../../core/ops.hpp"

#include <string>

namespace attn::nn {

namespace {

// A slice of the packed projection: rows [i*E, (i+1)*E) of in_proj_weight / in_proj_bias.
Tensor part(const Tensor& packed, std::size_t i, std::size_t E) {
  return packed.defined() ? narrow(packed, 0, i * E, E) : Tensor();
}

}  // namespace

MultiheadAttention::MultiheadAttention(std::size_t embed_dim, std::size_t num_heads, double dropout, bool bias,
                                       Generator& gen)
    : Module("MultiheadAttention"), embed_dim(embed_dim), num_heads(num_heads),
      head_dim(num_heads ? embed_dim / num_heads : 0), dropout(dropout), out_proj(embed_dim, embed_dim, bias, gen),
      gen_(&gen) {
  if (num_heads == 0 || embed_dim == 0 || embed_dim % num_heads != 0)
    throw ValueError("MultiheadAttention: embed_dim (" + std::to_string(embed_dim) +
                     ") must be a positive multiple of num_heads (" + std::to_string(num_heads) + ")");
  if (dropout < 0.0 || dropout >= 1.0)
    throw ValueError("MultiheadAttention: dropout must be in [0, 1), got " + std::to_string(dropout));
  in_proj_weight = zeros({3 * embed_dim, embed_dim});
  register_parameter("in_proj_weight", in_proj_weight);
  if (bias) {
    in_proj_bias = zeros({3 * embed_dim});
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

  if (use_flash_attention) {  // the masks go as they are
    Tensor q = linear(query, part(in_proj_weight, 0, E), part(in_proj_bias, 0, E));  // [B, Tq, E]
    const KVCache kv = project_kv(key, value);                                       // [B, H, Tk, d] each
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
  return forward_cached(query, project_kv(key, value), key_padding_mask, need_weights, per_head,
                        average_attn_weights, is_causal);
}

KVCache MultiheadAttention::project_kv(const Tensor& key, const Tensor& value) {
  const std::size_t E = embed_dim, H = num_heads;
  if (!key.defined() || !value.defined() || key.dim() != 3 || value.dim() != 3 || key.size(-1) != E ||
      value.size(-1) != E || key.size(0) != value.size(0) || key.size(1) != value.size(1))
    throw ShapeError("MultiheadAttention::project_kv: expected key and value [B, Tk, " + std::to_string(E) +
                     "], got " + (key.defined() ? shape_str(key.shape()) : std::string("undefined")) + " and " +
                     (value.defined() ? shape_str(value.shape()) : std::string("undefined")));
  Tensor k = linear(key, part(in_proj_weight, 1, E), part(in_proj_bias, 1, E));    // [B, Tk, E]
  Tensor v = linear(value, part(in_proj_weight, 2, E), part(in_proj_bias, 2, E));  // [B, Tk, E]
  // Each head gets its own slice of d = E / H features: split_heads is reshape to
  // [B, T, H, d] then transpose(1, 2), in one copy (core/ops/shape.cpp).
  return {split_heads(k, H), split_heads(v, H)};  // [B, H, Tk, d] each
}

MultiheadAttentionOutput MultiheadAttention::forward_cached(const Tensor& query, const KVCache& kv,
                                                            const std::optional<Mask>& key_padding_mask,
                                                            bool need_weights, const std::optional<Mask>& attn_mask,
                                                            bool average_attn_weights, bool is_causal) {
  const std::string op = "MultiheadAttention";
  const std::size_t E = embed_dim, H = num_heads;
  if (!query.defined() || query.dim() != 3 || query.size(-1) != E)
    throw ShapeError(op + ": expected query [B, Tq, " + std::to_string(E) + "], got " +
                     (query.defined() ? shape_str(query.shape()) : std::string("undefined")));
  const std::size_t B = query.size(0), Tq = query.size(1), Tk = kv.length();
  if (!kv.key.defined() || !kv.value.defined() || kv.key.shape() != Shape{B, H, Tk, head_dim} ||
      kv.value.shape() != kv.key.shape())
    throw ShapeError(op + ": expected cached keys and values [B, H, Tk, d] = [" + std::to_string(B) + ", " +
                     std::to_string(H) + ", Tk, " + std::to_string(head_dim) + "], got " +
                     (kv.key.defined() ? shape_str(kv.key.shape()) : std::string("none")) + " and " +
                     (kv.value.defined() ? shape_str(kv.value.shape()) : std::string("none")));
  auto mask = combine_masks({B, H, Tq, Tk}, key_padding_mask, attn_mask, "MultiheadAttention");
  if (is_causal) {
    Mask causal = Mask::from_shape({Tq, Tk});  // true where key j > query i
    for (std::size_t i = 0; i < Tq; ++i)
      for (std::size_t j = 0; j < Tk; ++j) causal(i, j) = j > i;
    if (mask) *mask = *mask || causal;  // [B, H, Tq, Tk] or-ed with [Tq, Tk], broadcast
    else mask = causal;
  }
  Tensor q = linear(query, part(in_proj_weight, 0, E), part(in_proj_bias, 0, E));  // [B, Tq, E]
  AttentionOutput heads = scaled_dot_product_attention(split_heads(q, H),          // [B, H, Tq, d]
                                                       kv.key,                     // [B, H, Tk, d]
                                                       kv.value,                   // [B, H, Tk, d]
                                                       mask, dropout, is_training(), *gen_);
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
  const std::size_t t0 = cache.length();
  if (!x.defined() || x.dim() != 3 || x.size(-1) != embed_dim || x.size(1) == 0)
    throw ShapeError("MultiheadAttention::forward_step: expected x [B, Tn, " + std::to_string(embed_dim) +
                     "] with Tn >= 1, got " + (x.defined() ? shape_str(x.shape()) : std::string("undefined")));
  if (t0 && cache.key.size(0) != x.size(0))
    throw ShapeError("MultiheadAttention::forward_step: the cache holds " + std::to_string(cache.key.size(0)) +
                     " sequences, x " + std::to_string(x.size(0)));
  const KVCache fresh = project_kv(x, x);  // the new positions' keys and values: [B, H, Tn, d] each
  cache.key = t0 ? concat({cache.key, fresh.key}, 2) : fresh.key;          // [B, H, t0 + Tn, d]
  cache.value = t0 ? concat({cache.value, fresh.value}, 2) : fresh.value;  // [B, H, t0 + Tn, d]
  // New position t0 + r sees cached positions 0 .. t0 + r: later ones are blocked (none when Tn = 1).
  std::optional<Mask> later;
  const std::size_t Tn = x.size(1);
  if (Tn > 1) {
    later = Mask::from_shape({Tn, t0 + Tn});
    for (std::size_t r = 0; r < Tn; ++r)
      for (std::size_t j = 0; j < t0 + Tn; ++j) (*later)(r, j) = j > t0 + r;
  }
  return forward_cached(x, cache, std::nullopt, need_weights, later, average_attn_weights);
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
  Tensor context = flash_attention(split_heads(q, num_heads),  // [B, H, Tq, d]
                                   kv.key, kv.value,            // [B, H, Tk, d]
                                   key_padding_mask, attn_mask, is_causal);
  // context [B, H, Tq, d] -> [B, Tq, E]
  last_weights_ = Tensor();
  return {out_proj(merge_heads(context)), Tensor()};
}

std::string MultiheadAttention::extra_repr() const {
  return "embed_dim=" + std::to_string(embed_dim) + ", num_heads=" + std::to_string(num_heads) +
         ", dropout=" + std::to_string(dropout) + ", batch_first=true";
}

}  // namespace attn::nn
