#include "score_view.hpp"

#include "base64.hpp"
#include "heatmap.hpp"

#include "../core/errors.hpp"

#include <xtensor/xview.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

namespace attn::viz {

namespace detail {
// viz/score_view/score_view.js and score_view.css, embedded by tools/embed_text.py (viz/meson.build).
extern const char* const kScoreViewScript;
extern const char* const kScoreViewStyle;
}  // namespace detail

namespace {

using nlohmann::json;

std::string shape_of(const xt::xarray<double>& a) {
  std::string s = "[";
  for (std::size_t d = 0; d < a.dimension(); ++d) s += (d ? ", " : "") + std::to_string(a.shape()[d]);
  return s + "]";
}

std::string shape_of(const Mask& m) {
  std::string s = "[";
  for (std::size_t d = 0; d < m.dimension(); ++d) s += (d ? ", " : "") + std::to_string(m.shape()[d]);
  return s + "]";
}

bool blocked(const ScoreView& v, std::size_t t, std::size_t j) { return v.mask && (*v.mask)(t, j); }

// A number as JSON: NaN and infinities have no JSON form (the script shows null as "–").
json number(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

json matrix_json(const xt::xarray<double>& a) {
  json rows = json::array();
  for (std::size_t r = 0; r < a.shape()[0]; ++r) {
    json row = json::array();
    for (std::size_t c = 0; c < a.shape()[1]; ++c) row.push_back(number(a(r, c)));
    rows.push_back(std::move(row));
  }
  return rows;
}

// JSON that can sit inside <script> (as viz/explorer.cpp writes it): '<', '>' and '&' only occur
// inside JSON strings, where their \u escapes mean the same, so nothing can end the element early;
// U+2028 and U+2029 escaped for the JavaScript parsers that refuse them raw.
std::string script_json(const json& doc) {
  const std::string text = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' && (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

// An id no other view of the page has: outputs of earlier kernels stay on the page, so a counter
// alone could repeat one.
std::string new_id() {
  static std::atomic<unsigned long long> counter{0};
  static const unsigned long long salt = std::random_device{}();
  char id[56];
  std::snprintf(id, sizeof id, "attn-score-view-%llx-%llu", salt, counter.fetch_add(1));
  return id;
}

std::vector<std::string> labels_or_positions(const std::vector<std::string>& labels, std::size_t n) {
  if (!labels.empty()) return labels;
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(std::to_string(i));
  return out;
}

// Sentence `b` of a [N, D] or [B, N, D] tensor, as [N, D].
xt::xarray<double> sentence_matrix(const char* op, const char* what, const Tensor& t, std::size_t b) {
  if (!t.defined()) throw ValueError(std::string(op) + ": " + what + " is undefined");
  const Shape shape = t.shape();
  if (shape.size() == 2 && b == 0) return t.to_array();
  if (shape.size() == 3 && b < shape[0]) return xt::view(t.to_array(), b);
  throw ShapeError(std::string(op) + ": expected " + what + " [N, D] or [B, N, D] with sentence " + std::to_string(b) +
                   " < B, got " + shape_str(shape));
}

// x [N, E] times rows [first, first + n) of W [*, E], transposed, plus the same part of bias.
xt::xarray<double> project(const xt::xarray<double>& x, const xt::xarray<double>& W, const xt::xarray<double>* bias,
                           std::size_t first, std::size_t n) {
  xt::xarray<double> out = xt::zeros<double>({x.shape()[0], n});
  for (std::size_t r = 0; r < x.shape()[0]; ++r)
    for (std::size_t o = 0; o < n; ++o) {
      double s = bias ? (*bias)(first + o) : 0.0;
      for (std::size_t i = 0; i < x.shape()[1]; ++i) s += x(r, i) * W(first + o, i);
      out(r, o) = s;
    }
  return out;
}

}  // namespace

void ScoreView::check() const {
  const char* what = kind == ScoreKind::Dot ? "score view (dot product)" : "score view (additive)";
  const std::string qs = kind == ScoreKind::Dot ? "queries q [T, d]" : "query projections W q [T, A]";
  const std::string ks = kind == ScoreKind::Dot ? "keys k [S, d]" : "key projections U k [S, A]";
  if (q.dimension() != 2 || k.dimension() != 2 || q.shape()[0] == 0 || k.shape()[0] == 0 || q.shape()[1] == 0 ||
      q.shape()[1] != k.shape()[1])
    throw ShapeError(std::string(what) + ": expected " + qs + " and " + ks + " sharing their last size (at least 1 of each), got q " +
                     shape_of(q) + " and k " + shape_of(k));
  const std::size_t T = q.shape()[0], S = k.shape()[0], d = q.shape()[1];
  if (kind == ScoreKind::Additive && (v_a.dimension() != 1 || v_a.shape()[0] != d))
    throw ShapeError(std::string(what) + ": expected v_a [" + std::to_string(d) + "] for projections of size A = " +
                     std::to_string(d) + ", got v_a " + shape_of(v_a));
  if (mask && (mask->dimension() != 2 || mask->shape()[0] != T || mask->shape()[1] != S))
    throw ShapeError(std::string(what) + ": expected a mask [T, S] = [" + std::to_string(T) + ", " + std::to_string(S) +
                     "] for q " + shape_of(q) + " and k " + shape_of(k) + ", got " + shape_of(*mask));
  if (values.dimension() > 0 && (kind != ScoreKind::Dot || values.dimension() != 2 || values.shape()[0] != S))
    throw ShapeError(std::string(what) + ": expected values [S, dv] with S = " + std::to_string(S) +
                     " (one per key; dot-product views only), got " + shape_of(values));
  if ((!queries.empty() && queries.size() != T) || (!keys.empty() && keys.size() != S))
    throw ShapeError(std::string(what) + ": expected " + std::to_string(T) + " query labels and " + std::to_string(S) +
                     " key labels (or none) for q " + shape_of(q) + " and k " + shape_of(k) + ", got " +
                     std::to_string(queries.size()) + " and " + std::to_string(keys.size()));
  if (query >= T)
    throw ValueError(std::string(what) + ": query " + std::to_string(query) + " is out of range for " + std::to_string(T) +
                     " queries (q " + shape_of(q) + ")");
}

xt::xarray<double> ScoreView::hidden(std::size_t t) const {
  check();
  if (kind != ScoreKind::Additive) throw ValueError("score view: hidden() is for additive views; this one is a dot product");
  if (t >= q.shape()[0])
    throw ValueError("score view (additive): query " + std::to_string(t) + " is out of range for " +
                     std::to_string(q.shape()[0]) + " queries (q " + shape_of(q) + ")");
  const std::size_t S = k.shape()[0], A = q.shape()[1];
  xt::xarray<double> h = xt::zeros<double>({S, A});
  for (std::size_t j = 0; j < S; ++j)
    for (std::size_t a = 0; a < A; ++a) h(j, a) = std::tanh(q(t, a) + k(j, a));
  return h;
}

xt::xarray<double> ScoreView::scores() const {
  check();
  const std::size_t T = q.shape()[0], S = k.shape()[0], d = q.shape()[1];
  xt::xarray<double> e = xt::zeros<double>({T, S});
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t j = 0; j < S; ++j) {
      double s = 0.0;
      for (std::size_t i = 0; i < d; ++i)
        s += kind == ScoreKind::Dot ? q(t, i) * k(j, i) : v_a(i) * std::tanh(q(t, i) + k(j, i));
      e(t, j) = s;
    }
  return e;
}

xt::xarray<double> ScoreView::scaled_scores() const {
  xt::xarray<double> e = scores();
  if (kind == ScoreKind::Dot) e *= scale;
  return e;
}

xt::xarray<double> ScoreView::weights() const {
  const xt::xarray<double> e = scaled_scores();
  xt::xarray<double> a = xt::zeros<double>(e.shape());
  for (std::size_t t = 0; t < e.shape()[0]; ++t) {
    // A row is all 0 only when every key is blocked: a NaN score (std::max skips it) must give
    // NaN weights, as the layer's softmax does, not pass for a fully masked row.
    double top = -std::numeric_limits<double>::infinity();
    bool open = false;
    for (std::size_t j = 0; j < e.shape()[1]; ++j)
      if (!blocked(*this, t, j)) {
        open = true;
        top = std::max(top, e(t, j));
      }
    if (!open) continue;  // every key blocked: a row of 0
    double sum = 0.0;
    for (std::size_t j = 0; j < e.shape()[1]; ++j)
      if (!blocked(*this, t, j)) sum += a(t, j) = std::exp(e(t, j) - top);
    for (std::size_t j = 0; j < e.shape()[1]; ++j) a(t, j) /= sum;
  }
  return a;
}

ScoreView dot_product_scores(const Tensor& q, const Tensor& k, const std::optional<Mask>& mask, const Tensor& values) {
  if (!q.defined() || !k.defined()) throw ValueError("dot_product_scores: the queries and the keys must be defined");
  if (q.dim() != 2 || k.dim() != 2 || q.size(1) != k.size(1))
    throw ShapeError("dot_product_scores: expected queries q [T, d] and keys k [S, d] with the same d, got q " +
                     shape_str(q.shape()) + " and k " + shape_str(k.shape()));
  ScoreView view;
  view.title = "scaled dot-product attention";
  view.kind = ScoreKind::Dot;
  view.q = q.to_array();
  view.k = k.to_array();
  view.scale = 1.0 / std::sqrt(static_cast<double>(q.size(1)));
  view.mask = mask;
  if (values.defined()) view.values = values.to_array();
  view.check();
  return view;
}

ScoreView additive_scores(const Tensor& query_projection, const Tensor& key_projection, const Tensor& v_a,
                          const std::optional<Mask>& mask) {
  if (!query_projection.defined() || !key_projection.defined() || !v_a.defined())
    throw ValueError("additive_scores: the query projections, the key projections and v_a must be defined");
  ScoreView view;
  view.title = "additive attention";
  view.kind = ScoreKind::Additive;
  view.q = query_projection.to_array();
  view.k = key_projection.to_array();
  view.v_a = v_a.to_array();
  view.mask = mask;
  view.check();
  return view;
}

ScoreView score_view(const nn::MultiheadAttention& attention, const Tensor& query, const Tensor& key, std::size_t head,
                     const std::optional<Mask>& mask, std::size_t sentence, bool with_values) {
  const char* op = "score_view(MultiheadAttention)";
  if (attention.position != nn::AttentionPosition::None || attention.window > 0)
    throw ValueError(std::string(op) + ": the layer uses " +
                     (attention.window > 0 ? "a sliding window"
                                           : attention.position == nn::AttentionPosition::Rotary ? "rotary positions" : "ALiBi") +
                     ", which this view does not apply: its scores would not be the layer's");
  if (head >= attention.num_heads)
    throw ValueError(std::string(op) + ": head " + std::to_string(head) + " is out of range for a layer of " +
                     std::to_string(attention.num_heads) + " heads");
  const std::size_t E = attention.embed_dim, d = attention.head_dim;
  const xt::xarray<double> xq = sentence_matrix(op, "query", query, sentence);
  const xt::xarray<double> xk = sentence_matrix(op, "key", key, sentence);
  if (xq.shape()[1] != E || xk.shape()[1] != E)
    throw ShapeError(std::string(op) + ": expected query and key inputs of the layer's embed_dim " + std::to_string(E) +
                     ", got query " + shape_str(query.shape()) + " and key " + shape_str(key.shape()));
  const xt::xarray<double> W = attention.in_proj_weight.to_array();  // [E + 2K, E]
  const xt::xarray<double> b = attention.in_proj_bias.defined() ? attention.in_proj_bias.to_array() : xt::xarray<double>();
  const xt::xarray<double>* bias = attention.in_proj_bias.defined() ? &b : nullptr;
  const std::size_t K = attention.num_kv_heads * d, group = head / (attention.num_heads / attention.num_kv_heads);
  ScoreView view;
  view.title = "head " + std::to_string(head) + " of " + attention.type_name();
  view.kind = ScoreKind::Dot;
  view.q = project(xq, W, bias, head * d, d);
  view.k = project(xk, W, bias, E + group * d, d);
  if (with_values) view.values = project(xk, W, bias, E + K + group * d, d);
  view.scale = 1.0 / std::sqrt(static_cast<double>(d));
  view.mask = mask;
  view.check();
  return view;
}

ScoreView score_view(const nn::AdditiveScore& score, const Tensor& query, const Tensor& keys,
                     const std::optional<Mask>& mask, std::size_t sentence) {
  const char* op = "score_view(AdditiveScore)";
  const xt::xarray<double> s = sentence_matrix(op, "query", query, sentence);
  const xt::xarray<double> h = sentence_matrix(op, "keys", keys, sentence);
  if (s.shape()[1] != score.query_dim || h.shape()[1] != score.key_dim)
    throw ShapeError(std::string(op) + ": expected queries of size " + std::to_string(score.query_dim) + " and keys of size " +
                     std::to_string(score.key_dim) + ", got query " + shape_str(query.shape()) + " and keys " +
                     shape_str(keys.shape()));
  const xt::xarray<double> W1 = score.W1.to_array(), W2 = score.W2.to_array();
  ScoreView view;
  view.title = "additive attention";
  view.kind = ScoreKind::Additive;
  view.q = project(s, W1, nullptr, 0, score.attn_dim);
  view.k = project(h, W2, nullptr, 0, score.attn_dim);
  view.v_a = score.v.to_array();
  view.mask = mask;
  view.check();
  return view;
}

std::string score_view_html(const ScoreView& view) {
  view.check();
  const std::size_t T = view.q.shape()[0], S = view.k.shape()[0];
  const bool dot = view.kind == ScoreKind::Dot;
  const std::vector<std::string> queries = labels_or_positions(view.queries, T), keys = labels_or_positions(view.keys, S);
  const xt::xarray<double> e = view.scores(), scaled = view.scaled_scores(), a = view.weights();
  const std::string id = new_id();
  json doc = {{"id", id},          {"title", view.title},       {"kind", dot ? "dot" : "additive"},
              {"queries", queries}, {"keys", keys},              {"q", matrix_json(view.q)},
              {"k", matrix_json(view.k)}, {"scale", dot ? view.scale : 1.0}, {"scores", matrix_json(e)},
              {"scaled", matrix_json(scaled)}, {"weights", matrix_json(a)}, {"query", view.query}};
  if (view.mask) {
    json rows = json::array();
    for (std::size_t t = 0; t < T; ++t) {
      json row = json::array();
      for (std::size_t j = 0; j < S; ++j) row.push_back(bool((*view.mask)(t, j)));
      rows.push_back(std::move(row));
    }
    doc["mask"] = std::move(rows);
  }
  if (dot && view.values.dimension() > 0) {
    doc["v"] = matrix_json(view.values);
    xt::xarray<double> out = xt::zeros<double>({T, view.values.shape()[1]});  // sum_j a_tj v_j
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t j = 0; j < S; ++j)
        for (std::size_t c = 0; c < view.values.shape()[1]; ++c) out(t, c) += a(t, j) * view.values(j, c);
    doc["output"] = matrix_json(out);
  }
  if (!dot) {
    doc["va"] = json::array();
    for (double x : view.v_a) doc["va"].push_back(number(x));
    json hidden = json::array();  // [T][S][A]: tanh(W q_t + U k_j)
    for (std::size_t t = 0; t < T; ++t) hidden.push_back(matrix_json(view.hidden(t)));
    doc["hidden"] = std::move(hidden);
  }

  // Where scripts do not run: the weights as a heatmap. An <img> of a data URI, since Jupyter's
  // sanitiser drops an inline <svg> from an untrusted notebook and keeps an image.
  HeatmapOptions options;
  options.title = (view.title.empty() ? std::string("attention") : view.title) + ": weights";
  options.x_label = "keys";
  options.y_label = "queries";
  options.show_values = T * S <= 144;
  options.cell = T * S <= 144 ? 36 : 20;
  const std::string picture = heatmap_svg(a, queries, keys, options);
  return "<div class=\"attn-score-view\" id=\"" + id +
         "\"><div class=\"attn-sv-fallback\"><img alt=\"attention weights (the score view needs scripts)\" "
         "src=\"" +
         svg_data_uri(picture) + "\"></div></div>\n<style>" + detail::kScoreViewStyle + "</style>\n<script>" +
         detail::kScoreViewScript + "\nattnScoreView(document.getElementById(\"" + id + "\"), " + script_json(doc) +
         ");</script>\n";
}

}  // namespace attn::viz
