// Score functions: how well each key matches each query, before the softmax.
//
// Every score function takes queries [B, Tq, Dq] (decoder states s_t, one per
// row) and keys [B, Tk, Dk] (encoder states h_j) and returns scores e_tj of
// shape [B, Tq, Tk]:
//
//   DotScore        e_tj = s_t . h_j                        (Luong "dot", Dq == Dk)
//   ScaledDotScore  e_tj = s_t . h_j / sqrt(Dk)             (Vaswani et al.)
//   GeneralScore    e_tj = s_t^T W h_j                      (Luong "general", bilinear)
//   ConcatScore     e_tj = v^T tanh(W [s_t; h_j])           (Luong "concat")
//   AdditiveScore   e_tj = v^T tanh(W1 s_t + W2 h_j)        (Bahdanau, an MLP)
//
// Part of the work may depend on the keys only (W h_j, W_h h_j, W2 h_j). A decoder that
// scores the same encoder states at every step does it once per sequence:
//
//   Tensor pk = score.precompute_keys(h);            // once
//   Tensor e = score.forward_precomputed(s_t, pk);  // every step
//
// forward(query, keys) is exactly forward_precomputed(query, precompute_keys(keys)).
#pragma once

#include "../module.hpp"

#include "../../core/random.hpp"

namespace attn::nn {

class Score : public Module {
 public:
  using Module::Module;

  // query [B, Tq, Dq], keys [B, Tk, Dk] -> scores [B, Tq, Tk]
  Tensor forward(const Tensor& query, const Tensor& keys) const {
    return forward_precomputed(query, precompute_keys(keys));
  }
  Tensor operator()(const Tensor& query, const Tensor& keys) const { return forward(query, keys); }

  // The query-independent part of the score, computed from keys [B, Tk, Dk]
  // (the keys themselves for the dot scores).
  virtual Tensor precompute_keys(const Tensor& keys) const = 0;
  // Scores [B, Tq, Tk] from a query [B, Tq, Dq] and precompute_keys(keys).
  virtual Tensor forward_precomputed(const Tensor& query, const Tensor& precomputed) const = 0;
};

// e_tj = s_t . h_j: no parameters, queries and keys of the same size.
class DotScore : public Score {
 public:
  DotScore() : Score("DotScore") {}
  Tensor precompute_keys(const Tensor& keys) const override;
  Tensor forward_precomputed(const Tensor& query, const Tensor& keys) const override;
};

// e_tj = s_t . h_j / sqrt(D): keeps the scores' spread independent of D, so
// the softmax does not saturate as D grows.
class ScaledDotScore : public Score {
 public:
  ScaledDotScore() : Score("ScaledDotScore") {}
  Tensor precompute_keys(const Tensor& keys) const override;
  Tensor forward_precomputed(const Tensor& query, const Tensor& keys) const override;
};

// e_tj = s_t^T W h_j with W [Dq, Dk]: queries and keys may differ in size.
// precompute_keys gives W h_j [B, Tk, Dq]; the score is then a dot product.
class GeneralScore : public Score {
 public:
  GeneralScore(std::size_t query_dim, std::size_t key_dim, Generator& gen = default_generator());
  Tensor precompute_keys(const Tensor& keys) const override;
  Tensor forward_precomputed(const Tensor& query, const Tensor& projected_keys) const override;
  std::string extra_repr() const override;

  std::size_t query_dim, key_dim;
  Tensor W;  // [query_dim, key_dim]
};

// e_tj = v^T tanh(W [s_t; h_j]) with W [A, Dq + Dk], v [A]: a one-layer MLP on
// every (query, key) pair. Since W [s; h] = W_s s + W_h h (W_s, W_h: W's first Dq
// and last Dk columns), precompute_keys gives W_h h_j [B, Tk, A] once per
// sentence, and each step adds W_s s_t: the additive score with one matrix split
// in two. Luong applies it to the current state s_t, Bahdanau to s_{t-1}.
class ConcatScore : public Score {
 public:
  ConcatScore(std::size_t query_dim, std::size_t key_dim, std::size_t attn_dim, Generator& gen = default_generator());
  Tensor precompute_keys(const Tensor& keys) const override;
  Tensor forward_precomputed(const Tensor& query, const Tensor& projected_keys) const override;
  std::string extra_repr() const override;

  std::size_t query_dim, key_dim, attn_dim;
  Tensor W;  // [attn_dim, query_dim + key_dim] = [W_s, W_h]
  Tensor v;  // [attn_dim]
};

// e_tj = v^T tanh(W1 s_t + W2 h_j) with W1 [A, Dq], W2 [A, Dk], v [A]
// (Bahdanau et al. 2015; their decoder passes s_{t-1}). precompute_keys gives
// W2 h_j [B, Tk, A], the part a decoder computes once per source sentence.
class AdditiveScore : public Score {
 public:
  AdditiveScore(std::size_t query_dim, std::size_t key_dim, std::size_t attn_dim, Generator& gen = default_generator());
  Tensor precompute_keys(const Tensor& keys) const override;
  Tensor forward_precomputed(const Tensor& query, const Tensor& projected_keys) const override;
  std::string extra_repr() const override;

  std::size_t query_dim, key_dim, attn_dim;
  Tensor W1;  // [attn_dim, query_dim], applied to the query s_t
  Tensor W2;  // [attn_dim, key_dim], applied to the keys h_j
  Tensor v;   // [attn_dim]
};

}  // namespace attn::nn
