// Convolutional attention as a translation model (Allamanis, Peng & Sutton 2016),
// with or without its copy head:
//
//   decoder   h_t = GRUCell(G y_{t-1}, h_{t-1}),  h_0 = tanh(W_0 mean_j E x_j)
//   attention a_t (and kappa_t, lambda_t with copy) from conv1d features of the
//             source embeddings E x_j gated by h_t (nn/attention/convolutional.hpp)
//   context   n_t = sum_j a_tj E x_j
//   generate  p_gen(y_t) = softmax(W_o [n_t; h_t] + b_o)   (the paper has n_t alone;
//             h_t lets the decoder know when to stop)
//   copy      p(y_t) = lambda_t p_gen(y_t) + (1 - lambda_t) sum_{j: x_j = y_t} kappa_tj
//
// Without copy, forward()/step() return logits. With copy they return log p(y)
// over the target vocabulary (a distribution already, so log_softmax leaves it
// as it is): each source token is copied as its target id, or as <unk> when the
// target vocabulary lacks it (copy_map). To emit those tokens themselves, use the
// extended vocabulary of a batch (extend_source) with forward_extended() and
// start_extended(): ids V, V + 1, ... are the batch's source-only tokens.
#pragma once

#include "../nn/attention/convolutional.hpp"
#include "../nn/embedding.hpp"
#include "../nn/linear.hpp"
#include "../nn/rnn_cell.hpp"
#include "../data/vocab.hpp"
#include "extended_source.hpp"
#include "seq2seq.hpp"

namespace attn::models {

struct ConvAttentionConfig {
  std::size_t src_vocab = 0, tgt_vocab = 0;  // vocabulary sizes (<pad> = 0 included)
  std::size_t embed_dim = 32;                // D: source and target embeddings
  std::size_t hidden_dim = 64;               // H: the GRU state and the gated features
  std::size_t conv_channels = 32;            // k1: channels of the first convolution
  std::size_t kernel1 = 5, kernel2 = 3, kernel3 = 3;  // window sizes w1, w2, w3
  bool copy = false;                         // the copy head (copy_attention)
};


class ConvAttentionSeq2Seq : public Seq2Seq, public CopyingModel {
 public:
  explicit ConvAttentionSeq2Seq(const ConvAttentionConfig& config);

  // Seq2Seq: logits [B, T, V] (no copy) or log p(y) [B, T, V] (copy, through copy_map).
  Tensor forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) override;
  // state.tensors: "embedded" [B, S, D], "features" [B, S, H], "h" [B, H], "copy_ids" [B, S]
  // (as numbers), "extended_vocab" [B]. step() sets state.attention["attention"]
  // (and "copy" with the copy head) [B, S], and with the copy head "copy_gate", lambda_t [B, 1].
  DecoderState start(const Index& src, const std::vector<std::size_t>& src_lengths) override;
  Tensor step(DecoderState& state, const Index& prefix) override;

  // Copy head only: log p(y) [B, T, extended_vocab] over the batch's extended vocabulary.
  // tgt_in may hold extended ids (>= V): they are read as <unk> by the decoder's input.
  Tensor forward_extended(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in,
                          const ExtendedSource& extended) override;
  DecoderState start_extended(const Index& src, const std::vector<std::size_t>& src_lengths,
                              const ExtendedSource& extended) override;
  bool copies() const override { return config.copy; }

  // Source id -> target id for copying in forward()/step(), from the two vocabularies
  // (<unk> where the target lacks the token). Defaults to the same id when both sizes agree.
  void set_copy_map(const data::Vocab& src_vocab, const data::Vocab& tgt_vocab) override;
  const Index& copy_map() const { return copy_map_; }

  std::map<std::string, Tensor> last_attention() const override;  // "attention" (and "copy") -> [B, T, S]
  Tensor last_copy_gate() const;  // lambda_t [B, T, 1] of the last forward() (copy head only)
  std::string main_attention() const override { return config.copy ? "copy" : "attention"; }
  std::string extra_repr() const override;

  ConvAttentionConfig config;
  nn::Embedding src_embed, tgt_embed;  // E and G, padding_idx = <pad>
  nn::Linear init;                     // W_0: mean source embedding -> h_0
  nn::GRUCell decoder;                 // G y_{t-1} -> h_t
  nn::ConvolutionalAttention attention;
  nn::Linear out;                      // W_o: [n_t; h_t] -> tgt_vocab

 private:
  DecoderState start_with(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& copy_ids,
                          std::size_t extended_vocab);
  // Runs the decoder over y_prev ids [B, T] from state's h; returns the output [B, T, V or V + n].
  Tensor decode(DecoderState& state, const Index& y_prev);
  Index copy_map_;                                  // [src_vocab]
  std::map<std::string, Tensor> last_attention_;    // of the last forward(), detached
};

}  // namespace attn::models
