// Attention layers with learned projections (course chapters 5 and 6).
//
// QKVAttention: given queries Q [B, Tq, Dq] and inputs X [B, Tk, Dx], it makes
//   keys    K = X W_K  [B, Tk, Dq]
//   values  V = X W_V  [B, Tk, Dv]
// and returns softmax(Q K^T / sqrt(Dq)) V [B, Tq, Dv]. Keys (what is matched)
// and values (what is returned) are two different views of the same inputs.
//
// SelfAttention: the queries come from the inputs too, Q = X W_Q, so the layer
// takes only X [B, T, Dx] and returns [B, T, Dv]. Without positional encodings
// it is permutation equivariant: permuting the rows of X permutes the rows of
// the output the same way.
//
// The projections are nn::Linear layers (query_proj, key_proj, value_proj), as
// in PyTorch; Linear stores weight [out, in], so W_K = key_proj.weight^T.
// Masks follow masks.hpp; weights of the last call: last_weights().
#pragma once

#include "attention.hpp"

#include "../linear.hpp"

namespace attn::nn {

class QKVAttention : public Module {
 public:
  QKVAttention(std::size_t query_dim, std::size_t input_dim, std::size_t value_dim, bool bias = false,
               Generator& gen = default_generator());

  // query [B, Tq, query_dim], inputs [B, Tk, input_dim] -> {context [B, Tq, value_dim], weights [B, Tq, Tk]}
  AttentionOutput forward(const Tensor& query, const Tensor& inputs,
                          const std::optional<Mask>& key_padding_mask = std::nullopt,
                          const std::optional<Mask>& attn_mask = std::nullopt);
  AttentionOutput operator()(const Tensor& query, const Tensor& inputs,
                             const std::optional<Mask>& key_padding_mask = std::nullopt,
                             const std::optional<Mask>& attn_mask = std::nullopt) {
    return forward(query, inputs, key_padding_mask, attn_mask);
  }
  const Tensor& last_weights() const { return last_weights_; }  // [B, Tq, Tk], detached
  std::string extra_repr() const override;

  std::size_t query_dim, input_dim, value_dim;
  Linear key_proj;    // W_K: input_dim -> query_dim
  Linear value_proj;  // W_V: input_dim -> value_dim

 private:
  Tensor last_weights_;
};

class SelfAttention : public Module {
 public:
  SelfAttention(std::size_t input_dim, std::size_t qk_dim, std::size_t value_dim, bool bias = false,
                Generator& gen = default_generator());

  // x [B, T, input_dim] -> {context [B, T, value_dim], weights [B, T, T]}
  AttentionOutput forward(const Tensor& x, const std::optional<Mask>& key_padding_mask = std::nullopt,
                          const std::optional<Mask>& attn_mask = std::nullopt);
  AttentionOutput operator()(const Tensor& x, const std::optional<Mask>& key_padding_mask = std::nullopt,
                             const std::optional<Mask>& attn_mask = std::nullopt) {
    return forward(x, key_padding_mask, attn_mask);
  }
  const Tensor& last_weights() const { return last_weights_; }  // [B, T, T], detached
  std::string extra_repr() const override;

  std::size_t input_dim, qk_dim, value_dim;
  Linear query_proj;  // W_Q: input_dim -> qk_dim
  Linear key_proj;    // W_K: input_dim -> qk_dim
  Linear value_proj;  // W_V: input_dim -> value_dim

 private:
  Tensor last_weights_;
};

}  // namespace attn::nn
