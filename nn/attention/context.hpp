// Attention with a learned query: the word and sentence attention of Yang et al. 2016,
// "Hierarchical Attention Networks for Document Classification".
//
// A classifier has no decoder state to ask "what matters now?", so the question is itself
// a parameter, the context vector u, learned with the rest of the model:
//
//   u_t = tanh(W h_t + b)          [B, T, A]   a one-layer MLP on every state
//   e_t = u_t . u                  [B, T]      how well state t matches the question
//   a_t = softmax_t(e_t)           [B, T]      0 on padded steps
//   s   = sum_t a_t h_t            [B, D]      the sequence as one vector
//
// It is Bahdanau's additive score (score.hpp) with the query's term W1 s folded into the
// bias b and v = u: the same MLP, asked the same question of every sequence.
//
//   nn::ContextAttention attention(2 * H, 100);   // states of 2H values, A = 100
//   auto [pooled, weights] = attention(h, nn::padding_mask(lengths, T));
//   // h [B, T, 2H] -> pooled [B, 2H], weights [B, T]
#pragma once

#include "masks.hpp"

#include "../linear.hpp"
#include "../module.hpp"

#include "../../core/random.hpp"

#include <optional>

namespace attn::nn {

struct ContextAttentionOutput {
  Tensor pooled;   // s [B, D]
  Tensor weights;  // a [B, T]
};

class ContextAttention : public Module {
 public:
  // The context vector is drawn uniform in [-1/sqrt(A), 1/sqrt(A)], as a bias of Linear(A, .).
  ContextAttention(std::size_t input_dim, std::size_t attention_dim, Generator& gen = default_generator());

  // states [B, T, D]; key_padding_mask [B, T], true at padded steps (masks.hpp).
  ContextAttentionOutput forward(const Tensor& states, const std::optional<Mask>& key_padding_mask = std::nullopt);
  ContextAttentionOutput operator()(const Tensor& states, const std::optional<Mask>& key_padding_mask = std::nullopt) {
    return forward(states, key_padding_mask);
  }
  std::string extra_repr() const override;

  const Tensor& last_weights() const { return last_weights_; }  // [B, T], detached

  std::size_t input_dim, attention_dim;
  Linear proj;     // W [A, D], b [A]
  Tensor context;  // u [A]

 private:
  Tensor last_weights_;
};

}  // namespace attn::nn
