// Chapter 11: a sequence-to-sequence model with monotonic attention (Raffel et al. 2017).
//
// Bahdanau's model (bahdanau.hpp) with its softmax attention replaced by
// monotonic attention (nn/attention/monotonic.hpp):
//
//   encoder   h_j = [h_j(forward); h_j(backward)]          a bidirectional LSTM
//   start     s_0 = tanh(W_init [h_m(forward); h_1(backward)]), alignment alpha_{-1} = [1, 0, ..., 0]
//   at step t, from the previous state s_{t-1}:
//   choose    p_tj = sigmoid(g v^T tanh(W_1 s_{t-1} + W_2 h_j + b) / ||v|| + r)
//   training  alpha_t = the expected alignment from alpha_{t-1} and p_t;  c_t = sum_j alpha_tj h_j
//   decoding  stop at the first j >= the previous stop with p_tj >= 0.5; c_t = h_j (0 if none)
//   decoder   s_t = LSTMCell([y_{t-1}; c_t], s_{t-1})
//   output    p(y_t | y_<t, x) = softmax(W_out [s_t; c_t; y_{t-1}] + b_out)
//
// forward() (teacher forcing, the loss) always uses the expected alignment;
// step() (greedy decoding, beam search) always the hard one, which computes at
// most S + T energies per sentence: the pointer never moves back, and each step
// scores the positions from its start to its stop (the next step scores that
// stop again). step() also writes a one-hot [B, S] row per step for heatmaps,
// so a whole decode is Theta(S T) in writes; the energies are linear.
// Not online: the encoder is bidirectional and s_0 reads the whole source.
#pragma once

#include "../nn/attention/monotonic.hpp"
#include "bidirectional_encoder.hpp"

namespace attn::models {

struct MonotonicConfig {
  std::size_t src_vocab = 0, tgt_vocab = 0;  // vocabulary sizes (<pad> = 0 included)
  std::size_t embed_dim = 32;
  std::size_t encoder_dim = 32;  // per direction: the states h_j have 2 * encoder_dim values
  std::size_t decoder_dim = 64;
  std::size_t attention_dim = 64;
  double noise_std = 2.0;     // pre-sigmoid noise in training (Raffel et al. use 1 over far longer training)
  double offset_init = -1.0;  // r's initial value
};

class MonotonicSeq2Seq : public BidirectionalEncoderSeq2Seq {
 public:
  explicit MonotonicSeq2Seq(const MonotonicConfig& config);

  Tensor forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) override;
  // state.tensors: "memory" h_j [B, S, 2 * encoder_dim], "keys" W_2 h_j [B, S, A],
  // "h", "c" [B, decoder_dim], "alignment" alpha_{t-1} [B, S] (soft), "pointer" [B]
  // (hard: where the last step stopped). step() sets state.attention["attention"]
  // [B, S], one-hot at the attended position (all 0 when none).
  DecoderState start(const Index& src, const std::vector<std::size_t>& src_lengths) override;
  Tensor step(DecoderState& state, const Index& prefix) override;
  std::string extra_repr() const override;

  MonotonicConfig config;
  // src_embed, tgt_embed, encoder, init: bidirectional_encoder.hpp
  nn::MonotonicAttention attention;    // query s_{t-1}, keys h_j
  nn::LSTMCell decoder;                // [y_{t-1}; c_t] -> s_t
  nn::Linear out;                      // [s_t; c_t; y_{t-1}] -> tgt_vocab

 private:
  // One decoder step from the embedded y_{t-1} [B, E], soft or hard: updates state,
  // sets its attention, returns the output layer's input [s_t; c_t; y_{t-1}].
  Tensor decode(DecoderState& state, const Tensor& y_prev, bool hard);
};

}  // namespace attn::models
