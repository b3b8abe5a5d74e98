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
// With config.coverage_embedding = K (Mi et al. 2016, "Coverage embedding models for
// neural machine translation", their update by subtraction), every source token carries
// a coverage vector that starts as an embedding of the token and, each time a word is
// written, loses that word's embedding in proportion to the attention it got:
//   start     kappa_0j = E_kappa[x_j]                                      E_kappa: [src_vocab, K], "coverage_embed"
//   scores    e_tj = v^T tanh(W_1 s_{t-1} + W_2 h_j + U kappa_{t-1,j})     U: [A, K], "coverage_key"
//   update    kappa_tj = kappa_{t-1,j} - a_tj W_y y_t                      W_y: [K, E], "coverage_update"
// (kappa, not the paper's c, which is the context here.) y_t is known once step t+1 reads
// it, so the update runs there, before the score. State "coverage_embedding" [B, S, K]
// (kappa_{t-1} after the update), "previous_attention". Their update by a GRU, and the
// two combined, are not implemented.
//
// With config.markov (Cohn et al. 2016, "Incorporating structural alignment biases into
// an attentional neural translation model"), the score sees where the previous step
// attended, around j:
//   scores    e_tj = v^T tanh(W_1 s_{t-1} + W_2 h_j + W_3 psi_j(a_{t-1}))
//   psi_j(a_{t-1}) = [a_{t-1,j-1}; a_{t-1,j}; a_{t-1,j+1}]   (0 past either end, and before the first step)
//   W_3: [A, 3], "markov_weight"; state "previous_attention" a_{t-1} [B, S] (as above)
//
// With config.lexicon_bias (Arthur, Neubig & Nakamura 2016, "Incorporating discrete translation
// lexicons into neural machine translation", their bias method), a word-translation table
// p_lex(e | f) [src_vocab, tgt_vocab] (e.g. data::ibm_model1) read through the attention biases
// the output layer towards the translations of the source words attended:
//   lexicon   lex_t(e) = sum_j a_tj p_lex(e | x_j)                         [B, V]
//   output    p(y_t | y_<t, x) = softmax(W_out [s_t; c_t; y_{t-1}] + b_out + log(lex_t + eps))
// The table is the buffer "lexicon" (saved in checkpoints, not trained), set by set_lexicon();
// until then it is uniform, which shifts every logit alike and changes nothing. eps is
// config.lexicon_epsilon (the paper: 0.001). State "lexicon_rows" p_lex(. | x_j) [B, S, V].
// Where this differs from the paper: only the bias method (not their linear interpolation); the
// table from IBM model 1 (data::ibm_model1; the paper also tries GIZA++ and a hand-made lexicon);
// <unk> is a word like any other in the table, and a source word never seen in training keeps a
// uniform row; the bias is added to the logits once, as the paper's equation writes it (the
// authors' toolkit, lamtram, has further variants not followed here).
// Cost: the rows are gathered per sentence, B * S * V numbers beside the model (and the table,
// src_vocab * tgt_vocab, in every checkpoint). Without set_lexicon() the option changes nothing.
//
// last_attention()["attention"] stays in the autograd graph, so a loss on the weights
// (supervised attention, agreement: nn/attention/alignment_loss.hpp) trains the model.
// So it also keeps that forward's graph alive until the next forward; call forward under
// no_grad when only looking (decoding and evaluate do).
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
#include "../nn/embedding.hpp"
#include "../nn/linear.hpp"
#include "bidirectional_encoder.hpp"

#include <memory>

namespace attn::models {

struct BahdanauConfig {
  std::size_t src_vocab = 0, tgt_vocab = 0;  // vocabulary sizes (<pad> = 0 included)
  std::size_t embed_dim = 32;
  std::size_t encoder_dim = 32;  // per direction: the states h_j have 2 * encoder_dim values
  std::size_t decoder_dim = 64;
  std::size_t attention_dim = 64;  // the size of the MLP's hidden layer (W_1, W_2: [A, .])
  bool coverage = false;           // Tu et al.'s coverage vector in the score (adds V [A])
  std::size_t coverage_embedding = 0;  // Mi et al.'s coverage embeddings of this size K (0: none)
  bool markov = false;             // Cohn et al.'s Markov condition: a_{t-1} around j in the score
  bool lexicon_bias = false;       // Arthur et al.'s lexicon bias: log(sum_j a_tj p_lex(. | x_j) + eps) on the logits
  double lexicon_epsilon = 0.001;  // eps of the lexicon bias (> 0: a word the table never gives stays possible)
};

class BahdanauSeq2Seq : public BidirectionalEncoderSeq2Seq {
 public:
  explicit BahdanauSeq2Seq(const BahdanauConfig& config);

  Tensor forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) override;
  // state.tensors: "memory" h_j [B, S, 2 * encoder_dim], "keys" W_2 h_j [B, S, A],
  // decoder state "h", "c" [B, decoder_dim], with config.coverage "coverage" C_tj [B, S],
  // with config.coverage_embedding "coverage_embedding" [B, S, K] (after step t: kappa_{t-1},
  // spent by y_t at step t+1), with it or config.markov "previous_attention" a_t [B, S]
  // (zeros at the start).
  // With config.lexicon_bias "lexicon_rows" p_lex(. | x_j) [B, S, V].
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
  // Only with config.coverage_embedding (null otherwise):
  std::unique_ptr<nn::Embedding> coverage_embed;  // E_kappa: src_vocab -> K, the full coverage kappa_0j
  std::unique_ptr<nn::Linear> coverage_key;       // U: K -> A, into the score
  std::unique_ptr<nn::Linear> coverage_update;    // W_y: E -> K, what writing a word spends
  Tensor markov_weight;                           // W_3 [A, 3], only with config.markov
  Tensor lexicon;                                 // p_lex(e | f) [src_vocab, tgt_vocab], a buffer, only with config.lexicon_bias

  // The word-translation table of the lexicon bias, rows p_lex(. | f) [src_vocab, tgt_vocab] (each row a
  // distribution, or zeros). ValueError without config.lexicon_bias; ShapeError for another shape;
  // ValueError for a negative or non-finite entry, or a row summing past 1 (naming the row).
  void set_lexicon(const xt::xarray<double>& table);

 private:
  // One decoder step from the embedded y_{t-1} [B, E]: updates state, sets its
  // attention, and returns the output layer's input [s_t; c_t; y_{t-1}].
  Tensor decode(DecoderState& state, const Tensor& y_prev);
  // W_2 h_j plus the terms of the options that depend on j: [B, S, A].
  Tensor step_keys(const DecoderState& state) const;
  // kappa_{t-1} = kappa_{t-2} - a_{t-1} W_y y_{t-1}: the coverage embeddings after the word just read.
  void spend_coverage(DecoderState& state, const Tensor& y_prev) const;
};

}  // namespace attn::models
