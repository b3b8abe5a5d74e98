// Chapter 17: one translation from several sources (Zoph & Knight 2016, "Multi-Source Neural
// Translation"). English and German in, French out: where the English is ambiguous, the
// German may not be, and the decoder reads both.
//
//   encoders   h^k_j = LSTM_k(x^k_j)                  one unidirectional LSTM per source k = 1..K
//   start      (s_0, c_0) = combine((h^1_m, c^1_m), ..., (h^K_m, c^K_m))
//              basic or child-sum (nn/state_combiner.hpp)
//   decoder    s_t = LSTMCell([y_{t-1}; ~s_{t-1}], s_{t-1})   input feeding, ~s_0 = 0
//   attention  separate (the paper's combination): one attention per source, general score
//                a^k_tj = softmax_j(s_t^T W_k h^k_j),  c^k_t = sum_j a^k_tj h^k_j
//                ~s_t = tanh(W_c [c^1_t; ...; c^K_t; s_t])
//              The paper writes [s_t; c^1_t; c^2_t], the same model up to the order of W_c's
//              columns (kept as chapter 3's [c_t; s_t]; the share below reads W_c's column
//              block k as W_c^k), and uses local-p attention where this one is global.
//              flat (simpler): ONE softmax over the states of all sources together
//                a_tj over j in [h^1; ...; h^K],  c_t = sum_j a_tj h_j,  ~s_t = tanh(W_c [c_t; s_t])
//   output     p(y_t | y_<t, x^1..x^K) = softmax(W_s ~s_t + b_s)
//
// With K = 1 and either attention this is chapter 3's Luong model (global, general, input
// feeding), except that s_0 comes through the combiner.
//
// The sources travel PACKED in one row of token ids, x^1 <sep> x^2 (data/multi_source.hpp),
// so that the course's trainer, greedy decoder, beam search and BLEU serve this model as
// they serve every Seq2Seq; start() splits the row at its <sep> tokens first thing.
//
//   MultiSourceConfig cfg;
//   cfg.sources = 2;
//   cfg.src_vocab = packed_vocab.size();   // both languages' words and "<sep>"
//   cfg.tgt_vocab = fr_vocab.size();
//   cfg.sep_id = packed_vocab.id("<sep>");
//   MultiSourceSeq2Seq model(cfg);
//   Tensor logits = model.forward(src, src_lengths, tgt_in);   // src [B, S]: x^1 <sep> x^2
//   model.last_attention().at("source.1");                      // a^2_tj: [B, T, S_2]
//   model.last_attention().at("share");                         // [B, T, K]: each source's part
#pragma once

#include "../nn/attention/attention.hpp"
#include "../nn/embedding.hpp"
#include "../nn/linear.hpp"
#include "../nn/module_list.hpp"
#include "../nn/rnn.hpp"
#include "../nn/state_combiner.hpp"
#include "seq2seq.hpp"

#include <memory>
#include <string>
#include <vector>

namespace attn::models {

enum class MultiSourceAttention { Separate, Flat };
enum class MultiSourceInit { Basic, ChildSum };

// "separate", "flat" / "basic", "child-sum", and back (ValueError if unknown).
const char* multi_source_attention_name(MultiSourceAttention attention);
MultiSourceAttention multi_source_attention_from_name(const std::string& name);
const char* multi_source_init_name(MultiSourceInit init);
MultiSourceInit multi_source_init_from_name(const std::string& name);

struct MultiSourceConfig {
  std::size_t sources = 2;                 // K
  std::size_t src_vocab = 0, tgt_vocab = 0;  // src: the packed vocabulary (every source's words, <sep>)
  std::int64_t sep_id = -1;                // the id of "<sep>" in the packed vocabulary (K > 1)
  std::size_t embed_dim = 64;
  std::size_t hidden_dim = 128;            // every encoder and the decoder
  MultiSourceAttention attention = MultiSourceAttention::Separate;
  MultiSourceInit init = MultiSourceInit::ChildSum;
};

// The K sources of packed rows: ids[k] [B, S_k] padded with <pad>, lengths[k] one per row.
struct SplitSources {
  std::vector<Index> ids;
  std::vector<std::vector<std::size_t>> lengths;
};
// Splits each row's first src_lengths[b] ids at its sep_id tokens. A row without exactly
// K - 1 separators, or with an empty source, is a ValueError naming the row.
SplitSources split_sources(const Index& src, const std::vector<std::size_t>& src_lengths, std::int64_t sep_id,
                           std::size_t sources);

class MultiSourceSeq2Seq : public Seq2Seq {
 public:
  explicit MultiSourceSeq2Seq(const MultiSourceConfig& config);

  Tensor forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) override;
  // state.tensors: always "valid.k" [B, S_k] (1 on source k's words) and the decoder's "h",
  // "c", "feed" [B, H]; separate: per source k "memory.k" h^k [B, S_k, H] and "keys.k" W_k h^k;
  // flat: "memory" and "keys" over all sources [B, S_1 + ... + S_K, H].
  // state.src_lengths: the first source's lengths, those of main_attention() (beam search's
  // coverage penalty and alignment scores read the two together).
  // step() sets state.attention "source.k" [B, S_k] (a flat softmax's slice for source k)
  // and "share" [B, K], how much of ~s_t each source gave, each row summing to 1:
  //   flat:     the attention weight on source k's states, sum_{j in source k} a_tj
  //   separate: |W_c^k c^k_t| / sum_k' |W_c^k' c^k'_t|, with W_c^k the columns of W_c that read
  //             c^k_t: how far each source's context moves the attentional state (before tanh)
  // Both are read off the weights of a step; neither is trained.
  DecoderState start(const Index& src, const std::vector<std::size_t>& src_lengths) override;
  Tensor step(DecoderState& state, const Index& prefix) override;
  std::map<std::string, Tensor> last_attention() const override;  // "source.k" [B, T, S_k], "share" [B, T, K]
  std::string main_attention() const override { return "source.0"; }
  std::string extra_repr() const override;

  MultiSourceConfig config;
  nn::Embedding src_embed, tgt_embed;          // one table for every source's words (the packed vocabulary)
  nn::ModuleList<nn::LSTM> encoders;           // batch-first, one per source
  std::unique_ptr<nn::StateCombiner> combiner;
  nn::ModuleList<nn::Attention> attentions;    // K (separate) or 1 (flat), general score
  nn::LSTMCell decoder;                        // [y_{t-1}; ~s_{t-1}] -> s_t
  nn::Linear combine;                          // W_c: [c^1; ...; c^K; s_t] (separate) or [c_t; s_t] (flat) -> ~s_t, no bias
  nn::Linear out;                              // W_s: ~s_t -> tgt_vocab

 private:
  Tensor decode(DecoderState& state, const Tensor& y_prev);  // ~s_t [B, H]
  std::map<std::string, Tensor> last_attention_;            // of the last forward(), detached
};

}  // namespace attn::models
