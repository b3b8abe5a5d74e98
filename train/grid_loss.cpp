#include "grid_loss.hpp"

#include "../core/ops.hpp"
#include "../nn/loss.hpp"
#include "../data/vocab.hpp"

#include <cmath>
#include <string>

namespace attn::models {

CaptionLoss caption_loss(const CaptionerOutput& out, const Index& tgt_out, const CaptionLossOptions& options,
                         ReinforceBaseline& baseline) {
  if (!out.logits.defined() || !out.weights.defined())
    throw ValueError("caption_loss: expected the output of GridCaptioner::forward_all, got undefined tensors");
  const Shape shape = out.logits.shape();
  const Shape targets(tgt_out.shape().begin(), tgt_out.shape().end());
  if (shape.size() != 3 || targets != Shape{shape[0], shape[1]})
    throw ShapeError("caption_loss: expected logits [B, T, V] and tgt_out [B, T], got logits " + shape_str(shape) +
                     " and tgt_out " + shape_str(targets));
  if (options.baseline_decay < 0 || options.baseline_decay > 1)
    throw ValueError("caption_loss: baseline_decay must be in [0, 1], got " + std::to_string(options.baseline_decay));
  const Dtype dtype = out.logits.dtype();
  const std::size_t B = shape[0];

  // Which steps count: 1 for a caption word or <eos>, 0 for padding.
  const xt::xarray<double> real = xt::cast<double>(xt::not_equal(tgt_out, data::Vocab::pad_id));  // [B, T]
  const double tokens = xt::sum(real)();
  if (tokens == 0) throw ValueError("caption_loss: every target is <pad>, there is nothing to learn from");
  Tensor mask = tensor(real, false, dtype);  // [B, T]

  // -log p(y_t | y_<t, grid) at every step, 0 at padding.
  Tensor nll = nn::cross_entropy(out.logits, tgt_out, data::Vocab::pad_id, 0.0, nn::Reduction::None);  // [B, T]
  Tensor total = sum(nll);
  CaptionLoss result;
  result.nll = total.item() / tokens;

  if (options.doubly_stochastic != 0.0) {
    Tensor attended = sum(out.weights * unsqueeze(mask, -1), {1});  // sum_t a_tj over real steps: [B, N]
    Tensor penalty = sum(pow(1.0 - attended, 2.0));                 // sum_b sum_j (1 - sum_t a_tj)^2
    result.penalty = penalty.item() / static_cast<double>(B);
    total = total + options.doubly_stochastic * penalty;
  }

  if (out.choice_log_prob.defined()) {
    // Reward of each caption: log p(y | sampled cells), a constant here. The baseline and the
    // reported reward are over the images that sampled: an image read soft (the per-image mixture)
    // makes no choice, and its higher reward would push every sampled choice down.
    const xt::xarray<double> reward = -xt::sum(nll.to_array(), {1});  // [B]
    const xt::xarray<double> sampled = out.sampled.size() == B ? xt::xarray<double>(xt::cast<double>(out.sampled))
                                                               : xt::xarray<double>(xt::ones<double>({B}));  // [B]
    const double count = xt::sum(sampled)();
    const double mean_reward = count > 0 ? xt::sum(reward * sampled)() / count : 0.0;
    if (!baseline.started) baseline = {mean_reward, true};
    const xt::xarray<double> advantage = reward - baseline.value;    // [B]
    Tensor choices = sum(out.choice_log_prob * mask, {1});           // log p(k | grid) per caption: [B]
    Tensor weighted = sum(choices * tensor(advantage * sampled, false, dtype));  // sum_b (R_b - b) log p(k_b | grid)
    Tensor entropy = sum(out.entropy * mask);                          // sum of H(a_t) over real steps
    total = total - options.reinforce * weighted - options.entropy * entropy;
    result.reward = mean_reward;
    result.entropy = entropy.item() / tokens;
    baseline.value = options.baseline_decay * baseline.value + (1.0 - options.baseline_decay) * mean_reward;
  }
  result.loss = total / tokens;
  return result;
}

Tensor baseline_state(const ReinforceBaseline& baseline) {
  return Tensor(xt::xarray<double>({baseline.value, baseline.started ? 1.0 : 0.0}));
}

ReinforceBaseline read_baseline_state(const Tensor& state, const std::string& who) {
  const xt::xarray<double> b = state.to_array();
  if (b.size() != 2 || !std::isfinite(b(0)) || (b(1) != 0 && b(1) != 1))
    throw IOError(who + ": the saved REINFORCE baseline must be a finite value and a 0 or 1");
  ReinforceBaseline baseline;
  baseline.value = b(0);
  baseline.started = b(1) == 1;
  return baseline;
}

}  // namespace attn::models
