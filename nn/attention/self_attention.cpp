#include "self_attention.hpp"

#include "../../core/ops.hpp"

#include <string>

namespace attn::nn {

namespace {

void check_seq(const char* op, const char* what, const Tensor& t, std::size_t dim) {
  if (!t.defined()) throw ValueError(std::string(op) + ": " + what + " is undefined");
  if (t.dim() != 3 || t.size(-1) != dim)
    throw ShapeError(std::string(op) + ": expected " + what + " [B, T, " + std::to_string(dim) + "], got " +
                     shape_str(t.shape()));
}

}  // namespace

QKVAttention::QKVAttention(std::size_t query_dim, std::size_t input_dim, std::size_t value_dim, bool bias,
                           Generator& gen)
    : Module("QKVAttention"), query_dim(query_dim), input_dim(input_dim), value_dim(value_dim),
      key_proj(input_dim, query_dim, bias, gen), value_proj(input_dim, value_dim, bias, gen) {
  register_module("key_proj", key_proj);
  register_module("value_proj", value_proj);
}

namespace {

// softmax(Q K^T / sqrt(d) + mask) V with both masks combined; the weights
// [B, Tq, Tk] are kept, detached, for heatmaps.
AttentionOutput attend(const char* op, const Tensor& Q, const Tensor& K, const Tensor& V,
                       const std::optional<Mask>& key_padding_mask, const std::optional<Mask>& attn_mask,
                       Tensor& last_weights) {
  const Shape scores_shape{Q.size(0), Q.size(1), K.size(1)};  // [B, Tq, Tk]
  auto mask = combine_masks(scores_shape, key_padding_mask, attn_mask, op);
  AttentionOutput out = scaled_dot_product_attention(Q, K, V, mask);  // [B, Tq, Dv], [B, Tq, Tk]
  last_weights = out.weights.detach();
  return out;
}

}  // namespace

AttentionOutput QKVAttention::forward(const Tensor& query, const Tensor& inputs,
                                      const std::optional<Mask>& key_padding_mask,
                                      const std::optional<Mask>& attn_mask) {
  check_seq("QKVAttention", "query", query, query_dim);
  check_seq("QKVAttention", "inputs", inputs, input_dim);
  if (query.size(0) != inputs.size(0))
    throw ShapeError("QKVAttention: query and inputs have different batch sizes, query " + shape_str(query.shape()) +
                     " and inputs " + shape_str(inputs.shape()));
  Tensor K = key_proj(inputs);    // K = X W_K: [B, Tk, Dx] -> [B, Tk, Dq]
  Tensor V = value_proj(inputs);  // V = X W_V: [B, Tk, Dx] -> [B, Tk, Dv]
  return attend("QKVAttention", query, K, V, key_padding_mask, attn_mask, last_weights_);  // [B, Tq, Dv]
}

std::string QKVAttention::extra_repr() const {
  return "query_dim=" + std::to_string(query_dim) + ", input_dim=" + std::to_string(input_dim) +
         ", value_dim=" + std::to_string(value_dim);
}

SelfAttention::SelfAttention(std::size_t input_dim, std::size_t qk_dim, std::size_t value_dim, bool bias,
                             Generator& gen)
    : Module("SelfAttention"), input_dim(input_dim), qk_dim(qk_dim), value_dim(value_dim),
      query_proj(input_dim, qk_dim, bias, gen), key_proj(input_dim, qk_dim, bias, gen),
      value_proj(input_dim, value_dim, bias, gen) {
  register_module("query_proj", query_proj);
  register_module("key_proj", key_proj);
  register_module("value_proj", value_proj);
}

AttentionOutput SelfAttention::forward(const Tensor& x, const std::optional<Mask>& key_padding_mask,
                                       const std::optional<Mask>& attn_mask) {
  check_seq("SelfAttention", "x", x, input_dim);
  Tensor Q = query_proj(x);  // Q = X W_Q: [B, T, Dx] -> [B, T, Dqk]
  Tensor K = key_proj(x);    // K = X W_K: [B, T, Dx] -> [B, T, Dqk]
  Tensor V = value_proj(x);  // V = X W_V: [B, T, Dx] -> [B, T, Dv]
  return attend("SelfAttention", Q, K, V, key_padding_mask, attn_mask, last_weights_);  // [B, T, Dv]
}

std::string SelfAttention::extra_repr() const {
  return "input_dim=" + std::to_string(input_dim) + ", qk_dim=" + std::to_string(qk_dim) +
         ", value_dim=" + std::to_string(value_dim);
}

}  // namespace attn::nn
