// Lab 19's worked solution (models/grid_captioner.cpp samples the cells and train/grid_loss.cpp builds the
// same surrogate over a whole caption).
#pragma once

#include "labs/grader/lab19_hard_attention.hpp"

namespace lab {
namespace solutions {
namespace hard_attention {

using attn::Index;
using attn::Tensor;
using lab::hard_attention::Baseline;
using lab::hard_attention::Draws;
using lab::hard_attention::Options;

inline Index sample(const Tensor& scores, const Draws& u) {
  const xt::xarray<double> a = attn::softmax(scores, -1).to_array();  // the weights, not the scores: [B, N]
  const std::size_t B = a.shape()[0], N = a.shape()[1];
  Index cells = Index::from_shape({B});
  for (std::size_t b = 0; b < B; ++b) {
    double cumulative = 0.0;
    std::size_t k = 0;
    // The first k with a_0 + ... + a_k > u: a cell of weight 0 is never drawn, and a u above the rounded
    // total (the sum of the weights may fall short of 1 by an ulp) takes the last cell.
    while (k + 1 < N && (cumulative += a(b, k)) <= u(b)) ++k;
    cells(b) = static_cast<std::int64_t>(k);
  }
  return cells;
}

inline Tensor context(const Tensor& scores, const Draws& u, const Tensor& features) {
  const Index cells = sample(scores, u);
  // A one-hot row times the features picks the sampled cell's vector, and the product carries gradients to it.
  Tensor chosen = attn::one_hot(cells, features.size(1), features.dtype());  // [B, N]
  return attn::squeeze(attn::matmul(attn::unsqueeze(chosen, 1), features), 1);  // [B, 1, N] x [B, N, H] -> [B, H]
}

inline Tensor surrogate(const Tensor& scores, const Index& cells, const Tensor& rewards, Baseline& baseline,
                        const Options& options) {
  const std::size_t B = scores.size(0), N = scores.size(1);
  Tensor log_weights = attn::log_softmax(scores, -1);                                  // log a: [B, N]
  Tensor entropy = -attn::sum(attn::softmax(scores, -1) * log_weights, {-1});          // H(a_b): [B]
  Tensor choice = attn::sum(attn::one_hot(cells, N, scores.dtype()) * log_weights, {-1});  // log a_{b,k_b}: [B]
  // The reward and the baseline enter the choices' term as constants: only log a_k carries its gradient.
  const xt::xarray<double> reward = rewards.detach().to_array();  // [B]
  const double mean_reward = xt::mean(reward)();
  if (!baseline.started) baseline = {mean_reward, true};  // the first batch: b is its own mean reward
  Tensor advantage = Tensor(xt::xarray<double>(reward - baseline.value), false);  // R_b - b: [B]
  Tensor total = -attn::sum(rewards) - options.reinforce * attn::sum(advantage * choice) -
                 options.entropy * attn::sum(entropy);
  // The average moves after it is used: b for this batch is the average of the batches before.
  baseline.value = options.baseline_decay * baseline.value + (1.0 - options.baseline_decay) * mean_reward;
  return total / static_cast<double>(B);
}

inline lab::hard_attention::HardAttention solution() { return {sample, context, surrogate}; }

}  // namespace hard_attention
}  // namespace solutions
}  // namespace lab
