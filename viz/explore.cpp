#include "explore.hpp"

#include "../core/errors.hpp"

#include <xtensor/xview.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

namespace attn::viz {

namespace {

// "encoder.3.self" -> {"encoder self", 3}; false for a name of another form.
bool layered_name(const std::string& name, std::string& kind, std::size_t& layer) {
  const std::size_t a = name.find('.'), b = name.rfind('.');
  if (a == std::string::npos || a == b) return false;
  const std::string part = name.substr(0, a), number = name.substr(a + 1, b - a - 1), what = name.substr(b + 1);
  if (number.empty() || !std::all_of(number.begin(), number.end(), [](unsigned char c) { return std::isdigit(c); }))
    return false;
  if (!((part == "encoder" && what == "self") || (part == "decoder" && (what == "self" || what == "cross")))) return false;
  kind = what == "cross" ? "cross" : part + " " + what;
  layer = std::stoul(number);
  return true;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Sentence `b` of weights [B, T', S'] or [B, H, T', S'], cut to [H, rows, cols].
xt::xarray<double> sentence_weights(const std::string& name, const Tensor& weights, std::size_t b, std::size_t rows,
                                    std::size_t cols) {
  const Shape shape = weights.shape();
  const bool ok = (shape.size() == 3 || shape.size() == 4) && b < shape[0] && rows <= shape[shape.size() - 2] &&
                  cols <= shape[shape.size() - 1];
  if (!ok)
    throw ShapeError("explore: attention '" + name + "': expected weights [B, T, S] or [B, H, T, S] with sentence " +
                     std::to_string(b) + " < B, " + std::to_string(rows) + " <= T and " + std::to_string(cols) +
                     " <= S (the tokens given), got " + shape_str(shape));
  xt::xarray<double> w = xt::view(weights.to_array(), b);  // [T', S'] or [H, T', S']
  if (w.dimension() == 2) w = xt::view(w, xt::newaxis(), xt::all(), xt::all());  // [1, T', S']
  return xt::view(w, xt::all(), xt::range(0, rows), xt::range(0, cols));         // [H, rows, cols]
}

// What the rows of hypothesis' `name` are, for the decoding view's label. A Transformer's
// "attention" is the head average of its last decoder layer's cross-attention ("decoder.<l>.cross").
std::string steps_label(const models::Hypothesis& hypothesis, const std::string& name, std::size_t heads) {
  std::size_t last = 0;
  bool layered = false;
  for (const auto& [other, steps] : hypothesis.attention) {
    std::string kind;
    std::size_t layer = 0;
    if (layered_name(other, kind, layer) && kind == "cross" && (!layered || layer > last)) {
      last = layer;
      layered = true;
    }
  }
  if (name == "attention" && layered) {
    const auto& cross = hypothesis.attention.at("decoder." + std::to_string(last) + ".cross");
    const std::size_t h = cross.empty() || cross[0].dim() < 2 ? 1 : cross[0].shape()[0];
    return "cross-attention of the last layer (" + std::to_string(last) + "), averaged over its " + std::to_string(h) +
           " heads";
  }
  if (heads > 1) return "'" + name + "' weights, averaged over " + std::to_string(heads) + " heads";
  return "'" + name + "' weights";
}

bool starts_with(const std::vector<std::int64_t>& tokens, const std::vector<std::int64_t>& prefix, std::size_t n) {
  return tokens.size() >= n && prefix.size() >= n && std::equal(prefix.begin(), prefix.begin() + long(n), tokens.begin());
}

// At step t of a beam search: which kept prefix the output continues, the written word's
// probability given the prefix before it (two kept prefixes' log-probabilities apart), and the
// other words kept after that same prefix, most probable first. Nothing when the output's
// prefixes were not kept (keep_greedy's sentence past the step the search dropped it).
void beam_step(const models::Hypothesis& h, std::size_t t, const std::function<std::string(std::int64_t)>& word,
               ExplorerStep& step) {
  const auto& kept = h.beam[t];
  for (std::size_t i = 0; i < kept.size(); ++i)
    if (kept[i].first.size() == t + 1 && starts_with(kept[i].first, h.tokens, t + 1)) step.continued = i;
  if (!step.continued) return;
  std::optional<double> before = 0.0;  // the log-probability of the prefix before step t
  if (t > 0) {
    before.reset();
    for (const auto& [tokens, log_prob] : h.beam[t - 1])
      if (tokens.size() == t && starts_with(tokens, h.tokens, t)) before = log_prob;
  }
  if (!before) return;
  step.probability = std::exp(kept[*step.continued].second - *before);
  for (std::size_t i = 0; i < kept.size(); ++i)
    if (i != *step.continued && kept[i].first.size() == t + 1 && starts_with(kept[i].first, h.tokens, t))
      step.alternatives.emplace_back(word(kept[i].first[t]), std::exp(kept[i].second - *before));
}

}  // namespace

Explorer explore(const std::map<std::string, Tensor>& attention, const std::vector<std::string>& source,
                 const std::vector<std::string>& target, std::size_t sentence) {
  if (source.empty() || target.empty())
    throw ValueError("explore: expected the sentence's source and target tokens, got " + std::to_string(source.size()) +
                     " and " + std::to_string(target.size()));
  // Per kind, the layers in order: "cross" -> {0: [H, T, S], 1: ...}.
  std::map<std::string, std::map<std::size_t, xt::xarray<double>>> layered;
  for (const auto& [name, weights] : attention) {
    std::string kind;
    std::size_t layer = 0;
    if (layered_name(name, kind, layer)) {
      const auto& rows = kind == "encoder self" ? source : target;
      const auto& cols = kind == "decoder self" ? target : source;
      layered[kind][layer] = sentence_weights(name, weights, sentence, rows.size(), cols.size());
    }
  }
  Explorer explorer;
  for (const std::string kind : {"encoder self", "decoder self", "cross"}) {
    if (!layered.count(kind)) continue;
    std::vector<xt::xarray<double>> layers;
    for (auto& [l, w] : layered[kind]) layers.push_back(w);
    xt::xarray<double> stacked = xt::zeros<double>({layers.size(), layers[0].shape()[0], layers[0].shape()[1],
                                                    layers[0].shape()[2]});  // [L, H, rows, cols]
    for (std::size_t l = 0; l < layers.size(); ++l) xt::view(stacked, l) = layers[l];
    explorer.attentions.push_back({kind, kind == "encoder self" ? source : target,
                                   kind == "decoder self" ? target : source, std::move(stacked), kind != "encoder self"});
  }
  if (explorer.attentions.empty())  // with layers, the other names are their head average: left out
    for (const auto& [name, weights] : attention) {
      if (ends_with(name, "_gate")) continue;
      const xt::xarray<double> w = sentence_weights(name, weights, sentence, target.size(), source.size());
      xt::xarray<double> four = xt::view(w, xt::newaxis(), xt::all(), xt::all(), xt::all());  // [1, H, T, S]
      explorer.attentions.push_back({name, target, source, std::move(four), true});
    }
  if (explorer.attentions.empty())
    throw ValueError("explore: no attention to show (the model has none, or forward() has not run)");
  return explorer;
}

Explorer explore(const models::Seq2Seq& model, const std::vector<std::string>& source,
                 const std::vector<std::string>& target, std::size_t sentence) {
  Explorer explorer = explore(model.last_attention(), source, target, sentence);
  explorer.title = model.type_name();
  return explorer;
}

Explorer explore_decoding(const models::Hypothesis& hypothesis, const std::vector<std::string>& source,
                          const std::function<std::string(std::int64_t)>& word, const DecodingView& view) {
  const auto found = hypothesis.attention.find(view.attention);
  if (found == hypothesis.attention.end()) {
    std::string names;
    for (const auto& [name, steps] : hypothesis.attention) names += (names.empty() ? "" : ", ") + name;
    throw ValueError("explore_decoding: the hypothesis has no attention named '" + view.attention + "' (it has: " +
                     (names.empty() ? "none" : names) + ")");
  }
  const std::vector<Tensor>& rows = found->second;
  const auto gate = hypothesis.attention.find(view.gate);
  Explorer explorer;
  explorer.source = source;
  const std::size_t heads = !rows.empty() && rows[0].dim() == 2 ? rows[0].shape()[0] : 1;
  explorer.steps_label = steps_label(hypothesis, view.attention, heads);
  for (std::size_t t = 0; t < hypothesis.tokens.size() && t < rows.size(); ++t) {
    xt::xarray<double> w = rows[t].to_array();  // [S'] or [H, S']
    if (w.dimension() == 2) w = xt::mean(w, {0});
    if (w.dimension() != 1 || w.shape()[0] < source.size())
      throw ShapeError("explore_decoding: attention '" + view.attention + "' at step " + std::to_string(t) +
                       ": expected [S] or [H, S] with S >= " + std::to_string(source.size()) +
                       " (the source tokens given), got " + shape_str(rows[t].shape()));
    ExplorerStep step;
    step.token = word(hypothesis.tokens[t]);
    step.row.assign(w.begin(), w.begin() + static_cast<long>(source.size()));
    if (t < hypothesis.beam.size())
      for (const auto& [tokens, log_prob] : hypothesis.beam[t]) {
        std::string text;
        for (std::int64_t id : tokens) text += (text.empty() ? "" : " ") + word(id);
        step.beam.emplace_back(text, log_prob);
      }
    if (t < hypothesis.beam.size()) beam_step(hypothesis, t, word, step);
    if (gate != hypothesis.attention.end() && t < gate->second.size()) step.gate = gate->second[t].to_array()(0);
    if (view.expected_position) {
      double position = 0.0;
      for (std::size_t j = 0; j < source.size(); ++j) position += double(j) * step.row[j];
      step.path = position;
    }
    explorer.steps.push_back(std::move(step));
  }
  return explorer;
}

Explorer explore_decoding(const models::Hypothesis& hypothesis, const std::vector<std::string>& source,
                          const data::Vocab& target, const DecodingView& view) {
  return explore_decoding(
      hypothesis, source,
      [&target](std::int64_t id) {
        return id >= 0 && std::size_t(id) < target.size() ? target.token(id) : "<id " + std::to_string(id) + ">";
      },
      view);
}

}  // namespace attn::viz
