// Lab 19's grader: hard attention, Show, Attend and Tell's section 4.1 (Xu et al. 2015;
// labs/19_hard_attention/README.md).
//
//   lab::hard_attention::grade(lab::hard_attention::HardAttention{sample, context, surrogate});
//   // "lab 19: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace hard_attention {

using attn::Index;
using Draws = xt::xarray<double>;

// The moving average b of past rewards, kept from batch to batch by the caller (as
// models::ReinforceBaseline): the first batch sets b to its own mean reward.
struct Baseline {
  double value = 0.0;
  bool started = false;
};

// The weights of the surrogate's terms (as models::CaptionLossOptions).
struct Options {
  double reinforce = 1.0;       // lambda_r: the weight of the choices' term
  double entropy = 0.01;        // lambda_e: the weight of the entropy bonus
  double baseline_decay = 0.9;  // b <- decay b + (1 - decay) mean reward
};

struct HardAttention {
  // scores e [B, N] (the attention's scores, before the softmax), u [B] (one uniform draw in [0, 1) per
  // row) -> k [B]: the first cell k whose cumulative weight a_0 + ... + a_k exceeds u, a = softmax(e).
  std::function<Index(const Tensor& scores, const Draws& u)> sample;
  // scores e [B, N], u [B], features h [B, N, H] -> c [B, H]: the feature vector of the cell sample(e, u)
  // draws, as one_hot(k) times the features, so that gradients reach the features.
  std::function<Tensor(const Tensor& scores, const Draws& u, const Tensor& features)> context;
  // scores e [B, N], the sampled cells k [B], rewards R [B] (log p(y | k), made from the model: they carry
  // gradients), the baseline (read, then updated), the options -> the scalar loss L whose gradient is the
  // REINFORCE estimate:
  //   L = (1/B) sum_b [ -R_b - lambda_r (R_b - b) log a_{b,k_b} - lambda_e H(a_b) ],  R_b - b a constant.
  std::function<Tensor(const Tensor& scores, const Index& cells, const Tensor& rewards, Baseline& baseline,
                       const Options& options)>
      surrogate;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const HardAttention& h, std::ostream& os = std::cout);

}  // namespace hard_attention
}  // namespace lab
