// The half that chapters 2, 9 and 11's models share (Bahdanau et al. 2015, section 3.2):
// embedded source tokens read by a bidirectional LSTM, and the decoder's first
// state from the two directions' summaries.
//
//   encoder   h_j = [h_j(forward); h_j(backward)]                 [B, S, 2 * He]
//   start     s_0 = tanh(W_init [h_m(forward); h_1(backward)])     [B, Hd]
//
// BahdanauSeq2Seq and MonotonicSeq2Seq derive from it and add their attention,
// decoder and output layer; the modules keep their names ("src_embed",
// "tgt_embed", "encoder", "init"), so checkpoints read the same.
#pragma once

#include "../nn/embedding.hpp"
#include "../nn/linear.hpp"
#include "../nn/rnn.hpp"
#include "seq2seq.hpp"

#include <string>

namespace attn::models {

struct EncoderSizes {
  std::size_t src_vocab = 0, tgt_vocab = 0;  // vocabulary sizes (<pad> = 0 included)
  std::size_t embed_dim = 0;                 // E: source and target embeddings
  std::size_t encoder_dim = 0;               // He, per direction
  std::size_t decoder_dim = 0;               // Hd: s_t
};

class BidirectionalEncoderSeq2Seq : public Seq2Seq {
 public:
  // "attention" -> [B, T, S] of the last forward()
  std::map<std::string, Tensor> last_attention() const override;
  std::string main_attention() const override { return "attention"; }

  nn::Embedding src_embed, tgt_embed;  // padding_idx = <pad>
  nn::LSTM encoder;                    // bidirectional, batch-first
  nn::Linear init;                     // W_init: 2 * encoder_dim -> decoder_dim

 protected:
  // Checks the sizes (named after the model) and registers the four modules first.
  BidirectionalEncoderSeq2Seq(const std::string& name, const EncoderSizes& sizes);

  struct Encoded {
    Tensor memory;  // h_j  [B, S, 2 * He]
    Tensor start;   // s_0  [B, Hd]
  };
  Encoded encode(const Index& src, const std::vector<std::size_t>& src_lengths);

  Tensor last_attention_;  // [B, T, S] of the last forward(): Bahdanau keeps it in the graph, monotonic detaches it
};

}  // namespace attn::models
