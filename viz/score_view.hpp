// The score view: how one head's attention scores are made, as bertviz's neuron view shows them.
// For a chosen query position, every key's row: the key vector k_j, the elementwise product
// q ⊙ k_j as coloured cells, the score q·k_j, the scaled score, the mask (a blocked key greyed,
// its score −∞) and the softmax weight; for additive (Bahdanau) attention, the key projection
// U k_j, the score network's hidden activation tanh(W q + U k_j), its product with v_a and the
// score v_a·tanh(W q + U k_j). Click a query (or use the arrow keys) to choose it; hover a key to
// follow its numbers across the columns.
//
//   viz::ScoreView view = viz::dot_product_scores(Q, K, mask, V);   // Q [T, d], K [S, d], V [S, dv]
//   view.queries = target_words;  view.keys = source_words;          // labels (default: positions)
//   xcpp::display(view);                        // one self-contained HTML output (mime_bundle_repr below)
//   xt::xarray<double> a = view.weights();      // the weights it shows, [T, S]
//
//   viz::ScoreView head = viz::score_view(layer.self_attn, x, x, /*head=*/1);   // from a layer's weights
//   viz::ScoreView bahdanau = viz::score_view(additive_score, s, h);            // from nn::AdditiveScore
//
// Like the explorer (viz/explorer.hpp), the fragment carries its script and style
// (viz/score_view/score_view.js and .css, embedded at build time): nothing is fetched, it works
// offline and in an exported page, and each view has its own random id, so a notebook may show
// many. Where scripts do not run, a static picture shows instead (the weights as a heatmap, an
// <img> of an SVG data URI, which Jupyter's sanitiser keeps in an untrusted notebook).
#pragma once

#include "../core/tensor.hpp"
#include "../nn/attention/multihead.hpp"
#include "../nn/attention/score.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace attn::viz {

enum class ScoreKind {
  Dot,       // score q·k_j, scaled by `scale` (1/sqrt(d) for the Transformer's attention)
  Additive,  // score v_a·tanh(W q + U k_j) (Bahdanau), not scaled
};

struct ScoreView {
  std::string title;
  ScoreKind kind = ScoreKind::Dot;
  std::vector<std::string> queries;  // T labels of the query positions (empty: "0", "1", ...)
  std::vector<std::string> keys;     // S labels of the key positions (empty: "0", "1", ...)
  xt::xarray<double> q;              // Dot: the queries [T, d]. Additive: W q_t, the query projections [T, A]
  xt::xarray<double> k;              // Dot: the keys [S, d].    Additive: U k_j, the key projections [S, A]
  xt::xarray<double> v_a;            // Additive only: the score network's output vector [A]
  double scale = 1.0;                // Dot: the scores are multiplied by it (1/sqrt(d) as built below)
  std::optional<Mask> mask;          // [T, S], true where query t may not see key j (nn/attention/masks.hpp)
  xt::xarray<double> values;         // optional (none: 0-d, as default-made), Dot: the values [S, dv]; the view adds sum_j a_j v_j
  std::size_t query = 0;             // the query position shown first

  // Every number the view shows is computed here, in float64, from the fields above. Each checks
  // the view first: ShapeError naming the score view and the shapes when q, k, v_a, the mask, the
  // values or the labels disagree; ValueError when `query` is out of range.
  xt::xarray<double> scores() const;          // [T, S]: q_t·k_j, or v_a·tanh(W q_t + U k_j)
  xt::xarray<double> scaled_scores() const;   // [T, S]: scores() * scale (additive: scale is ignored, 1)
  xt::xarray<double> weights() const;         // [T, S]: softmax over the keys not blocked (0 on blocked
                                              // keys; a row with every key blocked is all 0, as
                                              // nn::masked_softmax)
  xt::xarray<double> hidden(std::size_t t) const;  // Additive: [S, A], tanh(W q_t + U k_j)
  void check() const;
};

// Scaled dot-product attention (nn::scaled_dot_product_attention) from its tensors: queries [T, d],
// keys [S, d], an optional mask [T, S] (true = blocked) and optional values [S, dv]; scale 1/sqrt(d).
ScoreView dot_product_scores(const Tensor& q, const Tensor& k, const std::optional<Mask>& mask = std::nullopt,
                             const Tensor& values = Tensor());

// Additive attention (nn::AdditiveScore) from its pieces: the query projections W q_t [T, A], the
// key projections U k_j [S, A], the vector v_a [A], and an optional mask [T, S].
ScoreView additive_scores(const Tensor& query_projection, const Tensor& key_projection, const Tensor& v_a,
                          const std::optional<Mask>& mask = std::nullopt);

// One head of an nn::MultiheadAttention. The layer keeps only its weights (last_weights()), not
// its queries and keys, so they are computed again from its in_proj_weight and in_proj_bias and the
// inputs it was given: query [T, E] or [B, T, E], key [S, E] or [B, S, E] (sentence b of a batch);
// for a Transformer layer's self-attention that is the layer's input x (post-norm) or
// layer.norm1(x) (norm_first). `mask` [T, S]: what the call's key padding and attn_mask blocked for
// that sentence (causal = nn::causal_mask(T)). With `with_values`, the values too. Grouped heads
// read their key-value head. ValueError for a layer with rotary positions, ALiBi or a window
// (the view would not show the scores the layer used), or a head or sentence out of range.
ScoreView score_view(const nn::MultiheadAttention& attention, const Tensor& query, const Tensor& key, std::size_t head,
                     const std::optional<Mask>& mask = std::nullopt, std::size_t sentence = 0,
                     bool with_values = false);

// An nn::AdditiveScore (e.g. inside nn::Attention) on queries [T, Dq] or [B, T, Dq] (a Bahdanau
// decoder's s_{t-1}) and keys [S, Dk] or [B, S, Dk] (the encoder states h_j): W1 q and W2 k as
// the projections, its v as v_a.
ScoreView score_view(const nn::AdditiveScore& score, const Tensor& query, const Tensor& keys,
                     const std::optional<Mask>& mask = std::nullopt, std::size_t sentence = 0);

// The HTML fragment of one view (check() first).
std::string score_view_html(const ScoreView& view);

// For xcpp::display (which finds it by argument-dependent lookup): one HTML output.
inline nlohmann::json mime_bundle_repr(const ScoreView& view) {
  nlohmann::json bundle;
  bundle["text/html"] = score_view_html(view);
  bundle["text/plain"] = "<score view: " + (view.title.empty() ? std::string("attention scores") : view.title) + ">";
  return bundle;
}

}  // namespace attn::viz
