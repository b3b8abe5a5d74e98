#include "explorer.hpp"

#include "heads.hpp"

#include "../core/errors.hpp"

#include <nlohmann/json.hpp>
#include <xtensor/xview.hpp>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <random>

namespace attn::viz {

namespace detail {
// viz/explorer/explorer.js and explorer.css, embedded by tools/embed_text.py (viz/meson.build).
extern const char* const kExplorerScript;
extern const char* const kExplorerStyle;
}  // namespace detail

namespace {

using nlohmann::json;

// A weight as JSON: NaN and infinities have no JSON form, and the script shows null as "–".
json number(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

std::string shape_of(const xt::xarray<double>& a) {
  std::string s = "[";
  for (std::size_t d = 0; d < a.dimension(); ++d) s += (d ? ", " : "") + std::to_string(a.shape()[d]);
  return s + "]";
}

json attention_json(const ExplorerAttention& a) {
  const auto& w = a.weights;
  if (w.dimension() != 4 || w.shape()[2] != a.rows.size() || w.shape()[3] != a.cols.size() || w.shape()[0] == 0 ||
      w.shape()[1] == 0 || a.rows.empty() || a.cols.empty())
    throw ShapeError("explorer_html: attention '" + a.name + "': expected weights [layers, heads, " +
                     std::to_string(a.rows.size()) + ", " + std::to_string(a.cols.size()) + "] for its " +
                     std::to_string(a.rows.size()) + " rows and " + std::to_string(a.cols.size()) +
                     " columns (at least 1 of each), got " + shape_of(w));
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
  return {{"name", a.name}, {"rows", a.rows}, {"cols", a.cols}, {"weights", std::move(layers)}};
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
  for (const ExplorerAttention& a : explorer.attentions) doc["attentions"].push_back(attention_json(a));
  for (std::size_t i = 0; i < explorer.steps.size(); ++i)
    doc["steps"].push_back(step_json(explorer.steps[i], i, explorer.source.size()));

  // The static picture for where scripts do not run: every head of the first attention's last
  // layer, or else the steps' rows as one heatmap.
  std::string picture;
  HeatmapOptions options;
  options.title = explorer.title;
  if (!explorer.attentions.empty()) {
    const ExplorerAttention& a = explorer.attentions.front();
    const xt::xarray<double> last = xt::view(a.weights, a.weights.shape()[0] - 1);  // [heads, rows, cols]
    options.title += (options.title.empty() ? "" : " ") + std::string("(") + a.name + ", last layer)";
    picture = heads_svg(last, a.rows, a.cols, options);
  } else {
    xt::xarray<double> rows = xt::zeros<double>({explorer.steps.size(), explorer.source.size()});
    std::vector<std::string> tokens;
    for (std::size_t t = 0; t < explorer.steps.size(); ++t) {
      tokens.push_back(explorer.steps[t].token);
      for (std::size_t s = 0; s < explorer.source.size(); ++s) rows(t, s) = explorer.steps[t].row[s];
    }
    picture = heatmap_svg(rows, tokens, explorer.source, options);
  }
  return "<div class=\"attn-explorer\" id=\"" + id + "\"><div class=\"attn-fallback\">" + picture +
         "</div></div>\n<style>" + detail::kExplorerStyle + "</style>\n<script>" + detail::kExplorerScript +
         "\nattnExplorer(document.getElementById(\"" + id + "\"), " + script_json(doc) + ");</script>\n";
}

}  // namespace attn::viz
