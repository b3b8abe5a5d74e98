#include "attention.hpp"

#include "../../core/ops.hpp"

#include <cmath>
#include <string>

namespace attn::nn {

AttentionOutput scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                             const std::optional<Mask>& mask, double dropout_p, bool training,
                                             Generator& gen) {
  return scaled_dot_product_attention(query, key, value, Tensor(), mask, dropout_p, training, gen);
}

AttentionOutput scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                             const Tensor& attn_bias, const std::optional<Mask>& mask,
                                             double dropout_p, bool training, Generator& gen) {
  const std::string op = "scaled_dot_product_attention";
  if (!query.defined() || !key.defined() || !value.defined()) throw ValueError(op + ": an input is undefined");
  const Shape q = query.shape(), k = key.shape(), v = value.shape();
  if (q.size() < 2 || k.size() != q.size() || v.size() != q.size() || q.back() != k.back() ||
      k[k.size() - 2] != v[v.size() - 2])
    throw ShapeError(op + ": expected query [..., Tq, D], key [..., Tk, D], value [..., Tk, Dv], got query " +
                     shape_str(q) + ", key " + shape_str(k) + ", value " + shape_str(v));
  const long n = static_cast<long>(q.size());
  Tensor scores = matmul(query, transpose(key, n - 2, n - 1));       // [..., Tq, D] x [..., D, Tk] -> [..., Tq, Tk]
  scores = scores / std::sqrt(static_cast<double>(q.back()));
  if (attn_bias.defined()) scores = scores + attn_bias;              // broadcast: [H, Tq, Tk] for ALiBi
  Tensor weights = masked_softmax(scores, mask, -1);                 // [..., Tq, Tk]
  if (dropout_p > 0.0 && training) weights = dropout(weights, dropout_p, true, gen);
  Tensor context = matmul(weights, value);                           // [..., Tq, Tk] x [..., Tk, Dv] -> [..., Tq, Dv]
  return {context, weights};
}

Attention::Attention(std::unique_ptr<Score> score) : Module("Attention"), score_(std::move(score)) {
  if (!score_) throw ValueError("Attention: the score function is null");
  register_module("score", *score_);
}

AttentionOutput Attention::forward(const Tensor& query, const Tensor& keys, const Tensor& values,
                                   const std::optional<Mask>& key_padding_mask, const std::optional<Mask>& attn_mask) {
  return forward_precomputed(query, score_->precompute_keys(keys), values, key_padding_mask, attn_mask);
}

AttentionOutput Attention::forward_precomputed(const Tensor& query, const Tensor& precomputed_keys,
                                               const Tensor& values, const std::optional<Mask>& key_padding_mask,
                                               const std::optional<Mask>& attn_mask) {
  if (!values.defined()) throw ValueError("Attention: values are undefined");
  Tensor scores = score_->forward_precomputed(query, precomputed_keys);  // e_tj: [B, Tq, Tk]
  const std::size_t B = scores.size(0), Tk = scores.size(2);
  if (values.dim() != 3 || values.size(0) != B || values.size(1) != Tk)
    throw ShapeError("Attention: expected values [B, Tk, Dv] with B = " + std::to_string(B) + " and Tk = " +
                     std::to_string(Tk) + " (from query and keys), got " + shape_str(values.shape()));
  auto mask = combine_masks(scores.shape(), key_padding_mask, attn_mask, "Attention");
  Tensor weights = masked_softmax(scores, mask, -1);  // a_tj: [B, Tq, Tk]
  Tensor context = matmul(weights, values);           // c_t = sum_j a_tj v_j: [B, Tq, Tk] x [B, Tk, Dv] -> [B, Tq, Dv]
  last_weights_ = weights.detach();
  return {context, weights};
}

}  // namespace attn::nn
