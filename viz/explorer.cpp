#include "explorer.hpp"

#include "heads.hpp"

#include "../core/errors.hpp"

#include <nlohmann/json.hpp>
#include <xtensor/xview.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

namespace attn::viz {

namespace detail {
// viz/explorer/explorer.js and explorer.css, embedded by tools/embed_text.py (viz/meson.build).
extern const char* const kExplorerScript;
extern const char* const kExplorerStyle;
}  // namespace detail

namespace {

using nlohmann::json;

// A weight as JSON, rounded to 4 significant digits: the views show 3 decimals, and the 17 digits
// of a double made a 6-layer x 8-head page on 36 tokens weigh megabytes. (nlohmann writes the
// shortest text that reads back as the same double, so 0.1234 is written "0.1234".) NaN and
// infinities have no JSON form, and the script shows null as "–".
json number(double x) {
  if (!std::isfinite(x)) return nullptr;
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", x);
  return std::strtod(text, nullptr);
}

// The standard base64 alphabet with padding, for a data: URI.
std::string base64(const std::string& bytes) {
  static const char* const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const unsigned a = static_cast<unsigned char>(bytes[i]);
    const unsigned b = i + 1 < bytes.size() ? static_cast<unsigned char>(bytes[i + 1]) : 0;
    const unsigned c = i + 2 < bytes.size() ? static_cast<unsigned char>(bytes[i + 2]) : 0;
    const unsigned n = (a << 16) | (b << 8) | c;
    out += digits[(n >> 18) & 63];
    out += digits[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? digits[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? digits[n & 63] : '=';
  }
  return out;
}

// A heatmap's cells without their tooltips ("<rect ...><title>a / b: 0.12</title></rect>" made
// "<rect .../>"): a picture shown as an <img> has no tooltips, and they were most of its bytes.
std::string without_cell_titles(const std::string& svg) {
  static const std::string open = "><title>", close = "</title></rect>";
  std::string out;
  out.reserve(svg.size());
  std::size_t at = 0;
  for (;;) {
    const std::size_t t = svg.find(open, at);
    if (t == std::string::npos) break;
    const std::size_t end = svg.find("</title>", t);
    if (end == std::string::npos) break;
    if (svg.compare(end, close.size(), close) == 0) {  // a cell's tooltip
      out.append(svg, at, t - at);
      out += "/>";
      at = end + close.size();
    } else {  // another element's title: kept
      out.append(svg, at, end - at);
      at = end;
    }
  }
  out.append(svg, at, std::string::npos);
  return out;
}

// Text for an HTML attribute value in double quotes.
std::string attribute(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

std::string shape_of(const xt::xarray<double>& a) {
  std::string s = "[";
  for (std::size_t d = 0; d < a.dimension(); ++d) s += (d ? ", " : "") + std::to_string(a.shape()[d]);
  return s + "]";
}

// Weights in [0, 10) (attention weights: [0, 1]) packed at 4 significant digits into 3 base64
// digits each, 18 bits: k (4 bits), m (14 bits), the weight m * 10^-(3 + k) with m in [1000,
// 9999]; 0 (and anything below 1e-14) is code 0, a non-finite weight the largest code (null).
// A [6, 8, 36, 36] attention is then 187 kB, not the 1.7 MB of its numbers written in JSON.
// explorer.js unpacks it. Empty when a weight does not fit (negative, or 10 and more): such an
// attention is written as numbers.
std::string packed(const xt::xarray<double>& w) {
  static const char* const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve(3 * w.size());
  for (double x : w) {
    unsigned code = 0;
    if (!std::isfinite(x)) {
      code = (1u << 18) - 1;
    } else if (x < 0 || x >= 9.9995) {
      return "";
    } else if (x >= 1e-14) {
      int k = 0;
      long m = std::lround(x * 1000.0);
      while (m < 1000 && k < 14) m = std::lround(x * std::pow(10.0, 3 + ++k));  // 4 significant digits
      code = (unsigned(k) << 14) | unsigned(std::min(m, 9999L));
    }
    out += digits[(code >> 12) & 63];
    out += digits[(code >> 6) & 63];
    out += digits[code & 63];
  }
  return out;
}

json attention_json(const ExplorerAttention& a) {
  const auto& w = a.weights;
  if (w.dimension() != 4 || w.shape()[2] != a.rows.size() || w.shape()[3] != a.cols.size() || w.shape()[0] == 0 ||
      w.shape()[1] == 0 || a.rows.empty() || a.cols.empty())
    throw ShapeError("explorer_html: attention '" + a.name + "': expected weights [layers, heads, " +
                     std::to_string(a.rows.size()) + ", " + std::to_string(a.cols.size()) + "] for its " +
                     std::to_string(a.rows.size()) + " rows and " + std::to_string(a.cols.size()) +
                     " columns (at least 1 of each), got " + shape_of(w));
  json out = {{"name", a.name}, {"rows", a.rows}, {"cols", a.cols}};
  if (a.rows_read) out["rows_read"] = true;
  std::string pack = packed(w);
  if (!pack.empty()) {
    out["shape"] = {w.shape()[0], w.shape()[1], w.shape()[2], w.shape()[3]};
    out["weights"] = std::move(pack);
    return out;
  }
  json layers = json::array();
  for (std::size_t l = 0; l < w.shape()[0]; ++l) {
    json heads = json::array();
    for (std::size_t h = 0; h < w.shape()[1]; ++h) {
      json rows = json::array();
      for (std::size_t r = 0; r < w.shape()[2]; ++r) {
        json row = json::array();
        for (std::size_t c = 0; c < w.shape()[3]; ++c) row.push_back(number(w(l, h, r, c)));
        rows.push_back(std::move(row));
      }
      heads.push_back(std::move(rows));
    }
    layers.push_back(std::move(heads));
  }
  out["weights"] = std::move(layers);
  return out;
}

json step_json(const ExplorerStep& s, std::size_t index, std::size_t source) {
  if (s.row.size() != source)
    throw ShapeError("explorer_html: step " + std::to_string(index) + " ('" + s.token + "'): expected a row of " +
                     std::to_string(source) + " weights, one per source token, got " + std::to_string(s.row.size()));
  json row = json::array();
  for (double x : s.row) row.push_back(number(x));
  json out = {{"token", s.token}, {"row", std::move(row)}};
  if (!s.beam.empty()) {
    json beam = json::array();
    for (const auto& [text, score] : s.beam) beam.push_back({{"text", text}, {"score", number(score)}});
    out["beam"] = std::move(beam);
  }
  if (s.gate) out["gate"] = number(*s.gate);
  if (s.path) out["path"] = number(*s.path);
  if (s.continued) {
    if (*s.continued >= s.beam.size())
      throw ShapeError("explorer_html: step " + std::to_string(index) + " ('" + s.token + "'): continued beam entry " +
                       std::to_string(*s.continued) + " is past its " + std::to_string(s.beam.size()) + " entries");
    out["continued"] = *s.continued;
  }
  if (s.probability) out["probability"] = number(*s.probability);
  if (!s.alternatives.empty()) {
    json alternatives = json::array();
    for (const auto& [word, p] : s.alternatives) alternatives.push_back({{"token", word}, {"probability", number(p)}});
    out["alternatives"] = std::move(alternatives);
  }
  return out;
}

// JSON that can sit inside <script>: '<', '>' and '&' occur only inside JSON strings, where
// \u003c and the others mean the same, so no token ("</script>", "<!--") can end the element.
// U+2028 and U+2029 are escaped for the JavaScript parsers that refuse them raw.
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

// An id no other view of the page has: outputs of earlier kernels stay on the page, so a
// counter alone could repeat one.
std::string new_id() {
  static std::atomic<unsigned long long> counter{0};
  static const unsigned long long salt = std::random_device{}();
  char id[48];
  std::snprintf(id, sizeof id, "attn-explorer-%llx-%llu", salt, counter.fetch_add(1));
  return id;
}

}  // namespace

std::string explorer_html(const Explorer& explorer) {
  if (explorer.attentions.empty() && explorer.steps.empty())
    throw ValueError("explorer_html: nothing to show: the explorer has no attentions and no steps");
  if (!explorer.steps.empty() && explorer.source.empty())
    throw ShapeError("explorer_html: the steps' rows need the source tokens they weigh (Explorer::source is empty)");
  const std::string id = new_id();
  json doc = {{"id", id}, {"title", explorer.title}, {"attentions", json::array()}, {"steps", json::array()},
              {"source", explorer.source}};
  if (!explorer.steps_label.empty()) doc["steps_label"] = explorer.steps_label;
  for (const ExplorerAttention& a : explorer.attentions) doc["attentions"].push_back(attention_json(a));
  for (std::size_t i = 0; i < explorer.steps.size(); ++i)
    doc["steps"].push_back(step_json(explorer.steps[i], i, explorer.source.size()));

  // The static picture for where scripts do not run: every head of the first attention's last
  // layer, or else the steps' rows as one heatmap.
  std::string picture, what;
  HeatmapOptions options;
  options.title = explorer.title;
  if (!explorer.attentions.empty()) {
    const ExplorerAttention& a = explorer.attentions.front();
    const xt::xarray<double> last = xt::view(a.weights, a.weights.shape()[0] - 1);  // [heads, rows, cols]
    options.title += (options.title.empty() ? "" : " ") + std::string("(") + a.name + ", last layer)";
    picture = heads_svg(last, a.rows, a.cols, options);
    what = "every head of the " + a.name + " attention's last layer";
  } else {
    xt::xarray<double> rows = xt::zeros<double>({explorer.steps.size(), explorer.source.size()});
    std::vector<std::string> tokens;
    for (std::size_t t = 0; t < explorer.steps.size(); ++t) {
      tokens.push_back(explorer.steps[t].token);
      for (std::size_t s = 0; s < explorer.source.size(); ++s) rows(t, s) = explorer.steps[t].row[s];
    }
    picture = heatmap_svg(rows, tokens, explorer.source, options);
    what = "the decoding's attention rows, one per step";
  }
  // An <img> of a data: URI, not inline <svg>: Jupyter's sanitiser (an untrusted notebook) strips
  // inline SVG to its text, and keeps an image. The script removes it when it runs.
  const std::string alt = "Attention explorer" + (explorer.title.empty() ? "" : " (" + explorer.title + ")") +
                          ", static picture: " + what + ". Trust the notebook and run it for the interactive views.";
  const std::string img = "<img class=\"attn-fallback-img\" alt=\"" + attribute(alt) +
                          "\" style=\"max-width:100%\" src=\"data:image/svg+xml;base64," +
                          base64(without_cell_titles(picture)) + "\">";
  return "<div class=\"attn-explorer\" id=\"" + id + "\"><div class=\"attn-fallback\">" + img +
         "</div></div>\n<style>" + detail::kExplorerStyle + "</style>\n<script>" + detail::kExplorerScript +
         "\nattnExplorer(document.getElementById(\"" + id + "\"), " + script_json(doc) + ");</script>\n";
}

}  // namespace attn::viz
