#include "convolutional.hpp"

#include "../../core/ops.hpp"

#include <xtensor/xview.hpp>

namespace attn::nn {

ConvolutionalAttention::ConvolutionalAttention(std::size_t embed_dim, std::size_t hidden_dim,
                                               std::size_t conv_channels, std::size_t w1, std::size_t w2,
                                               std::size_t w3, bool copy, Generator& gen)
    : Module("ConvolutionalAttention"), embed_dim(embed_dim), hidden_dim(hidden_dim), copy(copy),
      conv1(embed_dim, conv_channels, w1, "same", true, gen),
      conv2(conv_channels, hidden_dim, w2, "same", true, gen),
      attention(hidden_dim, 1, w3, "same", true, gen),
      copy_conv(hidden_dim, 1, w3, "same", true, gen),
      copy_gate_conv(hidden_dim, 1, w3, "same", true, gen) {
  register_module("conv1", conv1);
  register_module("conv2", conv2);
  register_module("attention", attention);
  if (copy) {
    register_module("copy_conv", copy_conv);
    register_module("copy_gate_conv", copy_gate_conv);
  }
}

namespace {

// key_padding_mask [B, S] checked against the source's B and S; `op` names the caller.
void check_padding_mask(const std::optional<Mask>& key_padding_mask, std::size_t B, std::size_t S, const char* op) {
  if (!key_padding_mask) return;
  const Shape shape(key_padding_mask->shape().begin(), key_padding_mask->shape().end());
  if (shape != Shape{B, S})
    throw ShapeError(std::string(op) + ": expected key_padding_mask [" + std::to_string(B) + ", " + std::to_string(S) +
                     "], got " + shape_str(shape));
}

}  // namespace

Tensor ConvolutionalAttention::features(const Tensor& embedded, const std::optional<Mask>& key_padding_mask) const {
  if (!embedded.defined() || embedded.dim() != 3 || embedded.size(2) != embed_dim)
    throw ShapeError("ConvolutionalAttention: expected embedded input [B, S, " + std::to_string(embed_dim) + "], got " +
                     (embedded.defined() ? shape_str(embedded.shape()) : std::string("undefined")));
  check_padding_mask(key_padding_mask, embedded.size(0), embedded.size(1), "ConvolutionalAttention::features");
  // Zero every padded position before a convolution reads it, so a sentence's windows see
  // only its own tokens and the zeros of "same" padding, whatever else is in its batch.
  std::optional<Mask> pad;  // [B, 1, S], broadcast over channels
  if (key_padding_mask) pad = xt::eval(xt::view(*key_padding_mask, xt::all(), xt::newaxis(), xt::all()));
  const auto zero_padding = [&](const Tensor& t) { return pad ? masked_fill(t, *pad, 0.0) : t; };
  const Tensor x = zero_padding(transpose(embedded, 1, 2));  // [B, D, S]: conv1d wants channels before length
  const Tensor l1 = zero_padding(relu(conv1(x)));             // [B, k1, S]: conv1's bias made padding non-zero
  return transpose(zero_padding(conv2(l1)), 1, 2);            // [B, H, S] -> [B, S, H], 0 on padding
}

namespace {

// One score per position: conv1d over Lfeat [B, T, S, H] with a kernel H -> 1, for every (b, t).
Tensor score_positions(const Conv1d& conv, const Tensor& lfeat) {
  const long B = long(lfeat.size(0)), T = long(lfeat.size(1)), S = long(lfeat.size(2)), H = long(lfeat.size(3));
  const Tensor rows = transpose(reshape(lfeat, {B * T, S, H}), 1, 2);  // [B*T, H, S]
  return reshape(conv(rows), {B, T, S});                                // [B*T, 1, S] -> [B, T, S]
}

}  // namespace

ConvolutionalAttentionOutput ConvolutionalAttention::forward(const Tensor& embedded, const Tensor& feats,
                                                             const Tensor& query,
                                                             const std::optional<Mask>& key_padding_mask) {
  const char* op = "ConvolutionalAttention";
  if (!embedded.defined() || !feats.defined() || !query.defined())
    throw ValueError(std::string(op) + ": embedded, feats and query must all be defined");
  if (embedded.dim() != 3 || embedded.size(2) != embed_dim)
    throw ShapeError(std::string(op) + ": expected embedded [B, S, " + std::to_string(embed_dim) + "], got " +
                     shape_str(embedded.shape()));
  const std::size_t B = embedded.size(0), S = embedded.size(1);
  if (feats.shape() != Shape{B, S, hidden_dim})
    throw ShapeError(std::string(op) + ": expected feats [" + std::to_string(B) + ", " + std::to_string(S) + ", " +
                     std::to_string(hidden_dim) + "] (features(embedded)), got " + shape_str(feats.shape()));
  if (query.dim() != 3 || query.size(0) != B || query.size(2) != hidden_dim)
    throw ShapeError(std::string(op) + ": expected query [" + std::to_string(B) + ", T, " + std::to_string(hidden_dim) +
                     "], got " + shape_str(query.shape()));
  check_padding_mask(key_padding_mask, B, S, op);

  // The score convolutions read Lfeat, which is 0 wherever feats is: zero feats at padding
  // (again, when features() had the mask) so no window reads past its sentence's end.
  Tensor f = feats;  // [B, S, H]
  if (key_padding_mask)  // mask [B, S, 1], broadcast over H
    f = masked_fill(feats, xt::eval(xt::view(*key_padding_mask, xt::all(), xt::all(), xt::newaxis())), 0.0);

  // Gate every position's features by h_t, then normalise each position's vector.
  const Tensor l2 = mul(unsqueeze(f, 1), unsqueeze(query, 2));                   // [B, 1, S, H] * [B, T, 1, H] -> [B, T, S, H]
  const Tensor norm = sqrt(add(sum(mul(l2, l2), {-1}, /*keepdim=*/true), 1e-12));  // [B, T, S, 1]
  const Tensor lfeat = div(l2, norm);                                            // [B, T, S, H]

  std::optional<Mask> mask;  // [B, 1, S], broadcast over T
  if (key_padding_mask) mask = xt::eval(xt::view(*key_padding_mask, xt::all(), xt::newaxis(), xt::all()));

  ConvolutionalAttentionOutput out;
  out.weights = masked_softmax(score_positions(attention, lfeat), mask);  // [B, T, S]
  out.context = matmul(out.weights, embedded);                              // [B, T, S] x [B, S, D] -> [B, T, D]
  last_weights_ = out.weights.detach();
  if (copy) {
    out.copy_weights = masked_softmax(score_positions(copy_conv, lfeat), mask);  // [B, T, S]
    Tensor gate = sigmoid(score_positions(copy_gate_conv, lfeat));              // [B, T, S]
    if (mask) gate = masked_fill(gate, *mask, 0.0);                             // padding never decides lambda
    out.copy_gate = max(gate, -1, /*keepdim=*/true);                            // [B, T, 1]
    last_copy_weights_ = out.copy_weights.detach();
  }
  return out;
}

std::string ConvolutionalAttention::extra_repr() const {
  return "embed_dim=" + std::to_string(embed_dim) + ", hidden_dim=" + std::to_string(hidden_dim) +
         ", copy=" + (copy ? "true" : "false");
}

Tensor copy_mixture(const Tensor& p_gen, const Tensor& copy_weights, const Tensor& copy_gate, const Index& copy_ids,
                    std::size_t extended_vocab) {
  const char* op = "copy_mixture";
  if (!p_gen.defined() || !copy_weights.defined() || !copy_gate.defined())
    throw ValueError(std::string(op) + ": p_gen, copy_weights and copy_gate must all be defined");
  if (p_gen.dim() != 3) throw ShapeError(std::string(op) + ": expected p_gen [B, T, V], got " + shape_str(p_gen.shape()));
  const std::size_t B = p_gen.size(0), T = p_gen.size(1), V = p_gen.size(2);
  if (copy_weights.dim() != 3 || copy_weights.size(0) != B || copy_weights.size(1) != T)
    throw ShapeError(std::string(op) + ": expected copy_weights [" + std::to_string(B) + ", " + std::to_string(T) +
                     ", S], got " + shape_str(copy_weights.shape()));
  const std::size_t S = copy_weights.size(2);
  if (copy_gate.shape() != Shape{B, T, 1})
    throw ShapeError(std::string(op) + ": expected copy_gate [" + std::to_string(B) + ", " + std::to_string(T) +
                     ", 1], got " + shape_str(copy_gate.shape()));
  const Shape ids_shape(copy_ids.shape().begin(), copy_ids.shape().end());
  if (ids_shape != Shape{B, S})
    throw ShapeError(std::string(op) + ": expected copy_ids [" + std::to_string(B) + ", " + std::to_string(S) +
                     "], got " + shape_str(ids_shape));
  if (extended_vocab < V)
    throw ValueError(std::string(op) + ": extended_vocab (" + std::to_string(extended_vocab) +
                     ") is smaller than p_gen's vocabulary (" + std::to_string(V) + ")");
  for (std::int64_t id : copy_ids)
    if (id < 0 || std::size_t(id) >= extended_vocab)
      throw ValueError(std::string(op) + ": copy id " + std::to_string(id) + " is outside the extended vocabulary 0.." +
                       std::to_string(extended_vocab - 1));

  Tensor gen = p_gen;  // [B, T, V] -> [B, T, V + n]: no generation mass on the source-only ids
  if (extended_vocab > V) gen = concat({p_gen, zeros({B, T, extended_vocab - V}, p_gen.dtype())}, 2);
  const Tensor where = one_hot(copy_ids, extended_vocab, p_gen.dtype());  // [B, S, V + n]
  const Tensor copied = matmul(copy_weights, where);                     // [B, T, S] x [B, S, V + n] -> [B, T, V + n]
  return add(mul(copy_gate, gen), mul(1.0 - copy_gate, copied));     // lambda p_gen + (1 - lambda) copy
}

}  // namespace attn::nn
