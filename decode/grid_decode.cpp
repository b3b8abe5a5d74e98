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

namespace {

// The captioner as decode.hpp's IncrementalDecoder, so that beam_search runs over it:
// step() reads the last word of the prefix, y_{t-1}.
class CaptionSteps : public IncrementalDecoder {
 public:
  explicit CaptionSteps(GridCaptioner& model) : IncrementalDecoder("GridCaptioner"), model_(model) {
    register_module("captioner", model);
    train(model.is_training());  // so that EvalScope, which restores this module's mode, restores the captioner's
  }
  Tensor step(DecoderState& state, const Index& prefix) override {
    const Index last = xt::view(prefix, xt::all(), prefix.shape()[1] - 1);  // y_{t-1}: [B]
    return model_.step(state, last);                                        // [B, V]
  }
  std::string main_attention() const override { return "attention"; }

 private:
  GridCaptioner& model_;
};

}  // namespace

std::vector<std::vector<Hypothesis>> beam_caption_n_best(GridCaptioner& model, const Tensor& features,
                                                         const DecodeOptions& options) {
  if (options.beam_size < 1) throw ValueError("beam_caption: beam_size must be at least 1, got 0");
  if (options.max_len < 1) throw ValueError("beam_caption: max_len must be at least 1, got 0");
  CaptionSteps steps(model);
  no_grad guard;
  detail::EvalScope eval(steps);
  return beam_search_n_best(steps, model.start(features), options);  // start() checks the features
}

std::vector<Hypothesis> beam_caption(GridCaptioner& model, const Tensor& features, const DecodeOptions& options) {
  std::vector<Hypothesis> best;
  for (auto& hypotheses : beam_caption_n_best(model, features, options)) best.push_back(std::move(hypotheses.front()));
  return best;
}

std::vector<Hypothesis> greedy_caption(ShowAttendTell& model, const Tensor& images, const DecodeOptions& options) {
  no_grad guard;
  detail::EvalScope eval(model);  // before encode(): batch norm reads its running statistics
  return greedy_caption(model.captioner, model.encode(images), options);
}

std::vector<Hypothesis> beam_caption(ShowAttendTell& model, const Tensor& images, const DecodeOptions& options) {
  no_grad guard;
  detail::EvalScope eval(model);
  return beam_caption(model.captioner, model.encode(images), options);
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
