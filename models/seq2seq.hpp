// The interface every chapter's sequence-to-sequence model implements, so that
// one trainer, one greedy decoder and one beam search serve them all.
//
// Training (teacher forcing): forward(src, src_lengths, tgt_in) -> logits [B, T, V].
// Decoding, one token at a time:
//   DecoderState state = model.start(src, src_lengths);
//   loop: Tensor logits = model.step(state, prefix);  // prefix: tokens so far [B, t]
//         ...pick the next tokens, append them to prefix...
// After each step, state.attention holds that step's attention weights under
// names such as "attention" ([B, S]) or, for the Transformer, "decoder.0.cross"
// ([B, H, S]) — every layer and head — so heatmaps can be drawn for any decode.
#pragma once

#include "../core/ops.hpp"
#include "../core/tensor.hpp"
#include "../nn/module.hpp"

#include <map>
#include <string>
#include <vector>

namespace attn::models {

// What a decoder carries from one step to the next. Every tensor is batch-first
// ([B, ...]) so that beam search can reorder hypotheses with index_select on dim 0.
struct DecoderState {
  std::map<std::string, Tensor> tensors;      // recurrent state, encoder memory, ...
  std::vector<std::size_t> src_lengths;       // valid source length of each row
  std::map<std::string, Tensor> attention;    // this step's weights, filled by step()

  // Keeps rows `rows` (with repeats) of every tensor and length: beam search's reorder.
  void select_rows(const Index& rows);
};

// What greedy decoding and beam search need of a model: the next token's logits from a
// state. Seq2Seq has it, and so do models whose source is not token ids (LAS, on audio).
class IncrementalDecoder : public nn::Module {
 public:
  using nn::Module::Module;

  // Logits [B, V] for the token after `prefix` [B, t] (t >= 1, prefix[:, 0] = <bos>).
  // Recurrent models read only the last column; the Transformer reads it all.
  virtual Tensor step(DecoderState& state, const Index& prefix) = 0;

  // The name of the attention that a heatmap shows by default ("" if none).
  virtual std::string main_attention() const { return ""; }
};

class Seq2Seq : public IncrementalDecoder {
 public:
  using IncrementalDecoder::IncrementalDecoder;

  // Logits for every target position under teacher forcing. src [B, S] ids padded
  // with <pad>, tgt_in [B, T] = <bos> + target. Returns [B, T, V].
  virtual Tensor forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) = 0;

  // Encodes the source and returns the state before the first decoder step.
  virtual DecoderState start(const Index& src, const std::vector<std::size_t>& src_lengths) = 0;

  // The attention weights of the last forward(), per target step, under the same
  // names as DecoderState::attention, stacked over steps: "attention" -> [B, T, S].
  // Empty for models without attention.
  virtual std::map<std::string, Tensor> last_attention() const { return {}; }

 protected:
  // Teacher forcing through a recurrent decoder, the loop chapters 2 and 3 share:
  // for every t, decode_step(state, y_{t-1}, t) with y the embedded tgt_in [B, T, E]
  // returns that step's features [B, F] and sets state.attention["attention"] [B, S].
  // Returns the features [B, T, F]; `weights` gets the stacked weights [B, T, S].
  template <class DecodeStep>
  static Tensor teacher_forced(DecoderState& state, const Tensor& y, Tensor& weights, DecodeStep&& decode_step) {
    std::vector<Tensor> features, per_step;
    for (std::size_t t = 0; t < y.size(1); ++t) {
      features.push_back(decode_step(state, select(y, 1, static_cast<long>(t)), t));  // [B, F]
      per_step.push_back(state.attention.at("attention"));                             // [B, S]
    }
    weights = stack(per_step, 1);  // [B, T, S]
    return stack(features, 1);     // [B, T, F]
  }
};

}  // namespace attn::models
