// Luong's local attention (Luong et al. 2015, section 3.2): each decoder step t
// looks only at a window of 2D + 1 source positions around an aligned position
// p_t, instead of at the whole source sentence.
//
//   local-m (monotonic):  p_t = t                  (source and target roughly in step)
//   local-p (predictive): p_t = S * sigmoid(v_p^T tanh(W_p s_t)),  S the source length
//
// Only the keys and values of the window [p_t - D, p_t + D] are gathered: 2D + 1
// positions when p_t is whole (local-m), 2D when it is not (local-p's real-valued
// p_t; the slot past the window is blocked) (gather_windows, core/ops.hpp), so the scores, the softmax, the weighted sum and
// their backward (which adds into the keys' and values' gradients at the window's
// rows only) cost O(D) per step, not O(S). The weights are the softmax of those
// scores (never on padding):
//
//   local-m (paper, eq. 7-8):  a_tj = softmax_{j in window}(e_tj)
//   local-p (paper, eq. 10):   a_tj = softmax_{j in window}(e_tj) * exp(-(j - p_t)^2 / (2 sigma^2)),  sigma = D / 2
//
// The Gaussian is on for local-p and off for local-m, as in the paper; `gaussian`
// turns it on or off for either. With it the weights sum to at most 1. The window
// itself is a hard selection (no gradient), but the Gaussian is differentiable in
// p_t: that is how local-p learns W_p and v_p. Positions j count from 0; a window
// that falls entirely in the padding (local-m with t far beyond the source
// length) gives weights and context of 0.
//
// forward_window returns the window's own weights [B, Tq, 2D + 1]: that is the
// decoder step. forward and forward_precomputed also lay them into rows of the
// source [B, Tq, Tk] (place_windows: one O(Tk) fill of zeros per row, for heatmaps
// and callers that want the row). last_weights() lays them out only when asked.
#pragma once

#include "attention.hpp"

#include <memory>
#include <optional>

namespace attn::nn {

// What the windowed step returns: the context and the window's own weights.
struct LocalAttentionOutput {
  Tensor context;  // [B, Tq, Dv]
  Tensor weights;  // [B, Tq, 2D + 1]: slot w of row (b, t) weighs source position start(b, t) + w
  Index start;     // [B, Tq]: ceil(p_t - D); slots outside [p_t - D, p_t + D] or [0, S) weigh 0
};

class LocalAttention : public Module {
 public:
  enum class Mode { Monotonic, Predictive };  // local-m, local-p

  // window_radius is D (the window has 2D + 1 positions). query_dim and
  // attn_dim size W_p [attn_dim, query_dim] and v_p [attn_dim], used by local-p only.
  // gaussian defaults to the paper's choice: on for local-p, off for local-m.
  LocalAttention(std::unique_ptr<Score> score, std::size_t window_radius, Mode mode, std::size_t query_dim = 0,
                 std::size_t attn_dim = 0, Generator& gen = default_generator(),
                 std::optional<bool> gaussian = std::nullopt);

  // query [B, Tq, Dq]: the decoder states of steps first_step, first_step + 1, ...
  // (a decoder running one step at a time passes Tq = 1 and first_step = t).
  // keys [B, Tk, Dk], values [B, Tk, Dv]; lengths [B]: valid source lengths S
  // (all Tk when absent). Returns {context [B, Tq, Dv], weights [B, Tq, Tk]}
  // (the window's weights laid into the source row, 0 outside it).
  AttentionOutput forward(const Tensor& query, const Tensor& keys, const Tensor& values,
                          const std::optional<Index>& lengths = std::nullopt, std::size_t first_step = 0);
  AttentionOutput operator()(const Tensor& query, const Tensor& keys, const Tensor& values,
                             const std::optional<Index>& lengths = std::nullopt, std::size_t first_step = 0) {
    return forward(query, keys, values, lengths, first_step);
  }
  // The same with keys already passed through score().precompute_keys(keys), once
  // per sentence (general's W h_j, concat's W_h h_j).
  AttentionOutput forward_precomputed(const Tensor& query, const Tensor& precomputed_keys, const Tensor& values,
                                      const std::optional<Index>& lengths = std::nullopt,
                                      std::size_t first_step = 0);
  // The step itself, O(D) whatever Tk: the context and the window's weights, not laid
  // into rows of Tk (window_to_rows does that, differentiably, when a caller needs it).
  LocalAttentionOutput forward_window(const Tensor& query, const Tensor& precomputed_keys, const Tensor& values,
                                      const std::optional<Index>& lengths = std::nullopt,
                                      std::size_t first_step = 0);
  // A window's weights [B, Tq, 2D + 1] laid into rows of the source [B, Tq, Tk], 0 outside it.
  static Tensor window_to_rows(const LocalAttentionOutput& out, std::size_t Tk);

  Score& score() { return *score_; }
  const Tensor& last_weights() const;                               // [B, Tq, Tk], detached, laid out on first use
  const Tensor& last_positions() const { return last_positions_; }  // p_t [B, Tq], detached
  std::string extra_repr() const override;

  std::size_t window_radius;  // D
  double sigma;               // D / 2
  Mode mode;
  bool gaussian;              // multiply by exp(-(j - p_t)^2 / (2 sigma^2))
  std::size_t query_dim, attn_dim;
  Tensor W_p;  // [attn_dim, query_dim], local-p only
  Tensor v_p;  // [attn_dim], local-p only

 private:
  std::unique_ptr<Score> score_;
  LocalAttentionOutput last_window_;  // detached; last_weights_ is its layout, made on demand
  std::size_t last_source_length_ = 0;
  mutable Tensor last_weights_;
  Tensor last_positions_;
};

}  // namespace attn::nn
