#include "grid_decode.hpp"

#include "../core/ops.hpp"
#include "../nn/loss.hpp"

#include <xtensor/xview.hpp>

#include <algorithm>
#include <string>

namespace attn::models {

std::vector<Hypothesis> greedy_caption(GridCaptioner& model, const Tensor& features, const DecodeOptions& options) {
  if (options.max_len < 1) throw ValueError("greedy_caption: max_len must be at least 1, got 0");
  no_grad guard;
  detail::EvalScope eval(model);
  DecoderState state = model.start(features);  // checks the features
  const std::size_t B = features.size(0);
  Index y = Index::from_shape({B});            // y_{t-1}: <bos> first
  y.fill(options.bos_id);
  std::vector<Hypothesis> out(B);
  for (std::size_t t = 0; t < options.max_len; ++t) {
    const xt::xarray<double> log_probs = log_softmax(model.step(state, y), -1).to_array();  // [B, V]
    bool all_finished = true;
    for (std::size_t b = 0; b < B; ++b) {
      Hypothesis& h = out[b];
      y(b) = options.pad_id;  // rows that have finished read <pad>
      if (h.finished) continue;
      const auto row = xt::view(log_probs, b);
      const auto best = static_cast<std::int64_t>(std::max_element(row.begin(), row.end()) - row.begin());
      y(b) = best;
      h.tokens.push_back(best);
      h.log_prob += log_probs(b, static_cast<std::size_t>(best));
      for (const auto& [name, weights] : state.attention)  // [B, N] each
        h.attention[name].push_back(select(weights, 0, static_cast<long>(b)));
      h.finished = best == options.eos_id;
      all_finished = all_finished && h.finished;
    }
    if (all_finished) break;
  }
  for (Hypothesis& h : out) h.score = h.log_prob;
  return out;
}

Tensor attention_grid(const Hypothesis& hypothesis, std::size_t rows, const std::string& name) {
  Tensor weights = attention_matrix(hypothesis, name);  // [T, N]
  const std::size_t N = weights.size(1);
  if (rows == 0 || N % rows != 0)
    throw ShapeError("attention_grid: cannot lay " + std::to_string(N) + " cells out in " + std::to_string(rows) +
                     " rows");
  return reshape(weights, {-1, static_cast<long>(rows), static_cast<long>(N / rows)});  // [T, rows, N / rows]
}

}  // namespace attn::models
