// Convolutional attention (Allamanis, Peng & Sutton 2016, "A convolutional
// attention network for extreme summarization of source code").
//
// Attention features come from two 1-D convolutions over the input embeddings
// E [S, D], gated elementwise by the decoder state h_t and normalised:
//
//   L1     = relu(conv1d(E, K_1))                 [S, k1]   window w1
//   L2_t   = conv1d(L1, K_2) * h_t                [S, H]    window w2, gated by h_t [H]
//   Lfeat  = L2_t / ||L2_t||_2                    [S, H]    per position
//   a_t    = softmax_j(conv1d(Lfeat, K_att))      [S]       window w3, one score per position
//   n_t    = sum_j a_tj E_j                       [D]       the context
//
// The copy variant reads the same features with two more kernels:
//   kappa_t  = softmax_j(conv1d(Lfeat, K_copy))          [S]  which source token to copy
//   lambda_t = max_j sigmoid(conv1d(Lfeat, K_lambda))_j  [1]  probability of generating
// and mixes (copy_mixture below)  p(y) = lambda p_gen(y) + (1 - lambda) sum_{j: x_j = y} kappa_j.
//
// conv1d(E, K_1) and conv1d(L1, K_2) do not depend on h_t, so features() computes
// them once per source; each decoder step only gates, normalises and scores.
//
// With a key_padding_mask, E, L1 and the features are zeroed at padded positions
// before each convolution reads them: conv1's bias makes L1 non-zero there, and a
// window at a sentence's last real positions would read it. Zeroed, every sentence
// sees the zeros of "same" padding at its own end, exactly as if it were alone, so
// its weights do not depend on the longer sentences of its batch.
//
//   nn::ConvolutionalAttention attention(D, H, /*conv_channels=*/16, 5, 3, 3, /*copy=*/true);
//   Tensor feats = attention.features(E, key_padding_mask);  // [B, S, H]
//   auto out = attention(E, feats, h, key_padding_mask);     // h [B, T, H]
#pragma once

#include "../conv.hpp"
#include "masks.hpp"

#include <optional>

namespace attn::nn {

struct ConvolutionalAttentionOutput {
  Tensor context;       // n_t       [B, T, D]
  Tensor weights;       // a_t       [B, T, S]
  Tensor copy_weights;  // kappa_t   [B, T, S]  (copy variant only)
  Tensor copy_gate;     // lambda_t  [B, T, 1]  probability of generating (copy variant only)
};

class ConvolutionalAttention : public Module {
 public:
  // embed_dim D, hidden_dim H (the decoder state's size), conv_channels k1,
  // window sizes w1, w2, w3 (all "same" padding, so every position keeps a score).
  ConvolutionalAttention(std::size_t embed_dim, std::size_t hidden_dim, std::size_t conv_channels = 16,
                         std::size_t w1 = 5, std::size_t w2 = 3, std::size_t w3 = 3, bool copy = false,
                         Generator& gen = default_generator());

  // E [B, S, D] -> conv1d(relu(conv1d(E, K_1)), K_2) [B, S, H]: the part that h_t does not change.
  // key_padding_mask [B, S] (true = padding): E, L1 and the result are 0 at padded positions.
  Tensor features(const Tensor& embedded, const std::optional<Mask>& key_padding_mask = std::nullopt) const;

  // embedded E [B, S, D], feats = features(E), query h [B, T, H] (T decoder steps at once),
  // key_padding_mask [B, S] (true = padding, never attended; masks.hpp). Pass the same mask to
  // features(): forward() zeroes feats at padding again, but cannot undo what conv2 already read.
  ConvolutionalAttentionOutput forward(const Tensor& embedded, const Tensor& feats, const Tensor& query,
                                       const std::optional<Mask>& key_padding_mask = std::nullopt);
  ConvolutionalAttentionOutput operator()(const Tensor& embedded, const Tensor& feats, const Tensor& query,
                                          const std::optional<Mask>& key_padding_mask = std::nullopt) {
    return forward(embedded, feats, query, key_padding_mask);
  }

  const Tensor& last_weights() const { return last_weights_; }            // a [B, T, S], detached
  const Tensor& last_copy_weights() const { return last_copy_weights_; }  // kappa [B, T, S], detached
  std::string extra_repr() const override;

  std::size_t embed_dim, hidden_dim;
  bool copy;
  Conv1d conv1;          // K_1: D -> k1
  Conv1d conv2;          // K_2: k1 -> H
  Conv1d attention;      // K_att: H -> 1
  Conv1d copy_conv;      // K_copy: H -> 1 (registered only with copy)
  Conv1d copy_gate_conv; // K_lambda: H -> 1 (registered only with copy)

 private:
  Tensor last_weights_, last_copy_weights_;
};

// The copy mixture over an extended vocabulary of V + n ids (the n source
// tokens the target vocabulary lacks get ids V, V + 1, ... for this batch):
//   p(y) = lambda p_gen(y) + (1 - lambda) sum_{j: copy_ids_j = y} kappa_j
// p_gen [B, T, V] (probabilities), copy_weights kappa [B, T, S], copy_gate lambda
// [B, T, 1], copy_ids [B, S] (each in 0..extended_vocab-1) -> p [B, T, extended_vocab].
// The sum over j is kappa times one_hot(copy_ids): [B, T, S] x [B, S, V + n].
Tensor copy_mixture(const Tensor& p_gen, const Tensor& copy_weights, const Tensor& copy_gate, const Index& copy_ids,
                    std::size_t extended_vocab);

}  // namespace attn::nn
