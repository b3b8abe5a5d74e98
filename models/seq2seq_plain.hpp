// Chapter 1: an encoder-decoder WITHOUT attention, and its bottleneck.
//
//   encoder  h_j = LSTM(x_j, h_{j-1}), h_0 = 0            over the source embeddings
//   context  c = h_m                                      the last state: ONE vector for the whole source
//   decoder  s_t = LSTM([y_{t-1}; c], s_{t-1}), s_0 = (h_m, its cell state)
//   output   p(y_t | y_<t, x) = softmax(W_out s_t + b_out)
//
//   PlainSeq2SeqConfig cfg;
//   cfg.src_vocab = cfg.tgt_vocab = vocab.size();
//   PlainSeq2Seq model(cfg);
//   Tensor logits = model.forward(src, src_lengths, tgt_in);   // [B, T, V]
//
// Whatever the source length, everything the decoder knows about it has to fit
// in c (hidden_dim numbers): accuracy falls as sources get longer. Chapter 2
// removes the bottleneck with attention.
#pragma once

#include "../nn/embedding.hpp"
#include "../nn/linear.hpp"
#include "../nn/rnn.hpp"
#include "seq2seq.hpp"

namespace attn::models {

struct PlainSeq2SeqConfig {
  std::size_t src_vocab = 0, tgt_vocab = 0;  // vocabulary sizes (<pad> = 0 included)
  std::size_t embed_dim = 32;
  std::size_t hidden_dim = 64;  // of encoder and decoder: the size of the context c
};

class PlainSeq2Seq : public Seq2Seq {
 public:
  explicit PlainSeq2Seq(const PlainSeq2SeqConfig& config);

  Tensor forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) override;
  // state.tensors: "context" c [B, H], decoder state "h", "c" [B, H]. No attention.
  DecoderState start(const Index& src, const std::vector<std::size_t>& src_lengths) override;
  Tensor step(DecoderState& state, const Index& prefix) override;
  std::string extra_repr() const override;

  PlainSeq2SeqConfig config;
  nn::Embedding src_embed, tgt_embed;  // padding_idx = <pad>
  nn::LSTM encoder;                    // embed_dim -> hidden_dim, batch-first
  nn::LSTM decoder;                    // embed_dim + hidden_dim -> hidden_dim, batch-first
  nn::Linear out;                      // hidden_dim -> tgt_vocab
};

}  // namespace attn::models
