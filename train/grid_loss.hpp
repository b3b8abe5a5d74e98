// The training objective of Show, Attend and Tell (Xu et al. 2015), chapter 4.
//
// Soft attention is differentiable: minimize the caption's negative log-likelihood
//   L = -log p(y | grid)
// plus, optionally, the "doubly stochastic" penalty. Every a_t sums to 1 over the
// cells; the penalty asks the other sum, over the steps, to be close to 1 for
// every cell too, so that over a caption each part of the image gets looked at:
//   L += lambda * sum_j (1 - sum_t a_tj)^2
//
// Hard attention picks ONE cell k_t ~ a_t per step, and a sample has no gradient.
// The paper maximizes a lower bound of log p(y | grid) whose gradient is estimated
// from the sampled cells by the score-function (REINFORCE) estimator:
//   d/dW ~ d log p(y | k, grid)/dW                              (the words, given the cells)
//        + lambda_r (log p(y | k, grid) - b) d log p(k | grid)/dW  (the choices, scaled by how well they did)
//        + lambda_e d H(a)/dW                                    (entropy: keep exploring)
// with p(k | grid) = prod_t a_{t,k_t} and b a moving average of past rewards
// log p(y | k, grid), the baseline that lowers the estimator's variance:
//   b <- decay * b + (1 - decay) * mean reward of the batch.
// The loss below is the surrogate whose gradient is that estimate: the reward
// enters as a constant (no gradient flows into it).
//
// Everything is divided by the number of caption tokens (<eos> included, <pad>
// not), so lambda and lambda_r keep the paper's per-caption meaning.
//
//   ReinforceBaseline baseline;
//   CaptionerOutput out = model.forward_all(batch.features, batch.tgt_in);
//   CaptionLoss l = caption_loss(out, batch.tgt_out, options, baseline);
//   l.loss.backward();
#pragma once

#include "../models/grid_captioner.hpp"

namespace attn::models {

struct CaptionLossOptions {
  double doubly_stochastic = 0.0;  // lambda (0: off)
  double reinforce = 1.0;          // lambda_r: the weight of the choices' term (hard attention)
  double entropy = 0.01;           // lambda_e: the weight of the entropy bonus (hard attention; added for every
                                   // row of a batch that samples, the rows read soft included)
  double baseline_decay = 0.9;     // of the moving-average baseline b
};

// The moving average b of past rewards, kept from batch to batch by the caller.
struct ReinforceBaseline {
  double value = 0.0;
  bool started = false;  // the first batch sets b to its own mean reward
};

struct CaptionLoss {
  Tensor loss;          // the scalar to call backward() on
  double nll = 0.0;     // -log p(y_t | ...) per caption token
  double penalty = 0.0; // the doubly stochastic term, per caption: mean_b sum_j (1 - sum_t a_tj)^2
  double reward = 0.0;  // hard attention in training: mean over captions of log p(y | sampled cells)
  double entropy = 0.0; // mean entropy H(a_t) per caption token, in nats
};

// out from model.forward_all(features, tgt_in); tgt_out [B, T] the words to predict
// (padded with <pad>, which counts nowhere). The REINFORCE terms are added when
// out.choice_log_prob is defined (hard attention in training mode), and then
// `baseline` is updated.
CaptionLoss caption_loss(const CaptionerOutput& out, const Index& tgt_out, const CaptionLossOptions& options,
                         ReinforceBaseline& baseline);

// The baseline as a resumed run stores it (EpochFamily::save_state): [value, started as 0 or 1].
Tensor baseline_state(const ReinforceBaseline& baseline);
// Back from that tensor; IOError naming `who` unless the value is finite and started 0 or 1.
ReinforceBaseline read_baseline_state(const Tensor& state, const std::string& who);

}  // namespace attn::models
