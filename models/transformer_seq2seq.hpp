// Chapter 8: the Transformer as a translation model (Vaswani et al., 2017).
//
//   x = dropout(src_embed(src) * sqrt(d_model) + PE)      source tokens -> vectors [B, S, D]
//   y = dropout(tgt_embed(tgt_in) * sqrt(d_model) + PE)   target tokens (shifted right) -> [B, T, D]
//   h = transformer(x, y)                                 nn::Transformer: N encoder + N decoder layers
//   logits = h W_out^T (+ b_out)                          [B, T, V]
//
// Masks, built here so callers never see them: the source padding (from
// src_lengths) is hidden from the encoder's self-attention and from every
// decoder layer's cross-attention; the causal mask hides later target steps
// from earlier ones. The causal mask also hides the target's padding (it comes
// after every real token), so no target padding mask is needed.
//
// Embeddings start from N(0, 1 / d_model), so that scaled by sqrt(d_model) they
// are of the size of the positional encodings. With tie_weights the output
// layer IS the target embedding (W_out = tgt_embed.weight, no bias; Press & Wolf 2017).
//
//   TransformerConfig cfg;                  // a small model; TransformerConfig::paper(V, V) is the base model
//   cfg.src_vocab = cfg.tgt_vocab = vocab.size();
//   TransformerSeq2Seq model(cfg);
//   Tensor logits = model.forward(src, src_lengths, tgt_in);   // [B, T, V]
//   model.last_attention().at("decoder.1.cross");               // [B, H, T, S]
//
// Decoding (greedy_decode, beam_search) calls start() once, then step() with the
// prefix so far: step() runs only the newest token through the decoder, against the
// keys and values of the earlier ones cached in the DecoderState (use_kv_cache), and
// the cross-attention's keys and values of the encoder's memory, made once.
#pragma once

#include "../nn/attention/positional.hpp"
#include "../nn/dropout.hpp"
#include "../nn/embedding.hpp"
#include "../nn/linear.hpp"
#include "../nn/transformer.hpp"
#include "seq2seq.hpp"

#include <memory>

namespace attn::models {

struct TransformerConfig {
  std::size_t src_vocab = 0, tgt_vocab = 0;  // vocabulary sizes (<pad> = 0 included)
  std::size_t d_model = 64;
  std::size_t nhead = 4;
  std::size_t num_encoder_layers = 2, num_decoder_layers = 2;
  std::size_t dim_feedforward = 128;
  double dropout = 0.1;                      // on embeddings and inside every layer
  nn::Activation activation = nn::Activation::ReLU;
  bool norm_first = false;                   // post-norm (the paper) or pre-norm
  bool learned_positions = false;            // sinusoidal (the paper) or one learned vector per position
  bool add_positions = true;                 // false: no encoding added to the embeddings (with rotary or ALiBi)
  // Positions inside every self-attention layer, the encoder's and the decoder's (chapter 15): rotary
  // embeddings of queries and keys, or ALiBi's distance penalties; None by default. Usually with
  // add_positions = false, so that the attention's positions are the only ones.
  nn::AttentionPosition attention_position = nn::AttentionPosition::None;
  std::size_t max_len = 512;                 // longest sequence the positional encoding covers
  bool tie_weights = false;                  // output layer = target embedding (needs nothing else)
  // Decoding fast (chapter 14). The decoder's key-value heads: 0 keeps one per head (nhead),
  // 1 is multi-query attention, a divisor of nhead in between grouped-query attention; it
  // applies to the decoder's self- and cross-attention (nn::Transformer's GroupedQuery).
  std::size_t num_kv_heads = 0;
  // A sliding window on the decoder's self-attention: position i sees positions i - window + 1
  // .. i only, and the cache keeps the last `window` (0: no window, the whole prefix).
  std::size_t window = 0;

  // The paper's base model: 6 + 6 layers, d_model 512, 8 heads, ff 2048, dropout 0.1.
  static TransformerConfig paper(std::size_t src_vocab, std::size_t tgt_vocab);
};

class TransformerSeq2Seq : public Seq2Seq {
 public:
  explicit TransformerSeq2Seq(const TransformerConfig& config, Generator& gen = default_generator());

  Tensor forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) override;
  // state.tensors["memory"]: the encoder's output [B, S, D].
  DecoderState start(const Index& src, const std::vector<std::size_t>& src_lengths) override;
  // Logits for the token after prefix [B, t]. With use_kv_cache, when prefix extends the prefix
  // of the previous call by one token (as greedy_decode and beam_search call it), only the new
  // token runs through the decoder, against the keys and values cached in `state`; otherwise
  // the whole prefix runs again and the cache starts over from it. Sets state.attention, for every
  // decoder layer l: "decoder.<l>.self" [B, H, t] (over the prefix) and
  // "decoder.<l>.cross" [B, H, S] (over the source): the new token's weights;
  // and "attention" [B, S]: the last layer's cross-attention averaged over heads. (With a
  // sliding window on the decoder's self-attention, the cached path's "decoder.<l>.self" covers
  // the window's positions only, the last min(t, window).)
  Tensor step(DecoderState& state, const Index& prefix) override;
  // Of the last forward(), per head: "encoder.<l>.self" [B, H, S, S],
  // "decoder.<l>.self" [B, H, T, T], "decoder.<l>.cross" [B, H, T, S]; and
  // "attention" [B, T, S], the head average of the last decoder layer's cross-attention.
  std::map<std::string, Tensor> last_attention() const override;
  // "attention": one [T, S] map per sentence, as the recurrent models give
  // (heatmaps, models::evaluate's alignment hit rate).
  std::string main_attention() const override;
  std::string extra_repr() const override;

  // The pieces of forward(), for notebooks: embed + position, encode, decode, project.
  Tensor embed_source(const Index& src);                                             // [B, S, D]
  Tensor embed_target(const Index& tgt, std::size_t offset = 0);                     // [B, T, D], positions from offset
  Tensor encode(const Index& src, const std::vector<std::size_t>& src_lengths);      // memory [B, S, D]
  Tensor decode(const Index& tgt, const Tensor& memory, const std::vector<std::size_t>& src_lengths);  // [B, T, D]
  Tensor project(const Tensor& h);                                                   // [..., D] -> [..., V]

  TransformerConfig config;
  nn::Embedding src_embed, tgt_embed;  // padding_idx = <pad>
  std::unique_ptr<nn::SinusoidalPositionalEncoding> sinusoidal;  // one of these two,
  std::unique_ptr<nn::LearnedPositionalEncoding> learned;        // shared by source and target
  nn::Dropout dropout;
  nn::Transformer transformer;
  std::unique_ptr<nn::Linear> out;  // d_model -> tgt_vocab; null when tie_weights
  // step() reuses each decoder layer's keys and values (nn::KVCache) instead of running the
  // whole prefix again: the same logits to rounding, a cost per token that no longer grows with
  // the square of the prefix. On by default; off, step() is the plain recomputation.
  bool use_kv_cache = true;

 private:
  Tensor add_positions(const Tensor& x, std::size_t offset = 0);
  Tensor step_cached(DecoderState& state, const Index& prefix);  // the new token only
  void fill_cache(DecoderState& state, const Index& prefix);     // the cache of a whole prefix
  std::string main_cross() const;  // "decoder.<last>.cross"
  std::map<std::string, Tensor> last_attention_;
};

}  // namespace attn::models
