// Listen, Attend and Spell (Chan, Jaitly, Le & Vinyals, ICASSP 2016; arXiv 2015): speech to characters.
//
// The listener turns log-mel frames x_1..x_T into fewer, higher-level states h_1..h_U;
// the speller writes the transcript one character at a time, attending over them.
//
//   listener  BLSTM over the frames                              [B, T, 2 Hl]
//             then `pyramid_layers` pyramidal BLSTMs, each        [B, T/2, 2 Hl], [B, T/4, 2 Hl], ...
//             reading pairs of steps (nn/pyramidal_lstm.hpp)      h: [B, U, 2 Hl], U = T / 2^layers
//   speller, at step i, from the previous character y_{i-1} and context c_{i-1}:
//   state     s_i = LSTM([embed(y_{i-1}); c_{i-1}], s_{i-1})     (a stack of LSTM cells)
//   scores    e_iu = phi(s_i) . psi(h_u)                         (phi, psi: MLPs; psi(h) once per utterance)
//   weights   a_iu = softmax_u(e_iu)                             (padding never attended)
//   context   c_i  = sum_u a_iu h_u
//   output    p(y_i | x, y_<i) = softmax(MLP([s_i; c_i]))        (the paper's CharacterDistribution)
//
// Unlike Bahdanau's decoder (chapter 2), the speller attends AFTER its LSTM step, with s_i,
// and feeds c_i into the next step: Luong's order, and like his input feeding (chapter 3), except
// that the raw context enters the next step, not the attentional vector tanh(W_c [c; s]).
//
//   LASConfig cfg;
//   cfg.vocab = data::speech_vocab().size();
//   ListenAttendSpell model(cfg);
//   Tensor logits = model.forward(features, lengths, tgt_in);   // [B, T, 40], {T_b}, [B, L] -> [B, L, V]
//   model.last_attention().at("attention");                     // a_iu: [B, L, U]
//   auto best = greedy_decode(model, model.start(features, lengths));   // decode/decode.hpp
//
// With sampling_probability p > 0, training feeds the speller, at each step after the
// first, a character sampled from its own previous output distribution instead of the
// true one with probability p (the paper: 10%), so that it learns to go on after its own
// mistakes, as it must when it transcribes.
#pragma once

#include "../core/random.hpp"
#include "../nn/attention/attention.hpp"
#include "../nn/embedding.hpp"
#include "../nn/mlp.hpp"
#include "../nn/module_list.hpp"
#include "../nn/pyramidal_lstm.hpp"
#include "../nn/rnn.hpp"
#include "../nn/rnn_cell.hpp"
#include "seq2seq.hpp"

#include <map>
#include <string>
#include <vector>

namespace attn::models {

struct LASConfig {
  std::size_t n_mels = 40;          // features per frame
  std::size_t vocab = 0;            // characters, <pad> = 0 and the other specials included
  std::size_t listener_dim = 64;    // Hl, per direction: h_u has 2 Hl values
  std::size_t pyramid_layers = 3;   // each halves the steps: U = ceil(T / 2^layers)
  std::size_t embed_dim = 32;       // the previous character's embedding (the paper: one-hot)
  std::size_t speller_dim = 128;    // Hs: s_i
  std::size_t speller_layers = 1;   // LSTM cells stacked in the speller (the paper: 2)
  std::size_t attention_dim = 64;   // A: phi(s_i) and psi(h_u) are [A]; their hidden layer too
  double sampling_probability = 0.0;  // training only: feed a sampled previous character (the paper: 0.1)
};

// What the listener made of a batch of utterances.
struct Listened {
  Tensor memory;                                  // h_u [B, U, 2 Hl]
  std::vector<std::size_t> lengths;               // valid states of each utterance: ceil(T_b / 2^layers)
  std::vector<std::vector<std::size_t>> layer_lengths;  // the valid steps after each layer, frames first
};

class ListenAttendSpell : public IncrementalDecoder {
 public:
  // Weights drawn from default_generator(), as every layer; so are the sampled characters.
  explicit ListenAttendSpell(const LASConfig& config);

  // features [B, T, n_mels] (zero-padded), lengths {T_b} (each 1..T), tgt_in [B, L] =
  // <bos> + characters (teacher forcing). Returns logits [B, L, V].
  Tensor forward(const Tensor& features, const std::vector<std::size_t>& lengths, const Index& tgt_in);

  Listened listen(const Tensor& features, const std::vector<std::size_t>& lengths) const;

  // Decoding one character at a time (greedy_decode / beam_search of decode/decode.hpp).
  // start() fills state.tensors: "memory" h_u [B, U, 2 Hl], "keys" psi(h_u) [B, U, A],
  // "context" c_0 = 0 [B, 2 Hl], and "h<l>", "c<l>" [B, Hs] for each speller layer l;
  // state.src_lengths holds the U_b. step() sets state.attention["attention"] [B, U].
  DecoderState start(const Tensor& features, const std::vector<std::size_t>& lengths);
  Tensor step(DecoderState& state, const Index& prefix) override;

  // "attention" -> a_iu [B, L, U] of the last forward(), detached.
  std::map<std::string, Tensor> last_attention() const { return {{"attention", last_attention_}}; }
  std::string main_attention() const override { return "attention"; }
  std::string extra_repr() const override;

  LASConfig config;
  nn::LSTM listener;                              // the bottom BLSTM over frames, batch-first
  nn::ModuleList<nn::PyramidalLSTM> pyramid;      // each halves the steps
  nn::Embedding embed;                            // characters, padding_idx = <pad>
  nn::ModuleList<nn::LSTMCell> speller;           // [embed(y_{i-1}); c_{i-1}] -> s_i
  nn::MLP phi, psi;                               // s_i -> [A], h_u -> [A]: the dot product's two sides
  nn::Attention attention;                        // dot score of phi(s_i) and psi(h_u), values h_u
  nn::MLP distribution;                           // [s_i; c_i] -> logits [V]

 private:
  // One speller step from the embedded y_{i-1} [B, E]: updates the state, sets its
  // attention and returns [s_i; c_i] [B, Hs + 2 Hl].
  Tensor spell(DecoderState& state, const Tensor& y_prev);
  void check_features(const char* op, const Tensor& features, const std::vector<std::size_t>& lengths) const;
  Tensor last_attention_;
  Generator* gen_;
};

}  // namespace attn::models
