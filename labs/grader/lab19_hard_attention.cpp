// The checks of lab19_hard_attention.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab19_hard_attention.hpp"

#include "labs/grader/grader.hpp"

#include <cmath>

#include <xtensor/xview.hpp>

namespace lab {
namespace hard_attention {

namespace hint {
inline const char* sample =
    "a = softmax(scores) over the cells; walk the cumulative sum a_0, a_0 + a_1, ... and take the first k whose sum "
    "exceeds u (strictly: a sum equal to u is not above it); when rounding leaves u above every sum, the last cell";
inline const char* boundary =
    "the first k with a_0 + ... + a_k > u, strictly greater: with u = 0 and a_0 = 0 the first sum is 0, not above u, "
    "so cell 0 (weight 0) is never drawn; and a u above the rounded total takes the last cell, N - 1, never N";
inline const char* frequencies =
    "over draws u spread evenly over [0, 1), cell k is drawn for the u between a_0 + ... + a_{k-1} and "
    "a_0 + ... + a_k: a share a_k of them, the weight softmax(scores) gives it";
inline const char* context =
    "c_b = h[b, k_b], the feature vector of the sampled cell k_b = sample(scores, u)_b: one_hot(k, N) [B, N] as "
    "[B, 1, N] times the features [B, N, H], squeezed to [B, H]";
inline const char* context_gradients =
    "build c from the features with attn's ops (one_hot, matmul or *, squeeze): the gradient then reaches the "
    "sampled cell's features, and the other cells' get 0";
inline const char* surrogate =
    "L = (1/B) sum_b [ -R_b - lambda_r (R_b - b) log a_{b,k_b} - lambda_e H(a_b) ] with a = softmax(scores), "
    "H(a) = -sum_j a_j log a_j, and b the baseline as it was before this batch (on the first batch, the batch's own "
    "mean reward); then b <- decay b + (1 - decay) mean_b R_b";
inline const char* first =
    "on the first batch (baseline.started false) b is set to the batch's mean reward before it is used (the "
    "advantages then sum to 0), started set, and b moved after, as on every batch; the mean is taken from the "
    "rewards' values, a constant";
inline const char* gradients =
    "the reward and the baseline enter the choices' term as constants (R_b - b from the rewards' values, detached): "
    "the gradient reaches the scores through log a_k and H(a), and the rewards through -R_b alone, -1/B each";
inline const char* baseline =
    "b is read first (the batch's mean reward on the first batch), then moved towards the batch's mean reward: "
    "b <- decay b + (1 - decay) mean_b R_b, as train/grid_loss.cpp";
inline const char* wrong_values =
    "the gradient of a wrong function is wrong too: the checks of its values name the mistake; fix those first";
inline const char* expectation =
    "averaged over the cells k ~ a, the surrogate's gradient must be the gradient of the expected objective "
    "-(1/B) sum_b [lambda_r sum_l a_bl R_bl + lambda_e H(a_b)]: the score-function term is -lambda_r (R_k - b) d log a_k, "
    "with its minus sign (the loss is minimised, the reward maximised) and a baseline that drops out in the mean";
}  // namespace hint

inline Shape shape_of(const Array& a) { return Shape(a.shape().begin(), a.shape().end()); }

inline Array softmax_rows(const Array& e) {
  Array a = e;
  const std::size_t B = e.shape()[0], N = e.shape()[1];
  for (std::size_t b = 0; b < B; ++b) {
    double m = -INFINITY, total = 0.0;
    for (std::size_t j = 0; j < N; ++j) m = std::max(m, e(b, j));
    for (std::size_t j = 0; j < N; ++j) total += a(b, j) = std::exp(e(b, j) - m);
    for (std::size_t j = 0; j < N; ++j) a(b, j) /= total;
  }
  return a;
}

// ---- the sampler, right and with the usual mistakes ----

enum class Draw { right, raw_scores, exp_scores, at_or_above, one_past, argmax, not_reset, from_last };

inline Index draw(const Array& scores, const Draws& u, Draw v) {
  const std::size_t B = scores.shape()[0], N = scores.shape()[1];
  Array w = v == Draw::raw_scores ? scores : v == Draw::exp_scores ? Array(xt::exp(scores)) : softmax_rows(scores);
  Index k = Index::from_shape({B});
  double carried = 0.0;  // Draw::not_reset: the cumulative sum carried over from the row before
  for (std::size_t b = 0; b < B; ++b) {
    std::size_t j = 0;
    if (v == Draw::argmax) {
      for (std::size_t i = 1; i < N; ++i)
        if (w(b, i) > w(b, j)) j = i;
    } else if (v == Draw::not_reset) {
      while (j + 1 < N && (carried += w(b, j)) <= u(b)) ++j;
    } else if (v == Draw::from_last) {  // the first k, counted from cell N - 1 down, whose suffix sum exceeds u
      double c = 0.0;
      j = N - 1;
      while (j > 0 && (c += w(b, j)) <= u(b)) --j;
    } else {
      double c = 0.0;
      if (v == Draw::at_or_above) {
        while (j + 1 < N && (c += w(b, j)) < u(b)) ++j;
      } else {
        while (j + 1 < N && (c += w(b, j)) <= u(b)) ++j;
        if (v == Draw::one_past) j = std::min(j + 1, N - 1);
      }
    }
    k(b) = std::int64_t(j);
  }
  return k;
}

inline std::string index_str(const Index& k) {
  std::string s = "[";
  for (std::size_t i = 0; i < k.size(); ++i) s += (i ? ", " : "") + std::to_string(k(i));
  return s + "]";
}

// The learner's cells against the expected ones, with the usual mistake their cells match.
// A mistake is named only when `plausible` agrees (the learner's cells on the fixed inputs are that mistake's
// too): on a few boundary rows unrelated mistakes can draw the same cells.
inline void expect_cells(const Index& want, const Index& got, const Array& scores, const Draws& u,
                         const std::string& inputs, const std::function<bool(Draw)>& plausible) {
  if (got.shape() != want.shape())
    throw Mismatch("the cells have shape " + shape_str(Shape(got.shape().begin(), got.shape().end())) +
                   ", expected " + shape_str(Shape(want.shape().begin(), want.shape().end())) + " (inputs: " +
                   inputs + ")");
  if (got == want) return;
  std::string message = "cells (inputs: " + inputs + ", u";
  for (std::size_t b = 0; b < u.size(); ++b) {  // 10 digits, or all 17 where 10 would not tell u from 1
    std::ostringstream d;
    d.precision(10);
    d << u(b);
    if (std::stod(d.str()) != u(b)) d.str(""), d.precision(17), d << u(b);
    message += " " + d.str();
  }
  message += "): expected " + index_str(want) + ", received " + index_str(got);
  const std::vector<std::pair<Draw, const char*>> mistakes = {
      {Draw::raw_scores,
       "sampled from the scores, not the softmax weights: the cumulative sum runs over a = softmax(scores)"},
      {Draw::exp_scores,
       "sampled from exp(scores) left unnormalised: divide by their sum (a = softmax(scores)) before the "
       "cumulative sum"},
      {Draw::at_or_above,
       "an off-by-one in the cumulative-sum sampler: the first k whose sum reaches u (>=) instead of exceeds it (>), "
       "which draws a cell of weight 0"},
      {Draw::one_past,
       "an off-by-one in the cumulative-sum sampler: one cell past the first k whose sum a_0 + ... + a_k exceeds u "
       "(the sum taken before the cell's own weight is added, or k counted from 1)"},
      {Draw::argmax, "the argmax cell, not a sample: that is hard attention at inference; training draws k ~ a"},
      {Draw::not_reset,
       "the cumulative sum carried over from one row to the next: start it at 0 for every row b"},
      {Draw::from_last,
       "the cumulative sum walked from the last cell (or compared with 1 - u): the shares come out right, but the "
       "rule fixes the order, from cell 0 up, so that a given u draws the cell the library and PyTorch draw"}};
  for (const auto& [v, what] : mistakes)
    if (draw(scores, u, v) == got && plausible(v)) throw Mismatch(message + "; your cells are what this mistake gives: " + what);
  const std::size_t N = scores.shape()[1];
  for (std::size_t b = 0; b < got.size(); ++b) {
    if (got(b) == std::int64_t(N))
      throw Mismatch(message + "; cell " + std::to_string(N) + " lies past the last, N - 1: the weights' rounded "
                     "sum can fall short of 1, and a u above every cumulative sum takes the last cell");
    if (got(b) < 0 || std::size_t(got(b)) > N)
      throw Mismatch(message + "; cell " + std::to_string(got(b)) + " lies outside 0 .. N - 1: an off-by-one in "
                                                                       "the cumulative-sum sampler");
  }
  throw Mismatch(message);
}

// ---- the surrogate, right and with the usual mistakes, on arrays ----

enum class Loss {
  right, no_baseline, reward_sign, entropy_sign, updated_first, summed, batch_mean, no_log, no_reward, entropy_mean
};

struct LossValue {
  double loss, baseline_after;
};

inline LossValue loss_of(const Array& scores, const Index& cells, const Array& R, Baseline base, const Options& o,
                         Loss v) {
  const std::size_t B = scores.shape()[0], N = scores.shape()[1];
  const Array a = softmax_rows(scores);
  const double mean = xt::mean(R)();
  if (!base.started) base = {mean, true};
  const double after = o.baseline_decay * base.value + (1.0 - o.baseline_decay) * mean;
  const double b = v == Loss::no_baseline  ? 0.0
                   : v == Loss::updated_first ? after
                   : v == Loss::batch_mean    ? mean
                                              : base.value;
  double total = 0.0;
  for (std::size_t i = 0; i < B; ++i) {
    double h = 0.0;
    for (std::size_t j = 0; j < N; ++j) h -= a(i, j) * std::log(a(i, j));
    if (v == Loss::entropy_mean) h /= double(N);
    const double adv = (v == Loss::reward_sign ? -1.0 : 1.0) * (R(i) - b);
    const double chosen = a(i, std::size_t(cells(i)));
    total += (v == Loss::no_reward ? 0.0 : -R(i)) - o.reinforce * adv * (v == Loss::no_log ? chosen : std::log(chosen)) -
             (v == Loss::entropy_sign ? -1.0 : 1.0) * o.entropy * h;
  }
  return {v == Loss::summed ? total : total / double(B), after};
}

inline std::string diagnose_loss(const Array& scores, const Index& cells, const Array& R, const Baseline& base,
                                 const Options& o, double got) {
  const std::vector<std::pair<Loss, const char*>> mistakes = {
      {Loss::no_baseline,
       base.started ? "the baseline not subtracted (lambda_r R_b log a_k): the choices' term weighs log a_k by the "
                      "advantage R_b - b"
                    : "b = 0 on the first batch (the baseline left at its initial 0, or not subtracted): on the first "
                      "batch b is set to the batch's mean reward before it is used"},
      {Loss::batch_mean,
       "b = this batch's mean reward on a batch after the first: that is the first batch's rule only; after it, b is "
       "the moving average of the batches before this one (baseline.value)"},
      {Loss::no_log,
       "the chosen cell's weight a_k where its log belongs: the score function is the gradient of log a_k, "
       "(R_b - b) log a_{b,k_b} in the loss"},
      {Loss::no_reward,
       "the -R_b term left out: the words' own log-likelihood is the estimate's first term (its gradient reaches the "
       "model through the rewards' tensor)"},
      {Loss::entropy_mean,
       "the entropy averaged over the cells: H(a) = -sum_j a_j log a_j is a sum over the N cells, not a mean"},
      {Loss::reward_sign,
       "the sign of the reward flipped (+lambda_r (R_b - b) log a_k in the loss): the loss is minimised, so the "
       "choices' term enters it as -lambda_r (R_b - b) log a_k, making a choice that did better than b more likely"},
      {Loss::entropy_sign,
       "the entropy bonus with the wrong sign (+lambda_e H in the loss): a bonus is subtracted from the loss, "
       "-lambda_e H(a), so that minimising it keeps the weights spread out"},
      {Loss::updated_first,
       "the baseline moved before it is used: this batch's advantage takes b as it was before the batch, then b "
       "moves"},
      {Loss::summed, "summed over the batch, not averaged: divide by B, as train/grid_loss.cpp divides by the tokens"}};
  for (const auto& [v, what] : mistakes) {
    const double want = loss_of(scores, cells, R, base, o, v).loss;
    if (std::abs(want - got) <= 1e-12 + 1e-10 * std::abs(want))
      return std::string("; your value is what this mistake gives: ") + what;
  }
  return "";
}

// The gradient of the rewards names what flowed through the advantage: -1/B each is right.
inline std::string diagnose_reward_gradient(const Array& scores, const Index& cells, const Array& got,
                                            const Options& o, bool first) {
  const std::size_t B = scores.shape()[0];
  const Array a = softmax_rows(scores);
  Array not_detached = Array::from_shape({B}), baseline_flows = Array::from_shape({B});
  double mean_log = 0.0;
  for (std::size_t i = 0; i < B; ++i) mean_log += std::log(a(i, std::size_t(cells(i)))) / double(B);
  for (std::size_t i = 0; i < B; ++i) {
    not_detached(i) = -(1.0 + o.reinforce * std::log(a(i, std::size_t(cells(i))))) / double(B);
    baseline_flows(i) = (-1.0 + o.reinforce * mean_log) / double(B);
  }
  auto same = [&](const Array& x) {
    try {
      expect_close("", x, got, "", 1e-9, 1e-12);
      return true;
    } catch (const Mismatch&) {
      return false;
    }
  };
  if (same(not_detached))
    return "; your gradient is what this mistake gives: the reward not detached in the advantage (R_b - b): the "
           "gradient flows into R_b through the choices' term as well as through -R_b";
  if (first && same(baseline_flows))
    return "; your gradient is what this mistake gives: the baseline carries a gradient (b = the mean of the "
           "rewards' tensor, not detached): the first batch's b is a constant, the mean of the rewards' values";
  return "";
}

struct Case;
inline std::string diagnose_score_gradient(const Case& k, const Array& got);

struct Case {
  Array scores, rewards;
  Index cells;
  Baseline baseline;
  Options options;
};

inline Case fixed_case(const Reference& ref, const std::string& c) {
  Case k;
  k.scores = ref.array(c, "scores");
  k.rewards = ref.array(c, "rewards");
  k.cells = xt::cast<std::int64_t>(ref.array(c, "cells"));
  k.baseline = {ref.scalar(c, "baseline"), c != "first"};
  const Array o = ref.array(c, "options");
  k.options = {o(0), o(1), o(2)};
  return k;
}

inline std::string describe(const Case& k) {
  return "scores " + shape_str(shape_of(k.scores)) + ", cells " + index_str(k.cells) + ", baseline " +
         (k.baseline.started ? num_str(k.baseline.value) : std::string("not started")) + ", lambda_r " +
         num_str(k.options.reinforce) + ", lambda_e " + num_str(k.options.entropy);
}

// The scores' gradient without the entropy's part, -(lambda_r / B) (R_b - b) ([j = k_b] - a_bj): the entropy made
// from the weights' values (an array, or detached) adds to L's value and nothing to its gradient.
inline std::string diagnose_score_gradient(const Case& k, const Array& got) {
  const std::size_t B = k.scores.shape()[0], N = k.scores.shape()[1];
  const Array a = softmax_rows(k.scores);
  const double b = k.baseline.started ? k.baseline.value : double(xt::mean(k.rewards)());
  Array no_entropy = Array::from_shape({B, N});
  for (std::size_t i = 0; i < B; ++i)
    for (std::size_t j = 0; j < N; ++j)
      no_entropy(i, j) = -(k.options.reinforce / double(B)) * (k.rewards(i) - b) *
                         ((std::size_t(k.cells(i)) == j ? 1.0 : 0.0) - a(i, j));
  try {
    expect_close("", no_entropy, got, "", 1e-9, 1e-12);
  } catch (const Mismatch&) {
    return "";
  }
  return "; your gradient is what this mistake gives: the entropy bonus adds no gradient (H(a) made from the weights' "
         "values, an array or a detached tensor): build it from softmax and log_softmax of the scores";
}

// A random case: B 1..4, N 1..7, cells anywhere, rewards log-likelihoods in [-4, -0.1].
inline Case random_case(Random& rng, bool started) {
  Case k;
  const std::size_t B = rng.integer(1, 4), N = rng.integer(1, 7);
  k.scores = rng.array({B, N}, -3.0, 3.0);
  k.rewards = rng.array({B}, -4.0, -0.1);
  k.cells = Index::from_shape({B});
  for (auto& c : k.cells) c = std::int64_t(rng.integer(0, N - 1));
  k.baseline = {rng.uniform(-3.0, -0.5), started};
  k.options = {rng.uniform(0.5, 1.5), rng.uniform(0.01, 0.2), rng.uniform(0.5, 0.95)};
  return k;
}

Result grade(const HardAttention& h, std::ostream& os) {
  Grader grader(19, "hard attention: the sampled context and its REINFORCE surrogate", os);
  Reference ref("lab19_hard_attention");

  // ---- sampling ----
  grader.check("sample vs PyTorch (B 4, N 6, one draw per row)", hint::sample, [&] {
    const Array scores = ref.array("sample", "scores");
    const Draws u = ref.array("sample", "u");
    Index got = h.sample(Tensor(scores), u);
    expect_cells(xt::cast<std::int64_t>(ref.array("sample", "cells")), got, scores, u, "scores [4, 6]",
                 [](Draw) { return true; });
  });
  grader.check("sample at the boundaries: a cell of weight 0 never drawn, a draw equal to a cumulative sum, a draw "
               "just below 1",
               hint::boundary, [&] {
                 // Row 0: weights [0, 1/2, 1/2, 0, ...] exactly (a score of -1e30 has weight 0), u = 0; row 1: the
                 // same weights, u = 1/2, a cumulative sum itself; row 2: seven equal weights, whose rounded sum,
                 // 1 - 2^-52, lies below u = 1 - 2^-53: no sum exceeds u, and the last cell is drawn.
                 const double x = -1e30;
                 Array scores = {{x, 0.0, 0.0, x, x, x, x}, {x, 0.0, 0.0, x, x, x, x}, {0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3}};
                 Draws u = {0.0, 0.5, std::nextafter(1.0, 0.0)};
                 Index want = {1, 2, 6};
                 if (draw(scores, u, Draw::right) != want) throw std::logic_error("grader bug: boundary cells");
                 expect_cells(want, h.sample(Tensor(scores), u), scores, u, "scores [3, 7]", [&](Draw v) {
                   try {  // the fixed case's cells are this mistake's too (>= u draws them right: no tie there)
                     const Array fixed = ref.array("sample", "scores");
                     const Draws fixed_u = ref.array("sample", "u");
                     return draw(fixed, fixed_u, v) == h.sample(Tensor(fixed), fixed_u);
                   } catch (const std::exception&) {
                     return false;
                   }
                 });
               });
  grader.check("sample: over 2000 draws spread evenly over [0, 1), each cell's share is its weight (random B, N)",
               hint::frequencies, [&] {
                 Random rng(19100);
                 for (int trial = 0; trial < 6; ++trial) {
                   const std::size_t N = rng.integer(1, 7), M = 2000;
                   Array row = rng.array({1, N}, -3.0, 3.0);
                   Array scores = Array::from_shape({M, N});
                   Draws u = Draws::from_shape({M});
                   for (std::size_t i = 0; i < M; ++i) {
                     xt::view(scores, i, xt::all()) = xt::view(row, 0, xt::all());
                     u(i) = (double(i) + 0.5) / double(M);
                   }
                   Index got = h.sample(Tensor(scores), u);
                   if (got.dimension() != 1 || got.shape()[0] != M)
                     throw Mismatch("the cells have shape " + shape_str(Shape(got.shape().begin(), got.shape().end())) +
                                    ", expected [" + std::to_string(M) + "]");
                   const Array a = softmax_rows(row);
                   Array share = xt::zeros<double>({N});
                   for (std::size_t i = 0; i < M; ++i) {
                     if (got(i) < 0 || std::size_t(got(i)) >= N)
                       throw Mismatch("cell " + std::to_string(got(i)) + " drawn for u = " + num_str(u(i)) +
                                      ", outside 0 .. " + std::to_string(N - 1) +
                                      ": an off-by-one in the cumulative-sum sampler");
                     share(std::size_t(got(i))) += 1.0 / double(M);
                   }
                   for (std::size_t j = 0; j < N; ++j)
                     if (std::abs(share(j) - a(0, j)) > 1.0 / double(M) + 1e-12) {
                       std::string named;
                       if (draw(scores, u, Draw::raw_scores) == got || draw(scores, u, Draw::exp_scores) == got)
                         named = "; your cells are what sampling from the scores, not the softmax weights, gives";
                       throw Mismatch("N " + std::to_string(N) + ": cell " + std::to_string(j) + " drawn for a share " +
                                          num_str(share(j)) + " of the draws, its weight is " + num_str(a(0, j)) + named,
                                      named.empty() ? hint::frequencies : hint::sample);
                     }
                 }
               });

  // ---- the sampled context ----
  grader.check("context vs PyTorch (B 4, N 6, H 3): the sampled cell's feature vector", hint::context, [&] {
    attn::no_grad guard;
    const Array scores = ref.array("sample", "scores"), features = ref.array("sample", "features");
    const Draws u = ref.array("sample", "u");
    Tensor got = h.context(Tensor(scores), u, Tensor(features));
    try {
      expect_close("c", ref.array("sample", "context"), got, "scores [4, 6], features [4, 6, 3]", 1e-12, 1e-14);
    } catch (const Mismatch& e) {
      Array soft = Array::from_shape({4, 3});
      const Array a = softmax_rows(scores);
      for (std::size_t b = 0; b < 4; ++b)
        for (std::size_t d = 0; d < 3; ++d) {
          soft(b, d) = 0.0;
          for (std::size_t j = 0; j < 6; ++j) soft(b, d) += a(b, j) * features(b, j, d);
        }
      // The argmax cell's features: the cell hard attention reads at inference.
      const Index peak = draw(scores, u, Draw::argmax);
      Array at_peak = Array::from_shape({4, 3});
      for (std::size_t b = 0; b < 4; ++b)
        for (std::size_t d = 0; d < 3; ++d) at_peak(b, d) = features(b, std::size_t(peak(b)), d);
      auto same = [&](const Array& x) {
        try {
          expect_close("", x, got, "", 1e-9, 1e-12);
          return true;
        } catch (const Mismatch&) {
          return false;
        }
      };
      if (same(at_peak))
        throw Mismatch(e.what() + std::string("; your values are what this mistake gives: the argmax cell's features, "
                                              "hard attention at inference; training reads the cell sample(scores, u) "
                                              "draws"));
      if (!same(soft)) throw e;
      throw Mismatch(e.what() + std::string("; your values are what this mistake gives: the expected (soft) context "
                                            "sum_j a_j h_j, soft attention's, instead of the sampled cell's h_k"));
    }
  });
  grader.check("context: gradients of the features vs PyTorch (of sum(c * r)), none to the scores, and a gradcheck",
               hint::context_gradients, [&] {
                 Tensor scores = ref.tensor("sample", "scores", true), features = ref.tensor("sample", "features", true);
                 const Draws u = ref.array("sample", "u");
                 Tensor c = h.context(scores, u, features);
                 if (!c.requires_grad())
                   throw Mismatch("context(...) does not require grad: it was not built from the features with attn's "
                                  "ops (copied through an array, or detached)");
                 attn::sum(c * ref.tensor("sample", "r")).backward();
                 if (!features.grad().defined())
                   throw Mismatch("features.grad() is undefined: c does not depend on the features through attn's ops");
                 expect_close("the gradient of the features", ref.array("sample", "grad_features"), features.grad(),
                              "scores [4, 6], features [4, 6, 3]", 1e-12, 1e-14);
                 if (scores.grad().defined() && xt::amax(xt::abs(scores.grad().to_array()))() > 0.0)
                   throw Mismatch("the scores received a gradient from c: a sampled cell has none (the soft context "
                                  "sum_j a_j h_j has one)");
                 Random rng(19200);
                 for (int trial = 0; trial < 3; ++trial) {
                   const std::size_t B = rng.integer(1, 3), N = rng.integer(1, 5), H = rng.integer(1, 4);
                   const Tensor e(rng.array({B, N}, -2.0, 2.0));
                   const Draws draws = rng.array({B}, 0.0, 1.0);
                   expect_gradients(
                       "context", [&](const std::vector<Tensor>& x) { return h.context(e, draws, x[0]); },
                       {rng.tensor({B, N, H}, true, -2.0, 2.0)}, {"features"});
                 }
               });

  // ---- the surrogate ----
  auto fixed_loss = [&](const std::string& c) {
    attn::no_grad guard;
    Case k = fixed_case(ref, c);
    Baseline base = k.baseline;
    Tensor got = h.surrogate(Tensor(k.scores), k.cells, Tensor(k.rewards), base, k.options);
    Array g = array_of(got, "L");
    try {
      expect_close("L", ref.array(c, "loss"), g, describe(k), 1e-10, 1e-12);
    } catch (const Mismatch& e) {
      if (g.size() != 1) throw;
      throw Mismatch(e.what() + diagnose_loss(k.scores, k.cells, k.rewards, k.baseline, k.options, g.flat(0)));
    }
    try {
      expect_close("the baseline after the batch", ref.array(c, "baseline_after"), Array{base.value},
                   describe(k), 1e-12, 1e-14);
    } catch (const Mismatch& e) {
      // Named only where the mistake moves b elsewhere than the right update does.
      const double b = k.baseline.started ? k.baseline.value : xt::mean(k.rewards)(), mean = xt::mean(k.rewards)();
      const double d = k.options.baseline_decay;
      auto near = [&](double x) { return std::abs(base.value - x) <= 1e-12 + 1e-10 * std::abs(x); };
      std::string named;
      if (near(d * mean + (1.0 - d) * b))
        named = "; your baseline is what this mistake gives: the moving average's weights swapped (decay on the "
                "batch's mean reward)";
      else if (near(d * b + (1.0 - d) * xt::sum(k.rewards)()))
        named = "; your baseline is what this mistake gives: moved towards the batch's summed reward, not its mean";
      else if (near(b))
        named = "; your baseline is what this mistake gives: b not moved after the batch";
      throw Mismatch(e.what() + named, hint::baseline);
    }
    if (!base.started)
      throw Mismatch("the baseline after the batch: started is still false (set it once b is set, or every batch "
                     "takes b = its own mean reward)",
                     hint::baseline);
  };
  grader.check("surrogate vs PyTorch (B 4, N 6, a running baseline b = -1.7, lambda_r 1, lambda_e 0.05)",
               hint::surrogate, [&] { fixed_loss("surrogate"); });
  grader.check("surrogate on the first batch (b = the batch's mean reward) vs PyTorch, and the baseline after",
               hint::first, [&] { fixed_loss("first"); });
  grader.check("surrogate: gradients of the scores and the rewards vs PyTorch (a running baseline, the first batch)",
               hint::gradients, [&] {
                 for (const std::string c : {"surrogate", "first"}) {
                   Case k = fixed_case(ref, c);
                   Tensor scores(k.scores, true), rewards(k.rewards, true);
                   Baseline base = k.baseline;
                   Tensor L = h.surrogate(scores, k.cells, rewards, base, k.options);
                   if (!L.requires_grad())
                     throw Mismatch("surrogate(...) does not require grad: it was not built from the scores and the "
                                    "rewards with attn's ops");
                   L.backward();
                   const std::string inputs = describe(k);
                   try {
                     if (!scores.grad().defined() || !rewards.grad().defined())
                       throw Mismatch(std::string(scores.grad().defined() ? "rewards" : "scores") +
                                      ".grad() is undefined: L does not depend on it through attn's ops");
                     try {
                       expect_close("the gradient of the rewards", ref.array(c, "grad_rewards"), rewards.grad(), inputs,
                                    1e-9, 1e-12);
                     } catch (const Mismatch& e) {
                       throw Mismatch(e.what() + diagnose_reward_gradient(k.scores, k.cells,
                                                                          array_of(rewards.grad(), "grad"), k.options,
                                                                          c == "first"));
                     }
                     try {
                       expect_close("the gradient of the scores", ref.array(c, "grad_scores"), scores.grad(), inputs,
                                    1e-9, 1e-12);
                     } catch (const Mismatch& e) {
                       throw Mismatch(e.what() + diagnose_score_gradient(k, array_of(scores.grad(), "grad")));
                     }
                   } catch (const Mismatch& e) {
                     try {
                       expect_close("", ref.array(c, "loss"), L, "", 1e-10, 1e-12);
                     } catch (const Mismatch&) {
                       throw Mismatch(e.what() + std::string("; L's value is wrong too"), hint::wrong_values);
                     }
                     throw;
                   }
                 }
               });
  grader.check("surrogate vs the library's caption_loss over 4 batches (random B, N; rewards from logits): L, the "
               "baseline, the gradients of the scores and the logits",
               hint::baseline, [&] {
                 Random rng(19300);
                 for (int run = 0; run < 3; ++run) {
                   Baseline mine;
                   attn::models::ReinforceBaseline library;
                   Options o{rng.uniform(0.5, 1.5), rng.uniform(0.01, 0.2), rng.uniform(0.5, 0.95)};
                   attn::models::CaptionLossOptions lo;
                   lo.reinforce = o.reinforce, lo.entropy = o.entropy, lo.baseline_decay = o.baseline_decay;
                   for (int batch = 0; batch < 4; ++batch) {
                     const std::size_t B = rng.integer(1, 4), N = rng.integer(2, 7), V = rng.integer(2, 6);
                     const Array e = rng.array({B, N}, -3.0, 3.0), logits = rng.array({B, V}, -3.0, 3.0);
                     Index y = Index::from_shape({B}), k = Index::from_shape({B});
                     for (auto& t : y) t = std::int64_t(rng.integer(1, V - 1));  // id 0 is <pad>
                     for (auto& c : k) c = std::int64_t(rng.integer(0, N - 1));
                     // The library's, on one step of B captions.
                     Tensor e1(e, true), l1(logits, true);
                     attn::models::CaptionerOutput out;
                     out.logits = attn::unsqueeze(l1, 1);
                     Tensor log_a = attn::log_softmax(e1, -1);
                     out.weights = attn::unsqueeze(attn::softmax(e1, -1), 1);
                     out.choice_log_prob = attn::unsqueeze(attn::sum(attn::one_hot(k, N) * log_a, {-1}), 1);
                     out.sampled = xt::ones<bool>({B});
                     out.entropy = attn::unsqueeze(-attn::sum(attn::softmax(e1, -1) * log_a, {-1}), 1);
                     Index targets = Index::from_shape({B, 1});
                     for (std::size_t b = 0; b < B; ++b) targets(b, 0) = y(b);
                     attn::models::CaptionLoss want = attn::models::caption_loss(out, targets, lo, library);
                     want.loss.backward();
                     // The learner's, with R_b = log p(y_b) made from the same logits.
                     Tensor e2(e, true), l2(logits, true);
                     Tensor rewards = attn::sum(attn::log_softmax(l2, -1) * attn::one_hot(y, V), {-1});
                     Case k2{e, rewards.to_array(), k, mine, o};
                     const std::string inputs = "batch " + std::to_string(batch + 1) + " of 4, " + describe(k2);
                     Tensor L = h.surrogate(e2, k, rewards, mine, o);
                     Array g = array_of(L, "L");
                     try {
                       expect_close("L", want.loss.to_array(), g, inputs, 1e-10, 1e-12);
                     } catch (const Mismatch& m) {
                       throw Mismatch(m.what() + (g.size() == 1 ? diagnose_loss(e, k, k2.rewards, k2.baseline, o,
                                                                                g.flat(0))
                                                                : std::string()),
                                      hint::surrogate);
                     }
                     if (std::abs(mine.value - library.value) > 1e-12 + 1e-10 * std::abs(library.value) ||
                         !mine.started)
                       throw Mismatch("the baseline after " + inputs + ": expected " + num_str(library.value) +
                                      ", received " + num_str(mine.value) + (mine.started ? "" : " (not started)"));
                     if (!L.requires_grad()) throw Mismatch("surrogate(...) does not require grad", hint::gradients);
                     L.backward();
                     if (!e2.grad().defined() || !l2.grad().defined())
                       throw Mismatch("the scores' or the logits' gradient is undefined (" + inputs + ")",
                                      hint::gradients);
                     try {
                       expect_close("the gradient of the scores", e1.grad().to_array(), e2.grad(), inputs, 1e-9, 1e-12);
                       expect_close("the gradient of the logits (through the rewards)", l1.grad().to_array(),
                                    l2.grad(), inputs, 1e-9, 1e-12);
                     } catch (const Mismatch& m) {
                       throw Mismatch(m.what(), hint::gradients);
                     }
                   }
                 }
               });
  // The rewards are held fixed here: a finite difference in R_b would move the advantage R_b - b too, which the
  // surrogate holds constant; their gradient is checked against PyTorch's and the library's above.
  grader.check("surrogate: gradcheck of the scores (random B, N; first batch and running baseline)",
               hint::gradients, [&] {
                 Random rng(19400);
                 for (int trial = 0; trial < 6; ++trial) {
                   Case k = random_case(rng, trial % 2 == 1);
                   const Tensor rewards(k.rewards);
                   expect_gradients(
                       "surrogate",
                       [&](const std::vector<Tensor>& x) {
                         Baseline base = k.baseline;  // each evaluation from the same baseline
                         return h.surrogate(x[0], k.cells, rewards, base, k.options);
                       },
                       {Tensor(k.scores, true)}, {"scores"});
                 }
               });
  grader.check("the estimator is unbiased: the mean over every cell k ~ a of the surrogate's gradient (enumerated "
               "exactly) equals the gradient of the expected objective, -(1/B) sum_b [lambda_r sum_l a_bl R_bl + lambda_e H(a_b)]",
               hint::expectation, [&] {
                 Random rng(19500);
                 for (int trial = 0; trial < 4; ++trial) {
                   // B rows, each cell l with its own reward R_bl = log p(y | a_l); every joint choice enumerated.
                   const std::size_t B = trial < 2 ? 1 : 2, N = trial < 2 ? 5 : 3;
                   const Array e = rng.array({B, N}, -2.0, 2.0), R = rng.array({B, N}, -4.0, -0.1);
                   const Options o{rng.uniform(0.5, 1.5), trial % 2 ? 0.0 : rng.uniform(0.05, 0.3), 0.9};
                   const Baseline start{rng.uniform(-3.0, -0.5), true};
                   const Array a = softmax_rows(e);
                   Array mean_grad = xt::zeros<double>({B, N});
                   std::size_t joint = 1;
                   for (std::size_t b = 0; b < B; ++b) joint *= N;
                   for (std::size_t c = 0; c < joint; ++c) {
                     Index k = Index::from_shape({B});
                     Array rewards = Array::from_shape({B});
                     double p = 1.0;
                     for (std::size_t b = 0, rest = c; b < B; ++b, rest /= N) {
                       k(b) = std::int64_t(rest % N);
                       rewards(b) = R(b, rest % N);
                       p *= a(b, rest % N);
                     }
                     Tensor scores(e, true);
                     Baseline base = start;
                     Tensor L = h.surrogate(scores, k, Tensor(rewards), base, o);
                     if (!L.requires_grad()) throw Mismatch("surrogate(...) does not require grad", hint::gradients);
                     L.backward();
                     if (!scores.grad().defined()) throw Mismatch("scores.grad() is undefined", hint::gradients);
                     mean_grad += p * array_of(scores.grad(), "the gradient of the scores");
                   }
                   // d/de_bj of -(1/B) [lambda_r sum_l a_bl R_bl + lambda_e H(a_b)] = -(1/B) a_bj (f_bj - sum_l a_bl f_bl),
                   // f_bl = lambda_r R_bl - lambda_e log a_bl (d a_l / d e_j = a_l ([l = j] - a_j)).
                   // The -R_k term has no gradient here: each cell's reward is a constant of the scores.
                   Array exact = Array::from_shape({B, N});
                   for (std::size_t b = 0; b < B; ++b) {
                     double fbar = 0.0;
                     for (std::size_t l = 0; l < N; ++l) fbar += a(b, l) * (o.reinforce * R(b, l) - o.entropy * std::log(a(b, l)));
                     for (std::size_t j = 0; j < N; ++j)
                       exact(b, j) = -a(b, j) * (o.reinforce * R(b, j) - o.entropy * std::log(a(b, j)) - fbar) / double(B);
                   }
                   const std::string inputs = "scores " + shape_str({B, N}) + ", every one of the " +
                                              std::to_string(joint) + " joint choices weighted by its probability, " +
                                              "lambda_e " + num_str(o.entropy);
                   try {
                     expect_close("the expected gradient of the scores", exact, mean_grad, inputs, 1e-8, 1e-11);
                   } catch (const Mismatch& m) {
                     std::string named;
                     try {
                       expect_close("", Array(-exact), mean_grad, "", 1e-8, 1e-11);
                       named = "; it is the exact gradient with its sign flipped: the score-function term climbs the "
                               "loss (the sign of the reward flipped)";
                     } catch (const Mismatch&) {
                     }
                     throw Mismatch(m.what() + named);
                   }
                 }
               });
  return grader.finish();
}

}  // namespace hard_attention
}  // namespace lab
