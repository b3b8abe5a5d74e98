// Monotonic attention (Raffel et al. 2017, "Online and linear-time attention by
// enforcing monotonic alignments"). The decoder reads the source left to right:
// at output step i it starts where step i - 1 stopped, and at each source
// position j flips a coin with probability p_ij = sigmoid(e_ij): heads, it stops
// and attends to h_j alone; tails, it moves on to j + 1. It never goes back.
//
//   energy   e_ij = g v^T tanh(W1 s_{i-1} + W2 h_j + b) / ||v|| + r (Bahdanau's, normalised, offset r;
//                                                                the query is the state before step i)
//   choose   p_ij = sigmoid(e_ij + noise)                           (noise N(0, sigma^2) in training only)
//
// Training cannot flip coins (no gradient), so it uses the expected alignment
// alpha_ij = P(step i attends to j), from the recurrence (docs/ops/monotonic.md):
//
//   q_ij     = (1 - p_{i,j-1}) q_{i,j-1} + alpha_{i-1,j}     (q_{i,-1} = 0)
//   alpha_ij = p_ij q_ij                                      (alpha_{-1,j} = 1 if j = 0 else 0)
//   c_i      = sum_j alpha_ij v_j                              (rows sum to <= 1: "never stopped" is 0)
//
// Decoding flips no coins either: it stops at the first j (from the previous
// stop) with p_ij >= 0.5, i.e. e_ij >= 0 (Raffel et al.'s code stops at e > 0;
// the two differ only at e = 0 exactly), and attends to v_j, or to nothing
// (c_i = 0) if it reaches the end. Each step scores the positions from its start
// to its stop, and the next step scores that stop again, so a whole decode
// scores at most S + T pairs: linear in the source length S.
//
//   nn::MonotonicAttention attention(Dq, Dk, 32);
//   auto [context, weights] = attention(s, h, h, lengths);  // soft: [B, Tq, Dv], [B, Tq, Tk]
//   Index pointer = nn::MonotonicAttention::start_pointer(B);
//   auto hard = attention.hard_step(s_prev, attention.precompute_keys(h), h, lengths, pointer);  // s_{i-1}
#pragma once

#include "attention.hpp"

#include "../../core/random.hpp"

#include <optional>

namespace attn::nn {

// The expected alignment of one step from the previous one: p [B, Tk] (the stop
// probabilities of this step, 0 on padding), previous [B, Tk] (alpha_{i-1}) ->
// alpha_i [B, Tk]. Composed from core ops, one source position at a time.
Tensor monotonic_alignment_step(const Tensor& p, const Tensor& previous);

// The alignment before the first step: all mass on position 0. [B, Tk]
Tensor monotonic_initial_alignment(std::size_t B, std::size_t Tk, Dtype dtype = Dtype::Float64);

// Every step's expected alignment from p [B, Tq, Tk], starting from
// monotonic_initial_alignment (or `previous` [B, Tk]); p is zeroed where
// `lengths` [B] says the source is padding. -> alpha [B, Tq, Tk]
Tensor monotonic_alignment(const Tensor& p, const std::optional<Index>& lengths = std::nullopt,
                           const std::optional<Tensor>& previous = std::nullopt);

// Hard decisions on a whole p [B, Tq, Tk] (for tests and teaching; the layer's
// hard_step computes p lazily): the position each step attends to, or -1 for none.
// -> [B, Tq]
Index hard_monotonic_alignment(const Tensor& p, const std::optional<Index>& lengths = std::nullopt);

struct MonotonicOptions {
  double noise_std = 0.0;    // sigma of the pre-sigmoid noise, training only (Raffel: 1)
  double offset_init = -1.0;  // r's initial value: negative starts the decoder reading on
};

// What hard_step returns for one decoder step.
struct HardMonotonicOutput {
  Tensor context;   // [B, Dv]: v_j at the chosen position, 0 where none
  Index positions;  // [B]: the chosen j, or -1
};

class MonotonicAttention : public Module {
 public:
  MonotonicAttention(std::size_t query_dim, std::size_t key_dim, std::size_t attn_dim,
                     const MonotonicOptions& options = {}, Generator& gen = default_generator());

  // Soft (expected) attention for queries [B, Tq, Dq] taken as consecutive
  // decoder steps, keys [B, Tk, Dk], values [B, Tk, Dv], lengths [B] (all Tk when
  // absent), previous alignment [B, Tk] (the initial one when absent).
  // Returns {context [B, Tq, Dv], weights alpha [B, Tq, Tk]}.
  AttentionOutput forward(const Tensor& query, const Tensor& keys, const Tensor& values,
                          const std::optional<Index>& lengths = std::nullopt,
                          const std::optional<Tensor>& previous = std::nullopt);
  AttentionOutput operator()(const Tensor& query, const Tensor& keys, const Tensor& values,
                             const std::optional<Index>& lengths = std::nullopt,
                             const std::optional<Tensor>& previous = std::nullopt) {
    return forward(query, keys, values, lengths, previous);
  }
  // The same with keys already through precompute_keys (W2 h_j, once per sentence).
  AttentionOutput forward_precomputed(const Tensor& query, const Tensor& precomputed_keys, const Tensor& values,
                                      const std::optional<Index>& lengths = std::nullopt,
                                      const std::optional<Tensor>& previous = std::nullopt);

  Tensor precompute_keys(const Tensor& keys) const;  // [B, Tk, Dk] -> W2 h_j [B, Tk, A]
  // e_ij for every pair: query [B, Tq, Dq], precomputed keys [B, Tk, A] -> [B, Tq, Tk] (no noise).
  Tensor energy(const Tensor& query, const Tensor& precomputed_keys) const;

  // One hard decoding step, no gradient: query s_{i-1} [B, Dq]; pointer [B] is where
  // the previous step stopped (start_pointer: 0), updated in place (Tk once a row
  // has run off the end). Scores only the positions from the pointer to the stop.
  HardMonotonicOutput hard_step(const Tensor& query, const Tensor& precomputed_keys, const Tensor& values,
                                const std::optional<Index>& lengths, Index& pointer) const;
  static Index start_pointer(std::size_t B);
  // How many (query, key) pairs hard_step has scored since construction: the cost it saves.
  std::size_t pairs_scored() const { return pairs_scored_; }

  const Tensor& last_weights() const { return last_weights_; }  // [B, Tq, Tk], detached
  std::string extra_repr() const override;

  std::size_t query_dim, key_dim, attn_dim;
  MonotonicOptions options;
  Tensor W1;  // [attn_dim, query_dim], applied to the query s_{i-1}
  Tensor W2;  // [attn_dim, key_dim], applied to h_j
  Tensor b;   // [attn_dim]
  Tensor v;   // [attn_dim], used as v / ||v||
  Tensor g;   // [1], the norm that replaces ||v|| (init 1 / sqrt(attn_dim))
  Tensor r;   // [1], the offset

 private:
  Generator& gen_;
  Tensor last_weights_;
  mutable std::size_t pairs_scored_ = 0;
};

}  // namespace attn::nn
