// Wrong solutions of lab 19; labs/tests/test_lab19.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/19_hard_attention.hpp"

namespace lab {
namespace planted {
namespace hard_attention {

using attn::Index;
using attn::Tensor;
using lab::hard_attention::Baseline;
using lab::hard_attention::Draws;
using lab::hard_attention::HardAttention;
using lab::hard_attention::Options;
namespace right = lab::solutions::hard_attention;

enum class Sampler { right, raw_scores, at_or_above, one_past, argmax, no_last_cell, not_reset, from_last };

// A learner's sampler with one mistake.
inline Index sample(Sampler s, const Tensor& scores, const Draws& u) {
  if (s == Sampler::right) return right::sample(scores, u);
  const xt::xarray<double> a = s == Sampler::raw_scores ? scores.to_array() : attn::softmax(scores, -1).to_array();
  const std::size_t B = a.shape()[0], N = a.shape()[1];
  Index cells = Index::from_shape({B});
  double carried = 0.0;  // Sampler::not_reset: declared outside the loop over the rows
  for (std::size_t b = 0; b < B; ++b) {
    std::size_t k = 0;
    if (s == Sampler::not_reset) {
      while (k + 1 < N && (carried += a(b, k)) <= u(b)) ++k;
    } else if (s == Sampler::from_last) {  // the cumulative sum walked from the last cell down
      double cumulative = 0.0;
      k = N - 1;
      while (k > 0 && (cumulative += a(b, k)) <= u(b)) --k;
    } else if (s == Sampler::argmax) {
      for (std::size_t j = 1; j < N; ++j)
        if (a(b, j) > a(b, k)) k = j;
    } else if (s == Sampler::no_last_cell) {  // no fallback: past the last cell when no sum exceeds u
      double cumulative = 0.0;
      while (k < N && (cumulative += a(b, k)) <= u(b)) ++k;
    } else if (s == Sampler::one_past) {  // the sum before the cell's own weight: one cell too far
      double before = 0.0;
      while (k + 1 < N && before <= u(b)) before += a(b, k++);
    } else {  // >= instead of >, or the scores themselves
      double cumulative = 0.0;
      while (k + 1 < N && (s == Sampler::at_or_above ? (cumulative += a(b, k)) < u(b) : (cumulative += a(b, k)) <= u(b)))
        ++k;
    }
    cells(b) = std::int64_t(k);
  }
  return cells;
}

inline HardAttention with_sampler(Sampler s) {
  HardAttention h = right::solution();
  h.sample = [s](const Tensor& e, const Draws& u) { return sample(s, e, u); };
  h.context = [s](const Tensor& e, const Draws& u, const Tensor& features) {
    Tensor chosen = attn::one_hot(sample(s, e, u), features.size(1), features.dtype());
    return attn::squeeze(attn::matmul(attn::unsqueeze(chosen, 1), features), 1);
  };
  return h;
}

struct Surrogate {
  bool no_baseline = false, baseline_flows = false, reward_sign = false, entropy_sign = false,
       reward_flows = false, updated_first = false, decay_swapped = false, summed = false, entropy_detached = false,
       first_zero = false, batch_mean = false, no_log = false, no_reward = false, entropy_mean = false,
       moved_by_sum = false, started_never_set = false;
};

// A learner's surrogate with one mistake.
inline Tensor surrogate(const Surrogate& o, const Tensor& scores, const Index& cells, const Tensor& rewards,
                        Baseline& baseline, const Options& options) {
  const std::size_t B = scores.size(0), N = scores.size(1);
  Tensor log_a = attn::log_softmax(scores, -1);
  Tensor entropy = o.entropy_mean ? -attn::mean(attn::softmax(scores, -1) * log_a, {-1})
                                  : -attn::sum(attn::softmax(scores, -1) * log_a, {-1});
  if (o.entropy_detached) entropy = entropy.detach();  // H from the weights' values: no gradient
  Tensor choice = attn::sum(attn::one_hot(cells, N) * (o.no_log ? attn::softmax(scores, -1) : log_a), {-1});
  const double mean = xt::mean(rewards.to_array())();
  if (o.first_zero && !baseline.started) baseline = {0.0, true};  // the authors' code starts b at 0
  // The baseline kept as a tensor: on the first batch, the mean of the rewards' tensor, its gradient left on.
  Tensor b = baseline.started ? Tensor(xt::xarray<double>{baseline.value}) : attn::mean(rewards);
  if (!o.baseline_flows) b = b.detach();
  if (o.batch_mean) b = Tensor(xt::xarray<double>{mean});  // every batch's b its own mean reward
  const double before = baseline.started ? baseline.value : mean;
  const double moved_by = o.moved_by_sum ? double(xt::sum(rewards.to_array())()) : mean;
  const double after = o.decay_swapped ? options.baseline_decay * moved_by + (1.0 - options.baseline_decay) * before
                                       : options.baseline_decay * before + (1.0 - options.baseline_decay) * moved_by;
  baseline = {after, !o.started_never_set || baseline.started};
  if (o.updated_first) b = Tensor(xt::xarray<double>{after});
  Tensor reward = o.reward_flows ? rewards : rewards.detach();
  Tensor advantage = o.no_baseline ? reward : reward - b;
  Tensor choices = attn::sum(advantage * choice);
  Tensor total = (o.no_reward ? Tensor(xt::xarray<double>(0.0)) : -attn::sum(rewards)) + (o.reward_sign ? 1.0 : -1.0) * options.reinforce * choices +
                 (o.entropy_sign ? 1.0 : -1.0) * options.entropy * attn::sum(entropy);
  return o.summed ? total : total / double(B);
}

inline HardAttention with_surrogate(Surrogate o) {
  HardAttention h = right::solution();
  h.surrogate = [o](const Tensor& e, const Index& k, const Tensor& R, Baseline& b, const Options& opt) {
    return surrogate(o, e, k, R, b, opt);
  };
  return h;
}

inline std::vector<Planted<HardAttention>> all() {
  std::vector<Planted<HardAttention>> out;
  auto add_s = [&](const std::string& m, Surrogate o, const std::string& at) { out.push_back({m, with_surrogate(o), at}); };
  Surrogate o;
  o = {};
  o.no_baseline = true;
  add_s("the baseline not subtracted", o, "the baseline not subtracted");
  o = {};
  o.baseline_flows = true;
  add_s("the baseline's gradient flowing (the first batch's mean of the rewards not detached)", o,
        "the baseline carries a gradient");
  o = {};
  o.reward_sign = true;
  add_s("the sign of the reward flipped", o, "the sign of the reward flipped");
  o = {};
  o.entropy_sign = true;
  add_s("the entropy bonus with the wrong sign", o, "the entropy bonus with the wrong sign");
  o = {};
  o.reward_flows = true;
  add_s("the reward not detached in the advantage", o, "the reward not detached");
  o = {};
  o.updated_first = true;
  add_s("the baseline moved before it is used", o, "the baseline moved before it is used");
  o = {};
  o.decay_swapped = true;
  add_s("the moving average's weights swapped (decay on the new mean)", o, "the moving average's weights swapped");
  o = {};
  o.summed = true;
  add_s("summed over the batch, not averaged", o, "summed over the batch");
  o = {};
  o.entropy_detached = true;
  add_s("the entropy made from the weights' values (no gradient from the bonus)", o,
        "the entropy bonus adds no gradient");
  o = {};
  o.first_zero = true;
  add_s("b = 0 on the first batch (the authors' code's start)", o, "b = 0 on the first batch");
  o = {};
  o.batch_mean = true;
  add_s("b = this batch's mean reward on every batch", o, "b = this batch's mean reward on a batch after the first");
  o = {};
  o.no_log = true;
  add_s("the chosen cell's weight a_k instead of log a_k", o, "the chosen cell's weight a_k where its log belongs");
  o = {};
  o.no_reward = true;
  add_s("the -R_b term left out", o, "the -R_b term left out");
  o = {};
  o.entropy_mean = true;
  add_s("the entropy averaged over the cells", o, "the entropy averaged over the cells");
  o = {};
  o.moved_by_sum = true;
  add_s("the baseline moved towards the summed reward", o, "moved towards the batch's summed reward");
  o = {};
  o.started_never_set = true;
  add_s("started never set on the first batch", o, "started is still false");
  out.push_back({"the cumulative sum carried over from row to row", with_sampler(Sampler::not_reset),
                 "the cumulative sum carried over from one row to the next"});
  out.push_back({"the cumulative sum walked from the last cell", with_sampler(Sampler::from_last),
                 "the cumulative sum walked from the last cell"});
  out.push_back({"sampled from the scores, not the softmax weights", with_sampler(Sampler::raw_scores),
                 "sampled from the scores, not the softmax weights"});
  out.push_back({"an off-by-one in the cumulative-sum sampler (>= u)", with_sampler(Sampler::at_or_above),
                 "an off-by-one in the cumulative-sum sampler"});
  out.push_back({"an off-by-one in the cumulative-sum sampler (one cell past)", with_sampler(Sampler::one_past),
                 "an off-by-one in the cumulative-sum sampler"});
  out.push_back({"no last cell when rounding leaves u above every cumulative sum (cell N drawn)",
                 with_sampler(Sampler::no_last_cell), "lies past the last, N - 1"});
  out.push_back({"the argmax cell instead of a sample", with_sampler(Sampler::argmax), "the argmax cell, not a sample"});
  {
    HardAttention h = right::solution();
    h.context = [](const Tensor& e, const Draws&, const Tensor& features) {  // soft attention's context
      return attn::squeeze(attn::matmul(attn::unsqueeze(attn::softmax(e, -1), 1), features), 1);
    };
    out.push_back({"the context from the expected (soft) average instead of the sample", h,
                   "the expected (soft) context"});
  }
  {
    HardAttention h = right::solution();
    h.context = [](const Tensor& e, const Draws&, const Tensor& features) {  // the cell read at inference
      Tensor chosen = attn::one_hot(attn::argmax(e, -1), features.size(1), features.dtype());
      return attn::squeeze(attn::matmul(attn::unsqueeze(chosen, 1), features), 1);
    };
    out.push_back({"the context from the argmax cell, not the sampled one", h, "the argmax cell's features"});
  }
  {
    HardAttention h = right::solution();
    h.context = [](const Tensor& e, const Draws& u, const Tensor& features) {  // copied through an array
      return Tensor(xt::xarray<double>(right::context(e, u, features).to_array()));
    };
    out.push_back({"the context copied through an array (no gradient to the features)", h, "does not require grad"});
  }
  return out;
}

}  // namespace hard_attention
}  // namespace planted
}  // namespace lab
