// A language model that can point at its own earlier words: the pointer sentinel mixture of
// Merity, Xiong, Bradbury & Socher (2016), on an LSTM. Beside it, with pointer = false, the plain
// LSTM language model it is measured against (the same layers, the softmax alone).
//
//   states    h_t = LSTM(E x_t, h_{t-1}),  h_0 = 0                          [B, T, H]
//   vocabulary  p_vocab(w | x_1..x_t) = softmax(U h_t + b)[w]                [B, T, V]
//   pointer   q_t = tanh(W h_t + b_q)                                         [B, T, H]
//             z_tj = q_t . h_j  for the last L words j = t-L+1 .. t           [B, T, T]
//             z_t,sentinel = q_t . s          (s a learned vector)            [B, T, 1]
//             [a_t ; g_t] = softmax([z_t ; z_t,sentinel])  over L + 1 slots
//   mixture   p(w | x_1..x_t) = g_t p_vocab(w) + sum_{j in window, x_j = w} a_tj
//
// The pointer at step t points at words already read (x_j, j <= t) and predicts x_{t+1}; the
// sentinel's weight g_t is what the pointer leaves to the softmax, so the mixture sums to 1 with
// no further normalising. The loss adds the paper's term for the pointer,
//   -log p(y_t) - log(g_t + sum_{j in window, x_j = y_t} a_tj),
// which rewards putting the weight either on copies of the right word or on the sentinel. Every
// probability is computed from log weights (one log_softmax over the window and the sentinel, then
// logsumexp over the copies), so a weight that rounds to 0 in float32 leaves log p finite.
//
// Where it departs from the paper: each batch row is read from a zero state and its pointer sees only
// that row's earlier words, so step t's window is min(L, t + 1) words (the paper carries the state
// and the last L states across segments); one LSTM layer, no dropout; the sentinel starts uniform in
// +-1/sqrt(H). Ids are compared as they are, so an earlier <unk> is a copy of a target <unk>.
//
//   PointerSentinelConfig cfg;
//   cfg.vocab = vocab.size();
//   PointerSentinelLM model(cfg);
//   LanguageModelOutput out = model.forward(batch.inputs, batch.targets);   // [B, T] each
//   Tensor loss = model.loss(out, batch.targets);   // mean over the targets that are not <pad>
//   loss.backward();
#pragma once

#include "../nn/embedding.hpp"
#include "../nn/linear.hpp"
#include "../nn/module.hpp"
#include "../nn/rnn.hpp"

namespace attn::models {

struct PointerSentinelConfig {
  std::size_t vocab = 0;         // V: word ids, <pad> = 0 included
  std::size_t embed_dim = 64;    // E
  std::size_t hidden_dim = 128;  // H, of the LSTM, the query and the sentinel
  std::size_t window = 100;      // L: the pointer reads words t-L+1 .. t (the paper: 100, across segments)
  bool pointer = true;           // false: the plain LSTM language model, softmax only
  bool pointer_loss = true;      // the paper's extra term -log(g_t + pointer mass on y_t)
};

// What forward() gives for a batch of inputs [B, T] and their targets [B, T] (<pad> = 0 ignored).
struct LanguageModelOutput {
  Tensor log_prob;      // [B, T] log p(y_t | x_1..x_t); 0 where the target is <pad>
  Tensor gate;          // [B, T] g_t, the sentinel's weight: the softmax's share (1 without pointer;
                        //        at <pad> targets it is the weight at a padded step, meaningless)
  Tensor pointer_mass;  // [B, T] sum of a_tj over the window's copies of y_t (0 without pointer)
  Tensor pointer;       // [B, T, T] a_tj, 0 outside each step's window; undefined without pointer
  Tensor log_gate_plus_mass;  // [B, T] log(g_t + pointer_mass), for the loss's second term (0 without pointer)
};

class PointerSentinelLM : public nn::Module {
 public:
  // Weights drawn from default_generator(), as every layer.
  explicit PointerSentinelLM(const PointerSentinelConfig& config);

  // ShapeError unless inputs and targets are both [B, T] with B, T >= 1; ValueError for an id
  // outside 0 .. vocab - 1.
  LanguageModelOutput forward(const Index& inputs, const Index& targets);
  // The training loss: the mean over the targets that are not <pad> of -log p(y_t), plus the mean
  // of -log(g_t + pointer_mass) with the pointer and pointer_loss. 0-dim.
  Tensor loss(const LanguageModelOutput& out, const Index& targets) const;
  // -log p(y_t) summed over the targets that are not <pad> (no gradient), and how many there are:
  // perplexity = exp(sum / count) over a whole set.
  static double nll_sum(const LanguageModelOutput& out, const Index& targets, std::size_t* count = nullptr);

  // The whole next-word distribution at every step, p(w | x_1..x_t): [B, T, V], each row summing
  // to 1 (for a few sentences: it is B * T * V numbers). Rows past a chunk's end read its padding.
  Tensor next_word_probabilities(const Index& inputs);

  std::string extra_repr() const override;

  PointerSentinelConfig config;
  nn::Embedding embedding;  // E [V, E_dim], row 0 (<pad>) zero
  nn::LSTM lstm;            // E_dim -> H
  nn::Linear out;           // U, b: H -> V
  nn::Linear query;         // W, b_q: H -> H; drawn in both models, a parameter of the pointer's only
  Tensor sentinel;          // s [H] (pointer only)

 private:
  struct Parts {
    Tensor logits;  // [B, T, V]
    Tensor log_w;   // [B, T, T + 1] log [a_t ; g_t]: the window's slots, then the sentinel (pointer only)
  };
  Parts run(const Index& inputs);
};

}  // namespace attn::models
