// Greedy decoding, and the pieces it shares with beam search (beam_search.cpp).
#include "decode.hpp"

#include "../models/checks.hpp"

#include "../core/ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn::models {

double length_normalized_score(double log_prob, std::size_t length, const DecodeOptions& options) {
  const double n = static_cast<double>(std::max<std::size_t>(length, 1));
  switch (options.length_penalty) {
    case LengthPenalty::None: return log_prob;
    case LengthPenalty::Average: return log_prob / n;
    case LengthPenalty::GNMT: return log_prob / std::pow((5.0 + n) / 6.0, options.alpha);
  }
  return log_prob;
}

double coverage_score(const xt::xarray<double>& weights, std::size_t src_length, double beta) {
  if (weights.dimension() != 2 && weights.dimension() != 3)
    throw ShapeError("coverage_score: expected attention weights [T, S] or [T, H, S], got " +
                     std::to_string(weights.dimension()) + " dimensions");
  const std::size_t T = weights.shape()[0], S = weights.shape().back();
  const std::size_t heads = weights.dimension() == 3 ? weights.shape()[1] : 1;
  if (src_length > S)
    throw ValueError("coverage_score: source length " + std::to_string(src_length) + " exceeds the " +
                     std::to_string(S) + " positions of the weights");
  double total = 0.0;
  for (std::size_t i = 0; i < src_length; ++i) {
    double c = 0.0;  // c_i: the weight word i received over all steps (and heads, averaged)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t h = 0; h < heads; ++h) c += (heads > 1 ? weights(t, h, i) : weights.flat(t * S + i)) / double(heads);
    total += std::log(std::max(std::min(c, 1.0), 1e-10));
  }
  return beta * total;
}

Tensor attention_matrix(const Hypothesis& hypothesis, const std::string& name) {
  auto it = hypothesis.attention.find(name);
  if (it == hypothesis.attention.end() || it->second.empty())
    throw ValueError("attention_matrix: the hypothesis has no attention named '" + name + "'");
  return stack(it->second, 0);  // [T, S] or [T, H, S]
}

namespace detail {

void check_logits(const char* op, const Tensor& logits, std::size_t rows) {
  const Shape shape = logits.shape();
  if (shape.size() != 2 || shape[0] != rows || shape[1] == 0)
    throw ShapeError(std::string(op) + ": expected step() to return logits [" + std::to_string(rows) +
                     ", V], got " + shape_str(shape));
}

Index first_prefix(std::size_t rows, std::int64_t value) {
  Index prefix = Index::from_shape({rows, 1});  // [rows, 1]
  prefix.fill(value);
  return prefix;
}

Index extend_prefix(const Index& prefix, const std::vector<std::size_t>& rows, const std::vector<std::int64_t>& tokens) {
  const std::size_t t = prefix.shape()[1];
  Index out = Index::from_shape({rows.size(), t + 1});  // [N, t + 1]
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = 0; j < t; ++j) out(i, j) = prefix(rows[i], j);
    out(i, t) = tokens[i];
  }
  return out;
}

void collect_attention(const std::vector<std::map<std::string, Tensor>>& history,
                       const std::vector<std::vector<std::size_t>>& parents, std::size_t step, std::size_t row,
                       Hypothesis& hypothesis) {
  hypothesis.attention.clear();
  for (std::size_t s = step + 1; s-- > 0;) {
    for (const auto& [name, weights] : history[s])
      hypothesis.attention[name].push_back(select(weights, 0, static_cast<long>(row)));  // [S] or [H, S]
    if (s > 0 && !parents.empty()) row = parents[s - 1][row];
  }
  for (auto& [name, steps] : hypothesis.attention) std::reverse(steps.begin(), steps.end());
}

}  // namespace detail

std::vector<Hypothesis> greedy_decode(Seq2Seq& model, const Index& src, const std::vector<std::size_t>& src_lengths,
                                      const DecodeOptions& options) {
  check_source("greedy_decode", src, src_lengths);
  if (options.max_len < 1) throw ValueError("greedy_decode: max_len must be at least 1, got 0");
  no_grad guard;
  detail::EvalScope eval(model);  // before start(): the encoder runs in eval mode too
  return greedy_decode(model, model.start(src, src_lengths), options);
}

std::vector<Hypothesis> greedy_decode(IncrementalDecoder& model, DecoderState state, const DecodeOptions& options) {
  if (options.max_len < 1) throw ValueError("greedy_decode: max_len must be at least 1, got 0");
  const std::size_t batch = state.src_lengths.size();
  if (batch == 0) throw ValueError("greedy_decode: the decoder state has no rows (its src_lengths is empty)");
  no_grad guard;
  detail::EvalScope eval(model);

  Index prefix = detail::first_prefix(batch, options.bos_id);  // [B, 1]
  std::vector<Hypothesis> out(batch);
  std::vector<std::map<std::string, Tensor>> history;  // the attention of every step

  std::vector<std::size_t> same_rows(batch);
  for (std::size_t b = 0; b < batch; ++b) same_rows[b] = b;

  for (std::size_t t = 0; t < options.max_len; ++t) {
    Tensor logits = model.step(state, prefix);  // [B, V]
    detail::check_logits("greedy_decode", logits, batch);
    const xt::xarray<double> log_probs = log_softmax(logits, -1).to_array();  // [B, V]
    history.push_back(state.attention);

    const std::size_t vocab = log_probs.shape()[1];
    std::vector<std::int64_t> next(batch, options.pad_id);
    bool all_finished = true;
    for (std::size_t b = 0; b < batch; ++b) {
      Hypothesis& h = out[b];
      if (h.finished) continue;
      std::size_t best = 0;  // the first maximum, as argmax
      for (std::size_t v = 1; v < vocab; ++v)
        if (log_probs(b, v) > log_probs(b, best)) best = v;
      next[b] = static_cast<std::int64_t>(best);
      h.tokens.push_back(next[b]);
      h.log_prob += log_probs(b, best);
      h.finished = next[b] == options.eos_id;
      all_finished = all_finished && h.finished;
    }
    if (all_finished) break;
    prefix = detail::extend_prefix(prefix, same_rows, next);  // [B, t + 2]
  }

  for (std::size_t b = 0; b < batch; ++b) {
    Hypothesis& h = out[b];
    h.score = length_normalized_score(h.log_prob, h.tokens.size(), options);
    if (!h.tokens.empty()) detail::collect_attention(history, {}, h.tokens.size() - 1, b, h);
  }
  return out;
}

}  // namespace attn::models
