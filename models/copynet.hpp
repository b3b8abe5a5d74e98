// Chapter 21: CopyNet (Gu, Lu, Li & Li 2016, "Incorporating copying mechanism in sequence-to-sequence
// learning"): a generate mode and a copy mode that share one softmax, on chapter 2's encoder and
// attention.
//
//   encoder   h_j = [h_j(forward); h_j(backward)],  s_0 = tanh(W_init [h_m(forward); h_1(backward)])
//   at step t, from the previous state s_{t-1} and the word y_{t-1} just written:
//   attentive read   c_t = sum_j a_tj h_j,  a_tj = softmax_j(v^T tanh(W_1 s_{t-1} + W_2 h_j))   (chapter 2)
//   selective read   zeta_t = sum_j rho_tj h_j,  rho_tj = softmax over {j : x_j = y_{t-1}} of psi_c,t-1(x_j)
//                    (0 where y_{t-1} is not in the source, as at the first step; a generated word that
//                    the source holds is read too: the match is by id)
//   decoder          s_t = LSTMCell([e(y_{t-1}); zeta_t; c_t], s_{t-1})
//   generate scores  psi_g(v) = W_o [s_t; c_t; e(y_{t-1})] + b_o  one per target word v   [B, V]
//                    (chapter 2's output layer: with copy = false the model is chapter 2's)
//   copy scores      psi_c(x_j) = tanh(W_c h_j)^T s_t              one per source position [B, S]
//   one softmax      p(y_t) = ( [y_t < V] e^{psi_g(y_t)} + sum_{j: x_j = y_t} e^{psi_c(x_j)} ) / Z,
//                    Z = sum_v e^{psi_g(v)} + sum_j e^{psi_c(x_j)}   (padding never copied)
//
// rho_tj is the paper's p(x_j, c | s_{t-1}) / K over the positions that hold y_{t-1}: the copy
// mode's own weights of the step before, renormalised, which is the softmax above since Z cancels.
// A word the source holds twice is copied from both places: its probabilities add up.
//
// forward()/step() return log p(y) over the target vocabulary [B, T, V] (already normalised, so a
// log_softmax leaves it as it is and every trainer and decoder takes it as logits): a source token is
// copied as its target id, or as <unk> when the target vocabulary lacks it (set_copy_map()). Over
// the extended vocabulary of a batch (models/extended_source.hpp), forward_extended()/start_extended()
// let it write those tokens themselves, ids V, V + 1, ...; the decoder reads them back as <unk>.
// An id with no probability in a row (a source-only id of another sentence) gets log(FLT_MIN), about
// -87.3, not -infinity, so that its gradient stays finite (models::extended_batch never makes it a
// target: a target word that only another sentence holds is <unk>).
//
// config.copy = false leaves out the copy mode and the selective read: the same model with its
// generate mode alone, p(y_t) = softmax(psi_g), to measure what copying adds. config.selective_read
// = false keeps the copy mode but feeds [e(y_{t-1}); c_t] (to measure what the selective read adds).
//
// Where this differs from the paper:
// - an LSTM decoder (the paper's is a GRU, as in Bahdanau et al.); s_0 from both directions'
//   summaries (chapter 2's encoder);
// - the generate scores read chapter 2's output layer, W_o [s_t; c_t; e(y_{t-1})] + b_o, where the
//   paper has W_o s_t: so the copy mode is measured against chapter 2's model, not a weaker one (with
//   W_o s_t alone the generate mode trails chapter 2's model by far at this course's budgets);
// - Z has a generate term for every id of V, <pad> and <bos> included, and a copy term per source
//   position, where the paper sums over the set of source words: a word held twice has two slots;
// - the paper's UNK term (generate <unk> for a target word in neither V nor the source) is the <unk>
//   id of V, which models::extended_batch gives exactly those words. In forward() (no extended
//   vocabulary) every source word V lacks is <unk>: copying <unk>, and the selective read after it,
//   cover all of them at once;
// - the attention weights in last_attention() are detached (chapter 2's stay in the graph for an
//   alignment loss); nothing here trains them that way.
// Cost: the mixture builds one_hot(copy_ids) [B, S, V + n] at every forward and every decoding step
// (beam search: B times the beam), which grows with the vocabulary; a scatter-add would not.
//
// last_attention(): "attention" a_tj and "copy" p(x_j, c) = e^{psi_c(x_j)} / Z (the copy mode's
// share, by position: each row sums to the copy mode's probability mass) [B, T, S]; with the selective
// read also "selective_read" rho_tj. step() sets the same names [B, S] in state.attention.
//
//   CopyNetConfig cfg;
//   cfg.src_vocab = src_vocab.size(), cfg.tgt_vocab = tgt_vocab.size();
//   CopyNetSeq2Seq model(cfg);
//   model.set_copy_map(src_vocab, tgt_vocab);
//   ExtendedSource ext = extend_source(source_tokens, tgt_vocab);
//   Tensor logp = model.forward_extended(src, src_lengths, tgt_in, ext);  // [B, T, V + n]
#pragma once

#include "../nn/attention/attention.hpp"
#include "../nn/linear.hpp"
#include "../nn/rnn_cell.hpp"
#include "bidirectional_encoder.hpp"
#include "extended_source.hpp"

#include <memory>

namespace attn::models {

struct CopyNetConfig {
  std::size_t src_vocab = 0, tgt_vocab = 0;  // vocabulary sizes (<pad> = 0 included)
  std::size_t embed_dim = 32;
  std::size_t encoder_dim = 32;    // per direction: h_j has 2 * encoder_dim values
  std::size_t decoder_dim = 64;    // s_t, and the copy scores' inner product
  std::size_t attention_dim = 64;  // the attentive read's MLP (W_1, W_2: [A, .])
  bool copy = true;                // the copy mode (false: the generate mode alone)
  bool selective_read = true;      // zeta_t in the decoder's input (needs copy)
};

class CopyNetSeq2Seq : public BidirectionalEncoderSeq2Seq, public CopyingModel {
 public:
  explicit CopyNetSeq2Seq(const CopyNetConfig& config);

  // log p(y) [B, T, V] (copy = false: the generate mode's log_softmax).
  Tensor forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) override;
  // state.tensors: "memory" h_j [B, S, 2 He], "keys" W_2 h_j [B, S, A], "h", "c" [B, Hd]; with copy
  // "copy_keys" tanh(W_c h_j) [B, S, Hd], "copy_ids" [B, S] (as numbers), "extended_vocab" [B], and
  // "copy_scores" psi_c of the step before [B, S] (zeros at the start).
  DecoderState start(const Index& src, const std::vector<std::size_t>& src_lengths) override;
  // log p(y) [B, V] (or [B, V + n] after start_extended()).
  Tensor step(DecoderState& state, const Index& prefix) override;

  // CopyingModel (ValueError for the extended vocabulary without copy).
  void set_copy_map(const data::Vocab& src_vocab, const data::Vocab& tgt_vocab) override;
  Tensor forward_extended(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in,
                          const ExtendedSource& extended) override;
  DecoderState start_extended(const Index& src, const std::vector<std::size_t>& src_lengths,
                              const ExtendedSource& extended) override;
  bool copies() const override { return config.copy; }
  const Index& copy_map() const { return copy_map_; }

  std::map<std::string, Tensor> last_attention() const override;  // "attention", "copy" (, "selective_read") [B, T, S]
  std::string extra_repr() const override;

  CopyNetConfig config;
  // src_embed, tgt_embed, encoder, init: bidirectional_encoder.hpp
  nn::Attention attention;  // the attentive read: additive score, query s_{t-1}, keys h_j
  nn::LSTMCell decoder;     // [e(y_{t-1}); zeta_t; c_t] -> s_t
  nn::Linear generate;      // W_o, b_o: [s_t; c_t; e(y_{t-1})] -> psi_g [V]
  std::unique_ptr<nn::Linear> copy_key;  // W_c: h_j -> [Hd], no bias (only with copy)

 private:
  DecoderState start_with(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& copy_ids,
                          std::size_t extended_vocab);
  // One decoder step from y_{t-1} (ids, extended ones included) [B]: updates state, sets its
  // attention, returns the log-probabilities of the one softmax's slots [B, V + S] (copy = false: [B, V]).
  Tensor decode(DecoderState& state, const Index& y_prev);
  // decode() at every step of tgt_in [B, T] under teacher forcing, last_attention() kept: [B, T, V + S] (or [B, T, V]).
  Tensor teacher_forced_slots(DecoderState& state, const Index& tgt_in);
  Index copy_map_;                                       // [src_vocab]
  std::map<std::string, Tensor> last_weights_;           // "copy", "selective_read" of the last forward() [B, T, S]
};

}  // namespace attn::models
