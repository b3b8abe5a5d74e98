// Chapter 2: Bahdanau (additive) attention (Bahdanau, Cho & Bengio, 2015).
//
//   encoder   h_j = [h_j(forward); h_j(backward)]          a bidirectional LSTM, states concatenated
//   start     s_0 = tanh(W_init [h_m(forward); h_1(backward)]),  decoder cell state 0
//   at step t, BEFORE the decoder step, from the previous state s_{t-1}:
//   scores    e_tj = v^T tanh(W_1 s_{t-1} + W_2 h_j)       (W_2 h_j computed once per sentence)
//   weights   a_tj = softmax_j(e_tj)                       (padding never attended)
//   context   c_t  = sum_j a_tj h_j
//   decoder   s_t  = LSTMCell([y_{t-1}; c_t], s_{t-1})
//   output    p(y_t | y_<t, x) = softmax(W_out [s_t; c_t; y_{t-1}] + b_out)
//
// With config.coverage (Tu et al. 2016, "Modeling coverage for neural machine
// translation", their linguistic coverage without fertility), the score also sees how
// much attention each source token has received so far:
//   coverage  C_tj = C_{t-1,j} + a_tj,  C_0j = 0                          state "coverage" [B, S]
//   scores    e_tj = v^T tanh(W_1 s_{t-1} + W_2 h_j + V C_{t-1,j})        V: [A], "coverage_weight"
//
//   BahdanauConfig cfg;
//   cfg.src_vocab = cfg.tgt_vocab = vocab.size();
//   BahdanauSeq2Seq model(cfg);
//   Tensor logits = model.forward(src, src_lengths, tgt_in);   // [B, T, V]
//   model.last_attention().at("attention");                     // a_tj: [B, T, S]
//
// The decoder no longer squeezes the source through one vector: at every step it
// reads a fresh context c_t, a mix of all encoder states.
#pragma once

#include "../nn/attention/attention.hpp"
#include "bidirectional_encoder.hpp"

namespace attn::models {

struct BahdanauConfig {
  std::size_t src_vocab = 0, tgt_vocab = 0;  // vocabulary sizes (<pad> = 0 included)
  std::size_t embed_dim = 32;
  std::size_t encoder_dim = 32;  // per direction: the states h_j have 2 * encoder_dim values
  std::size_t decoder_dim = 64;
  std::size_t attention_dim = 64;  // the size of the MLP's hidden layer (W_1, W_2: [A, .])
  bool coverage = false;           // Tu et al.'s coverage vector in the score (adds V [A])
};

class BahdanauSeq2Seq : public BidirectionalEncoderSeq2Seq {
 public:
  explicit BahdanauSeq2Seq(const BahdanauConfig& config);

  Tensor forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) override;
  // state.tensors: "memory" h_j [B, S, 2 * encoder_dim], "keys" W_2 h_j [B, S, A],
  // decoder state "h", "c" [B, decoder_dim], with config.coverage "coverage" C_tj [B, S].
  // step() sets state.attention["attention"] [B, S].
  DecoderState start(const Index& src, const std::vector<std::size_t>& src_lengths) override;
  Tensor step(DecoderState& state, const Index& prefix) override;
  std::string extra_repr() const override;

  BahdanauConfig config;
  // src_embed, tgt_embed, encoder, init: bidirectional_encoder.hpp
  nn::Attention attention;             // additive score: query s_{t-1}, keys h_j
  nn::LSTMCell decoder;                // [y_{t-1}; c_t] -> s_t
  nn::Linear out;                      // [s_t; c_t; y_{t-1}] -> tgt_vocab
  Tensor coverage_weight;              // V [A], only with config.coverage (undefined otherwise)

 private:
  // One decoder step from the embedded y_{t-1} [B, E]: updates state, sets its
  // attention, and returns the output layer's input [s_t; c_t; y_{t-1}].
  Tensor decode(DecoderState& state, const Tensor& y_prev);
};

}  // namespace attn::models
