// The checks of lab17_pointer_sentinel.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab17_pointer_sentinel.hpp"

#include "labs/grader/grader.hpp"

#include <cmath>

#include <xtensor/xview.hpp>

namespace lab {
namespace pointer_sentinel {

namespace hint {
inline const char* mixture =
    "one softmax over the L + 1 scores [scores ; sentinel]: the first L weights are the pointer's a_j, the last "
    "the gate g; p(w) = g softmax(logits)(w) + the sum of a_j over the slots j whose word is w (a repeated word "
    "gets every one of its slots' weights)";
inline const char* sums_to_one =
    "the L + 1 weights of one softmax sum to 1 and softmax(logits) sums to 1, so g p_vocab + the pointer's "
    "weights, each added to its word, sums to g + (1 - g) = 1: no weight lost, none counted twice";
inline const char* large =
    "a softmax of scores near 1000 overflows exp unless it subtracts the maximum first: attn::softmax does";
inline const char* gradients =
    "build the output from logits, scores and sentinel with attn's ops (concat, softmax or log_softmax, narrow, "
    "matmul or * with one_hot, masked_fill, logsumexp, +), nothing copied through an array: autograd then finds "
    "the backward";
inline const char* wrong_values =
    "the gradient of a wrong function is wrong too: the checks of its values name the mistake; fix those first";
inline const char* random_shapes =
    "B is logits.size(0), V logits.size(-1), L scores.size(-1); a window may hold one word in every slot, and L may "
    "exceed V";
inline const char* log_prob =
    "log p(y) = log(g p_vocab(y) + the sum of a_j over the slots j holding y): a target outside the window has "
    "g p_vocab(y) alone, a repeated one every copy's weight";
inline const char* tiny =
    "compute log p(y) from log weights: log_softmax([scores ; sentinel]) gives log a_j and log g, "
    "log_softmax(logits) log p_vocab(y), and logsumexp over log g + log p_vocab(y) and the copies' log a_j adds "
    "them without forming a probability that rounds to 0";
inline const char* far_fill =
    "block the slots that do not hold y (and the sentinel's column) with -1e30 (nn::kBlockedScore): a fill must lie "
    "below every real log weight, and here log g + log p_vocab(y) lies near -2e12, so a finite fill above it (-1e4, "
    "-1e9) takes the weight in the logsumexp";
inline const char* log_prob_random =
    "log_prob(...) is log of mixture(...)(y), for every row: the target in the window or not";
}  // namespace hint

// ---- the mixture, right and with the usual mistakes, computed here on arrays ----

enum class Mix {
  right, window_softmax, sentinel_outside, sigmoid_gate, gate_wrong_side, no_gate, raw_logits, last_wins,
  first_only, by_position
};

inline Array softmax_row(const std::vector<double>& z) {
  double m = -INFINITY;
  for (double v : z) m = std::max(m, v);
  Array out = Array::from_shape({z.size()});
  double total = 0.0;
  for (std::size_t i = 0; i < z.size(); ++i) total += out(i) = std::exp(z[i] - m);
  return out / total;
}

inline Array mix(const Array& logits, const Array& scores, const Array& sentinel, const Index& window, Mix v) {
  const std::size_t B = logits.shape()[0], V = logits.shape()[1], L = scores.shape()[1];
  Array p = xt::zeros<double>({B, V});
  for (std::size_t b = 0; b < B; ++b) {
    std::vector<double> z(L), zs(L + 1), lg(V);
    for (std::size_t j = 0; j < L; ++j) zs[j] = z[j] = scores(b, j);
    zs[L] = sentinel(b, 0);
    for (std::size_t w = 0; w < V; ++w) lg[w] = logits(b, w);
    Array all = softmax_row(zs), win = softmax_row(z);
    Array a = xt::view(all, xt::range(0, L));
    double g = all(L);
    if (v == Mix::window_softmax) a = win;  // the pointer normalised apart, g still from [scores ; sentinel]
    if (v == Mix::sentinel_outside) {       // exp of each over the sum of the window's exps alone
      double m = *std::max_element(z.begin(), z.end()), total = 0.0;
      for (double s : z) total += std::exp(s - m);
      for (std::size_t j = 0; j < L; ++j) a(j) = std::exp(z[j] - m) / total;
      g = std::exp(zs[L] - m) / total;
    }
    if (v == Mix::sigmoid_gate) {
      g = 1.0 / (1.0 + std::exp(-zs[L]));
      a = (1.0 - g) * win;
    }
    double coeff = v == Mix::gate_wrong_side ? 1.0 - g : v == Mix::no_gate ? 1.0 : g;
    Array pv = v == Mix::raw_logits ? Array(xt::view(logits, b, xt::all())) : softmax_row(lg);
    for (std::size_t w = 0; w < V; ++w) p(b, w) = coeff * pv(w);
    std::vector<bool> seen(V, false);
    Array copies = xt::zeros<double>({V});
    for (std::size_t j = 0; j < L; ++j) {
      std::size_t w = std::size_t(window(b, j));
      if (v == Mix::by_position) {
        if (j < V) copies(j) += a(j);
      } else if (v == Mix::last_wins) {
        copies(w) = a(j);
      } else if (v == Mix::first_only) {
        if (!seen[w]) copies(w) = a(j);
      } else {
        copies(w) += a(j);
      }
      seen[w] = true;
    }
    for (std::size_t w = 0; w < V; ++w) p(b, w) += copies(w);
  }
  return p;
}

// "; your values are what this mistake gives: ..." when the learner's p is one of the usual mistakes.
inline std::string diagnose_mixture(const Array& logits, const Array& scores, const Array& sentinel,
                                    const Index& window, const Array& got) {
  const std::vector<std::pair<Mix, const char*>> mistakes = {
      {Mix::window_softmax,
       "two softmaxes: the pointer's weights normalised over the window alone, the gate from a second softmax; one "
       "softmax over [scores ; sentinel] gives both, so that they sum to 1"},
      {Mix::sentinel_outside,
       "the sentinel left out of the normaliser (each exp divided by the window's sum alone): the softmax runs over "
       "the L + 1 scores [scores ; sentinel]"},
      {Mix::sigmoid_gate,
       "the gate from a sigmoid of the sentinel's score and the pointer from a softmax of its own (two normalisers): "
       "the sentinel is one more slot of the pointer's softmax, g its weight"},
      {Mix::gate_wrong_side,
       "the gate on the wrong side ((1 - g) p_vocab): g, the sentinel's weight, is the share left to the vocabulary "
       "softmax, g p_vocab"},
      {Mix::no_gate, "p_vocab not scaled by the gate g: p = g p_vocab + the pointer's weights"},
      {Mix::raw_logits, "the logits mixed in without their softmax: p_vocab = softmax(logits)"},
      {Mix::last_wins,
       "a repeated word's weights overwritten (the last slot's kept): add every slot's weight to its word "
       "(scatter-add)"},
      {Mix::first_only,
       "a repeated word counted once (its first slot's weight only): add every slot's weight to its word "
       "(scatter-add)"},
      {Mix::by_position,
       "slot j's weight added to word j (the position) instead of to the word the slot holds, window(b, j)"}};
  for (const auto& [v, what] : mistakes) {
    try {
      expect_close("", mix(logits, scores, sentinel, window, v), got, "", 1e-9, 1e-12);
      return std::string("; your values are what this mistake gives: ") + what;
    } catch (const Mismatch&) {
    }
  }
  return "";
}

// ---- log p(y), right and with the usual mistakes, from the right log weights ----

inline std::vector<double> log_softmax_row(const std::vector<double>& z) {
  double m = -INFINITY, total = 0.0;
  for (double v : z) m = std::max(m, v);
  for (double v : z) total += std::exp(v - m);
  std::vector<double> out(z.size());
  for (std::size_t i = 0; i < z.size(); ++i) out[i] = z[i] - m - std::log(total);
  return out;
}

inline double log_sum_exp(const std::vector<double>& terms) {
  double m = -INFINITY, total = 0.0;
  for (double v : terms) m = std::max(m, v);
  if (!std::isfinite(m)) return m;
  for (double v : terms) total += std::exp(v - m);
  return m + std::log(total);
}

enum class LogP { right, vocab_only, no_copies, every_slot, first_copy, gate_wrong_side };

// Every candidate from log weights, added with a log-sum-exp: finite where p(y) rounds to 0 in float64, so
// that a mistake is named only by its values, never by a -inf that any output would match.
inline Array log_p(const Array& logits, const Array& scores, const Array& sentinel, const Index& window,
                   const Index& targets, LogP v) {
  const std::size_t B = logits.shape()[0], V = logits.shape()[1], L = scores.shape()[1];
  Array out = Array::from_shape({B});
  for (std::size_t b = 0; b < B; ++b) {
    std::vector<double> zs(L + 1), lg(V);
    for (std::size_t j = 0; j < L; ++j) zs[j] = scores(b, j);
    zs[L] = sentinel(b, 0);
    for (std::size_t w = 0; w < V; ++w) lg[w] = logits(b, w);
    std::vector<double> log_w = log_softmax_row(zs), log_pv = log_softmax_row(lg);
    const std::size_t y = std::size_t(targets(b));
    std::vector<double> copies, pointer(log_w.begin(), log_w.begin() + long(L));
    bool first = true;
    for (std::size_t j = 0; j < L; ++j)
      if (v == LogP::every_slot || (std::size_t(window(b, j)) == y && (v != LogP::first_copy || first))) {
        copies.push_back(log_w[j]);
        if (std::size_t(window(b, j)) == y) first = false;
      }
    // log(1 - g) as the log of the pointer's total weight, finite where 1 - g rounds to 0
    double log_gate = v == LogP::gate_wrong_side ? log_sum_exp(pointer) : log_w[L];
    copies.push_back(log_gate + log_pv[y]);
    out(b) = v == LogP::vocab_only ? log_pv[y] : v == LogP::no_copies ? log_w[L] + log_pv[y] : log_sum_exp(copies);
  }
  return out;
}

inline std::string diagnose_log_prob(const Array& logits, const Array& scores, const Array& sentinel,
                                     const Index& window, const Index& targets, const Array& got) {
  const std::vector<std::pair<LogP, const char*>> mistakes = {
      {LogP::vocab_only, "log p_vocab(y) alone: the pointer and the gate left out of log p(y)"},
      {LogP::no_copies,
       "log(g p_vocab(y)): the pointer's weight on the copies of y left out; add the a_j of every slot holding y"},
      {LogP::every_slot,
       "every slot's weight counted (log(g p_vocab(y) + sum of all a_j)): only the slots holding y add to p(y)"},
      {LogP::first_copy,
       "only the first copy of y counted: a repeated target gets the weight of every slot that holds it"},
      {LogP::gate_wrong_side,
       "the gate on the wrong side (log((1 - g) p_vocab(y) + ...)): g, the sentinel's weight, multiplies p_vocab"}};
  for (const auto& [v, what] : mistakes) {
    Array candidate = log_p(logits, scores, sentinel, window, targets, v);
    if (!all_finite(candidate)) continue;  // a -inf would match nothing meaningful
    try {
      expect_close("", candidate, got, "", 1e-9, 1e-12);
      return std::string("; your values are what this mistake gives: ") + what;
    } catch (const Mismatch&) {
    }
  }
  return "";
}

struct Inputs {
  Array logits, scores, sentinel;
  Index window, targets;
  std::string describe() const {
    return "logits " + shape_str(Shape(logits.shape().begin(), logits.shape().end())) + ", scores " +
           shape_str(Shape(scores.shape().begin(), scores.shape().end())) + ", sentinel " +
           shape_str(Shape(sentinel.shape().begin(), sentinel.shape().end()));
  }
};

// Random inputs: B 1..3, V 1..9, L 1..7, words drawn from a few ids so that they repeat; targets in the
// window or not.
inline Inputs random_inputs(Random& rng) {
  Inputs in;
  const std::size_t B = rng.integer(1, 3), V = rng.integer(1, 9), L = rng.integer(1, 7);
  in.logits = rng.array({B, V}, -3.0, 3.0);
  in.scores = rng.array({B, L}, -3.0, 3.0);
  in.sentinel = rng.array({B, 1}, -3.0, 3.0);
  in.window = Index::from_shape({B, L});
  in.targets = Index::from_shape({B});
  const std::size_t few = std::min<std::size_t>(V, 3);
  for (auto& w : in.window) w = std::int64_t(rng.integer(0, few - 1));
  for (auto& y : in.targets) y = std::int64_t(rng.integer(0, V - 1));
  return in;
}

Result grade(const PointerSentinel& m, std::ostream& os) {
  Grader grader(17, "the pointer sentinel's mixture", os);
  Reference ref("lab17_pointer_sentinel");
  auto fixed = [&](const std::string& c, bool targets) {
    Inputs in{ref.array(c, "logits"), ref.array(c, "scores"), ref.array(c, "sentinel"), ids_of(ref.array(c, "window")),
              targets ? ids_of(ref.array(c, "targets")) : Index()};
    return in;
  };

  // A mistake named on random inputs only when the learner's output on the fixed inputs is that same mistake:
  // on small random shapes (one row, one slot, few words) unrelated bugs can give a mistake's values.
  auto confirm_mixture = [&](const std::string& named) -> std::string {
    if (named.empty()) return named;
    try {
      attn::no_grad guard;
      Inputs in = fixed("mixture", false);
      Array got = array_of(m.mixture(Tensor(in.logits), Tensor(in.scores), Tensor(in.sentinel), in.window), "p");
      return diagnose_mixture(in.logits, in.scores, in.sentinel, in.window, got) == named ? named : "";
    } catch (const std::exception&) {
      return "";
    }
  };
  auto confirm_log_prob = [&](const std::string& named) -> std::string {
    if (named.empty()) return named;
    try {
      attn::no_grad guard;
      Inputs in = fixed("log_prob", true);
      Array got = array_of(m.log_prob(Tensor(in.logits), Tensor(in.scores), Tensor(in.sentinel), in.window,
                                      in.targets),
                           "log p(y)");
      return diagnose_log_prob(in.logits, in.scores, in.sentinel, in.window, in.targets, got) == named ? named : "";
    } catch (const std::exception&) {
      return "";
    }
  };

  // ---- the mixture ----
  auto fixed_mixture = [&](const std::string& c) {
    attn::no_grad guard;
    Inputs in = fixed(c, false);
    Tensor got = m.mixture(Tensor(in.logits), Tensor(in.scores), Tensor(in.sentinel), in.window);
    try {
      expect_close("p", ref.array(c, "p"), got, in.describe(), 1e-10, 1e-12);
    } catch (const Mismatch& e) {
      throw Mismatch(e.what() + diagnose_mixture(in.logits, in.scores, in.sentinel, in.window, array_of(got, "p")));
    }
  };
  grader.check("mixture vs PyTorch (B 4, V 8, L 6: a word in 3 slots, <unk> in 3 slots, a window of distinct words)",
               hint::mixture, [&] { fixed_mixture("mixture"); });
  grader.check("mixture: every row of p sums to 1 (random B, V, L, words repeated)", hint::sums_to_one, [&] {
    Random rng(17100);
    for (int trial = 0; trial < 12; ++trial) {
      Inputs in = random_inputs(rng);
      attn::no_grad guard;
      Array p = array_of(m.mixture(Tensor(in.logits), Tensor(in.scores), Tensor(in.sentinel), in.window), "p");
      if (p.dimension() != 2 || p.shape()[0] != in.logits.shape()[0] || p.shape()[1] != in.logits.shape()[1])
        throw Mismatch("p has shape " + shape_str(Shape(p.shape().begin(), p.shape().end())) + ", expected " +
                           shape_str(Shape(in.logits.shape().begin(), in.logits.shape().end())) + " (inputs: " +
                           in.describe() + ")",
                       hint::random_shapes);
      for (std::size_t b = 0; b < p.shape()[0]; ++b) {
        double total = xt::sum(xt::view(p, b, xt::all()))();
        if (!(std::abs(total - 1.0) <= 1e-10))
          throw Mismatch("row " + std::to_string(b) + " of p sums to " + num_str(total) + ", expected 1 (inputs: " +
                         in.describe() + ")" +
                         confirm_mixture(diagnose_mixture(in.logits, in.scores, in.sentinel, in.window, p)));
      }
    }
  });
  grader.check("mixture with scores, sentinel and logits near 1000 vs PyTorch (B 2, V 5, L 4)", hint::large, [&] {
    try {
      fixed_mixture("large");
    } catch (const Mismatch& e) {
      bool right_at_ordinary = true;
      try {
        fixed_mixture("mixture");
      } catch (const std::exception&) {
        right_at_ordinary = false;
      }
      attn::no_grad guard;
      Inputs in = fixed("large", false);
      bool finite = all_finite(
          array_of(m.mixture(Tensor(in.logits), Tensor(in.scores), Tensor(in.sentinel), in.window), "p"));
      throw at_extreme(e, finite, right_at_ordinary, hint::large, hint::mixture);
    }
  });
  grader.check("mixture: gradients of logits, scores and sentinel vs PyTorch (of sum(p * r))", hint::gradients, [&] {
    std::vector<Tensor> a = {ref.tensor("mixture", "logits", true), ref.tensor("mixture", "scores", true),
                             ref.tensor("mixture", "sentinel", true)};
    Tensor p = m.mixture(a[0], a[1], a[2], ids_of(ref.array("mixture", "window")));
    if (!p.requires_grad())
      throw Mismatch("mixture(...) does not require grad: it was not built from logits, scores and sentinel with "
                     "attn's ops");
    attn::sum(p * ref.tensor("mixture", "r")).backward();
    const char* names[] = {"logits", "scores", "sentinel"};
    for (std::size_t i = 0; i < 3; ++i) {
      try {
        expect_grad_defined(a[i], names[i], hint::gradients);
        expect_close(std::string("the gradient of ") + names[i], ref.array("mixture", std::string("grad_") + names[i]),
                     a[i].grad(), "logits [4, 8], scores [4, 6], sentinel [4, 1]", 1e-9, 1e-11);
      } catch (const Mismatch& e) {
        try {
          expect_close("", ref.array("mixture", "p"), p, "", 1e-10, 1e-12);
        } catch (const Mismatch&) {
          throw Mismatch(e.what() + std::string("; p's values are wrong too"), hint::wrong_values);
        }
        throw;
      }
    }
  });
  grader.check("mixture, random B (1 to 3), V (1 to 9), L (1 to 7), words repeated, vs the chapter's formula",
               hint::random_shapes, [&] {
                 Random rng(17200);
                 for (int trial = 0; trial < 16; ++trial) {
                   Inputs in = random_inputs(rng);
                   attn::no_grad guard;
                   Tensor got = m.mixture(Tensor(in.logits), Tensor(in.scores), Tensor(in.sentinel), in.window);
                   try {
                     expect_close("p", mix(in.logits, in.scores, in.sentinel, in.window, Mix::right), got,
                                  in.describe(), 1e-9, 1e-12);
                   } catch (const Mismatch& e) {
                     std::string named = confirm_mixture(
                         diagnose_mixture(in.logits, in.scores, in.sentinel, in.window, array_of(got, "p")));
                     throw Mismatch(e.what() + named, named.empty() ? hint::random_shapes : hint::mixture);
                   }
                 }
               });
  grader.check("mixture: gradcheck of logits, scores and sentinel (random shapes, words repeated)", hint::gradients,
               [&] {
                 Random rng(17300);
                 for (int trial = 0; trial < 4; ++trial) {
                   Inputs in = random_inputs(rng);
                   std::vector<Tensor> a = {Tensor(in.logits, true), Tensor(in.scores, true), Tensor(in.sentinel, true)};
                   if (!m.mixture(a[0], a[1], a[2], in.window).requires_grad())
                     throw Mismatch("mixture(...) does not require grad: it was not built from logits, scores and "
                                    "sentinel with attn's ops");
                   expect_gradients(
                       "mixture",
                       [&](const std::vector<Tensor>& x) { return m.mixture(x[0], x[1], x[2], in.window); }, a,
                       {"logits", "scores", "sentinel"});
                 }
               });

  // ---- log p(y) ----
  auto fixed_log_prob = [&](const std::string& c) {
    attn::no_grad guard;
    Inputs in = fixed(c, true);
    Tensor got = m.log_prob(Tensor(in.logits), Tensor(in.scores), Tensor(in.sentinel), in.window, in.targets);
    Array g = array_of(got, "log p(y)");
    const Array expected = ref.array(c, "log_prob");
    try {
      expect_close("log p(y)", expected, g, in.describe(), 1e-10, 1e-12);
    } catch (const Mismatch& e) {
      if (g.dimension() == 1 && !all_finite(g))
        throw Mismatch(e.what() + std::string("; your log p(y) is not finite: the log of a probability that rounds "
                                              "to 0 in float64"),
                       hint::tiny);
      if (g.shape() != expected.shape()) throw;
      // A -inf met on the way, absorbed by the logsumexp next to -1e30 fills, comes out near -1e30.
      bool near_fill = false, far_wrong = false, rest_right = true;
      for (std::size_t k = 0; k < g.size(); ++k) {
        const double want = expected.flat(k), got_k = g.flat(k);
        near_fill = near_fill || (got_k <= -1e29 && want > -1e29);
        bool right = std::abs(got_k - want) <= 1e-12 + 1e-10 * std::abs(want);
        if (want < -1e11) far_wrong = far_wrong || got_k > want / 2;
        else rest_right = rest_right && right;
      }
      if (near_fill)
        throw Mismatch(e.what() + std::string("; your log p(y) is near -1e30 where PyTorch's is finite: a log of a "
                                              "probability that rounds to 0 (log(softmax(...)), say) gave -inf, and "
                                              "the logsumexp kept it beside the -1e30 fills"),
                       hint::tiny);
      if (far_wrong && rest_right)
        throw Mismatch(e.what() + std::string("; right in every other row: in the row where log p(y) lies near -2e12 "
                                              "yours lies far above it, a finite fill's weight"),
                       hint::far_fill);
      std::string named = diagnose_log_prob(in.logits, in.scores, in.sentinel, in.window, in.targets, g);
      // the tiny rows can coincide with a mistake (a batch bug's copies of row 0's target, none here, say)
      throw Mismatch(e.what() + (c == "log_prob" ? named : confirm_log_prob(named)));
    }
  };
  grader.check("log_prob vs PyTorch (targets: a word in 3 slots, <unk> in 3 slots, a word in no slot, a word in no "
               "slot of a window of repeats)",
               hint::log_prob, [&] { fixed_log_prob("log_prob"); });
  grader.check("log_prob where p(y) rounds to 0 in float64 (near e^-1600, e^-900 and e^-2e12) vs PyTorch",
               hint::tiny, [&] {
    try {
      fixed_log_prob("tiny");
    } catch (const Mismatch& e) {
      bool right_at_ordinary = true;
      try {
        fixed_log_prob("log_prob");
      } catch (const std::exception&) {
        right_at_ordinary = false;
      }
      if (!right_at_ordinary)
        throw Mismatch(e.what() + std::string("; log_prob is wrong at ordinary values too: the check before names "
                                              "the mistake"),
                       hint::log_prob);
      throw;
    }
  });
  grader.check("log_prob: gradients of logits, scores and sentinel vs PyTorch (of sum(log p(y) * r))", hint::gradients,
               [&] {
                 std::vector<Tensor> a = {ref.tensor("log_prob", "logits", true),
                                          ref.tensor("log_prob", "scores", true),
                                          ref.tensor("log_prob", "sentinel", true)};
                 Tensor lp = m.log_prob(a[0], a[1], a[2], ids_of(ref.array("log_prob", "window")),
                                        ids_of(ref.array("log_prob", "targets")));
                 if (!lp.requires_grad())
                   throw Mismatch("log_prob(...) does not require grad: it was not built from logits, scores and "
                                  "sentinel with attn's ops");
                 attn::sum(lp * ref.tensor("log_prob", "r")).backward();
                 const char* names[] = {"logits", "scores", "sentinel"};
                 for (std::size_t i = 0; i < 3; ++i) {
                   try {
                     expect_grad_defined(a[i], names[i], hint::gradients);
                     expect_close(std::string("the gradient of ") + names[i],
                                  ref.array("log_prob", std::string("grad_") + names[i]), a[i].grad(),
                                  "logits [4, 8], scores [4, 6], sentinel [4, 1]", 1e-9, 1e-11);
                   } catch (const Mismatch& e) {
                     try {
                       expect_close("", ref.array("log_prob", "log_prob"), lp, "", 1e-10, 1e-12);
                     } catch (const Mismatch&) {
                       throw Mismatch(e.what() + std::string("; log p(y)'s values are wrong too"), hint::wrong_values);
                     }
                     throw;
                   }
                 }
               });
  grader.check("log_prob, random shapes and targets (in the window or not), vs log of the chapter's mixture, and "
               "gradcheck",
               hint::log_prob_random, [&] {
                 Random rng(17400);
                 for (int trial = 0; trial < 12; ++trial) {
                   Inputs in = random_inputs(rng);
                   {
                     attn::no_grad guard;
                     Tensor got = m.log_prob(Tensor(in.logits), Tensor(in.scores), Tensor(in.sentinel), in.window,
                                             in.targets);
                     try {
                       expect_close("log p(y)",
                                    log_p(in.logits, in.scores, in.sentinel, in.window, in.targets, LogP::right), got,
                                    in.describe(), 1e-9, 1e-12);
                     } catch (const Mismatch& e) {
                       throw Mismatch(e.what() + confirm_log_prob(diagnose_log_prob(in.logits, in.scores, in.sentinel,
                                                                                    in.window, in.targets,
                                                                                    array_of(got, "log p(y)"))));
                     }
                   }
                   if (trial % 3 != 0) continue;
                   std::vector<Tensor> a = {Tensor(in.logits, true), Tensor(in.scores, true), Tensor(in.sentinel, true)};
                   if (!m.log_prob(a[0], a[1], a[2], in.window, in.targets).requires_grad())
                     throw Mismatch("log_prob(...) does not require grad: it was not built from logits, scores and "
                                    "sentinel with attn's ops",
                                    hint::gradients);
                   expect_gradients(
                       "log_prob",
                       [&](const std::vector<Tensor>& x) { return m.log_prob(x[0], x[1], x[2], in.window, in.targets); },
                       a, {"logits", "scores", "sentinel"});
                 }
               });
  return grader.finish();
}

}  // namespace pointer_sentinel
}  // namespace lab
