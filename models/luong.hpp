// Chapter 3: Luong (multiplicative) attention (Luong, Pham & Manning, 2015).
//
//   encoder   h_j = LSTM(x_j, h_{j-1})                     unidirectional
//   decoder   s_t = LSTMCell([y_{t-1}; ~s_{t-1}], s_{t-1}) input feeding: the previous
//                                                         attentional state goes back in (~s_0 = 0)
//   at step t, AFTER the decoder step, from the current state s_t:
//   scores    dot      e_tj = s_t . h_j
//             general  e_tj = s_t^T W h_j
//             concat   e_tj = v^T tanh(W [s_t; h_j])
//   weights   a_tj = softmax_j(e_tj)                       global: over the whole source
//             local-m / local-p: only the window [p_t - D, p_t + D] is scored; local-p
//             (and local-m with local_m_gaussian) times a Gaussian
//             exp(-(j - p_t)^2 / (2 sigma^2)), sigma = D / 2 (nn/attention/local.hpp)
//   context   c_t = sum_j a_tj h_j
//   attentional state  ~s_t = tanh(W_c [c_t; s_t])
//   output    p(y_t | y_<t, x) = softmax(W_s ~s_t + b_s)
//
//   LuongConfig cfg;
//   cfg.src_vocab = cfg.tgt_vocab = vocab.size();
//   cfg.score = LuongScore::General;
//   LuongSeq2Seq model(cfg);
//   Tensor logits = model.forward(src, src_lengths, tgt_in);   // [B, T, V]
//   model.last_attention().at("attention");                     // a_tj: [B, T, S]
#pragma once

#include "../nn/attention/attention.hpp"
#include "../nn/attention/local.hpp"
#include "../nn/embedding.hpp"
#include "../nn/linear.hpp"
#include "../nn/rnn.hpp"
#include "seq2seq.hpp"

#include <memory>

namespace attn::models {

enum class LuongScore { Dot, General, Concat };
enum class LuongAttention { Global, LocalM, LocalP };

// "dot", "general", "concat" / "global", "local-m", "local-p", and back (ValueError if unknown).
const char* luong_score_name(LuongScore score);
LuongScore luong_score_from_name(const std::string& name);
const char* luong_attention_name(LuongAttention attention);
LuongAttention luong_attention_from_name(const std::string& name);

struct LuongConfig {
  std::size_t src_vocab = 0, tgt_vocab = 0;  // vocabulary sizes (<pad> = 0 included)
  std::size_t embed_dim = 32;
  std::size_t hidden_dim = 64;     // encoder and decoder (dot needs them equal)
  LuongScore score = LuongScore::General;
  LuongAttention attention = LuongAttention::Global;
  std::size_t window = 2;          // D, local attention only
  bool local_m_gaussian = false;   // local-m times local-p's Gaussian (the paper's local-m has none)
  std::size_t attention_dim = 64;  // concat score's W and local-p's W_p: [A, .]
  bool input_feeding = true;
};

class LuongSeq2Seq : public Seq2Seq {
 public:
  explicit LuongSeq2Seq(const LuongConfig& config);

  Tensor forward(const Index& src, const std::vector<std::size_t>& src_lengths, const Index& tgt_in) override;
  // state.tensors: "memory" h_j [B, S, H], "keys" (the score's precomputed keys),
  // decoder state "h", "c" [B, H], "feed" ~s_{t-1} [B, H].
  // step() sets state.attention["attention"] [B, S].
  DecoderState start(const Index& src, const std::vector<std::size_t>& src_lengths) override;
  Tensor step(DecoderState& state, const Index& prefix) override;
  std::map<std::string, Tensor> last_attention() const override;  // "attention" -> [B, T, S]
  std::string main_attention() const override { return "attention"; }
  std::string extra_repr() const override;

  LuongConfig config;
  nn::Embedding src_embed, tgt_embed;  // padding_idx = <pad>
  nn::LSTM encoder;                    // batch-first
  nn::LSTMCell decoder;                // [y_{t-1}; ~s_{t-1}] -> s_t
  std::unique_ptr<nn::Attention> global_attention;      // set when config.attention == Global
  std::unique_ptr<nn::LocalAttention> local_attention;  // set otherwise
  nn::Linear combine;                  // W_c: [c_t; s_t] -> ~s_t (no bias, as in the paper)
  nn::Linear out;                      // W_s: ~s_t -> tgt_vocab

 private:
  // Decoder step t from the embedded y_{t-1} [B, E]: updates state, sets its
  // attention, and returns ~s_t [B, H].
  Tensor decode(DecoderState& state, const Tensor& y_prev, std::size_t t);
  Tensor last_attention_;  // [B, T, S] of the last forward(), detached
};

}  // namespace attn::models
