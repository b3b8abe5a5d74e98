// Wrong solutions of lab 17; labs/tests/test_lab17.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/17_pointer_sentinel.hpp"

namespace lab {
namespace planted {
namespace pointer_sentinel {

using attn::Index;
using attn::Tensor;

struct Mix {
  bool window_softmax = false, sentinel_outside = false, sigmoid_gate = false, gate_wrong_side = false,
       no_gate = false, raw_logits = false, last_wins = false, first_only = false, by_position = false,
       unstable = false, detached = false, window_row0 = false;
};

// A learner's mixture with one mistake; built from attn's ops unless `detached`.
inline Tensor mixture(const Mix& o, const Tensor& logits, const Tensor& scores, const Tensor& sentinel,
                      const Index& window) {
  const std::size_t B = scores.size(0), L = scores.size(-1), V = logits.size(-1);
  if (o.window_row0) {  // a batch bug: every row reads the window of row 0
    Index row0 = window;
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t j = 0; j < L; ++j) row0(b, j) = window(0, j);
    return lab::solutions::pointer_sentinel::mixture(logits, scores, sentinel, row0);
  }
  auto sm = [&](const Tensor& x) {  // unstable: exp without the maximum subtracted
    if (!o.unstable) return attn::softmax(x, -1);
    Tensor e = attn::exp(x);
    return e / attn::sum(e, {-1}, true);
  };
  Tensor w = sm(attn::concat({scores, sentinel}, -1));
  Tensor a = attn::narrow(w, -1, 0, L), g = attn::narrow(w, -1, L, 1);
  if (o.window_softmax) a = sm(scores);  // a second softmax, over the window alone
  if (o.sentinel_outside) {              // each exp over the window's sum: the sentinel not in the normaliser
    Tensor e = attn::exp(scores), total = attn::sum(e, {-1}, true);
    a = e / total;
    g = attn::exp(sentinel) / total;
  }
  if (o.sigmoid_gate) {
    g = attn::sigmoid(sentinel);
    a = (1.0 - g) * sm(scores);
  }
  // Which word each slot's weight goes to: [B, L, V], a row per slot.
  xt::xarray<double> words = xt::zeros<double>({B, L, V});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t j = 0; j < L; ++j) {
      if (o.by_position) {
        if (j < V) words(b, j, j) = 1.0;
        continue;
      }
      bool keep = true;
      for (std::size_t k = 0; k < L; ++k)
        if (window(b, k) == window(b, j) && ((o.last_wins && k > j) || (o.first_only && k < j))) keep = false;
      if (keep) words(b, j, std::size_t(window(b, j))) = 1.0;
    }
  Tensor copies = attn::squeeze(attn::matmul(attn::unsqueeze(a, 1), Tensor(words)), 1);
  Tensor pv = o.raw_logits ? logits : sm(logits);
  Tensor vocab_part = o.no_gate ? pv : o.gate_wrong_side ? (1.0 - g) * pv : g * pv;
  Tensor out = vocab_part + copies;
  return o.detached ? Tensor(out.data<double>()) : out;
}

// Every variant takes the log of a probability last; `naive` has that mistake alone.
struct LogP {
  bool naive = false, vocab_only = false, no_copies = false, every_slot = false, first_copy = false,
       gate_wrong_side = false, detached = false;
};

// A learner's log p(y) with one mistake, computed from probabilities (its log taken last).
inline Tensor log_prob(const LogP& o, const Tensor& logits, const Tensor& scores, const Tensor& sentinel,
                       const Index& window, const Index& targets) {
  const std::size_t B = scores.size(0), L = scores.size(-1), V = logits.size(-1);
  Tensor w = attn::softmax(attn::concat({scores, sentinel}, -1), -1);
  Tensor a = attn::narrow(w, -1, 0, L), g = attn::narrow(w, -1, L, 1);
  Tensor pv_y = attn::sum(attn::softmax(logits, -1) * attn::one_hot(targets, V), {-1}, true);  // [B, 1]
  xt::xarray<double> holds = xt::zeros<double>({B, L});
  for (std::size_t b = 0; b < B; ++b) {
    bool first = true;
    for (std::size_t j = 0; j < L; ++j)
      if (o.every_slot || (window(b, j) == targets(b) && (!o.first_copy || first))) {
        holds(b, j) = 1.0;
        if (window(b, j) == targets(b)) first = false;
      }
  }
  Tensor mass = attn::sum(a * Tensor(holds), {-1}, true);  // [B, 1]
  Tensor p = o.vocab_only ? pv_y : o.no_copies ? g * pv_y : o.gate_wrong_side ? (1.0 - g) * pv_y + mass : g * pv_y + mass;
  Tensor out = attn::squeeze(attn::log(p), -1);  // the log of a probability that may round to 0
  if (o.detached)  // the worked solution's values, copied through an array
    return Tensor(lab::solutions::pointer_sentinel::log_prob(logits, scores, sentinel, window, targets).data<double>());
  return out;
}

// The worked solution's log weights and logsumexp with one mistake on the way.
struct LogSpace {
  bool log_of_softmax = false;  // log p_vocab(y) as log(softmax(logits)(y)): -inf where it rounds to 0
  double fill = -1e30;          // the fill of the slots that do not hold y
  bool logits_detached = false, targets_row0 = false;
};

inline Tensor log_prob_log_space(const LogSpace& o, const Tensor& logits, const Tensor& scores, const Tensor& sentinel,
                                 const Index& window, const Index& targets) {
  const std::size_t B = scores.size(0), L = scores.size(-1), V = logits.size(-1);
  Tensor lg = o.logits_detached ? logits.detach() : logits;
  Tensor log_w = attn::log_softmax(attn::concat({scores, sentinel}, -1), -1);
  Tensor log_pv = o.log_of_softmax
                      ? attn::log(attn::sum(attn::softmax(lg, -1) * attn::one_hot(targets, V), {-1}, true))
                      : attn::sum(attn::log_softmax(lg, -1) * attn::one_hot(targets, V), {-1}, true);
  attn::Mask not_copy = xt::ones<bool>({B, L + 1});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t j = 0; j < L; ++j) not_copy(b, j) = window(b, j) != targets(o.targets_row0 ? 0 : b);
  Tensor log_copies = attn::masked_fill(log_w, not_copy, o.fill);
  Tensor log_gate = attn::narrow(log_w, -1, L, 1);
  return attn::logsumexp(attn::concat({log_gate + log_pv, log_copies}, -1), -1);
}

inline lab::pointer_sentinel::PointerSentinel with_log_space(LogSpace o) {
  lab::pointer_sentinel::PointerSentinel s = lab::solutions::pointer_sentinel::solution();
  s.log_prob = [o](const Tensor& l, const Tensor& z, const Tensor& st, const Index& win, const Index& y) {
    return log_prob_log_space(o, l, z, st, win, y);
  };
  return s;
}

// Wrong solutions whose values match no usual mistake: no failure of theirs may say "your values are what
// this mistake gives" (a -inf candidate, or random shapes small enough for a coincidence, would).
inline std::vector<Planted<lab::pointer_sentinel::PointerSentinel>> unnamed() {
  std::vector<Planted<lab::pointer_sentinel::PointerSentinel>> out;
  LogSpace o;
  o.log_of_softmax = true;
  out.push_back({"log p_vocab(y) as log(softmax(logits)), the rest from log weights", with_log_space(o),
                 "near -1e30 where PyTorch's is finite", true});
  o = {};
  o.targets_row0 = true;
  out.push_back({"a batch bug: every row's copies found with targets(0)", with_log_space(o),
                 "log p(y) = log(g p_vocab(y) + the sum of a_j", true});
  lab::pointer_sentinel::PointerSentinel s = lab::solutions::pointer_sentinel::solution();
  Mix m;
  m.window_row0 = true;
  s.mixture = [m](const Tensor& l, const Tensor& z, const Tensor& st, const Index& win) {
    return mixture(m, l, z, st, win);
  };
  out.push_back({"a batch bug: every row's mixture with the window of row 0", s, "one softmax over the L + 1 scores",
                 true});
  return out;
}

inline std::vector<Planted<lab::pointer_sentinel::PointerSentinel>> all() {
  using lab::pointer_sentinel::PointerSentinel;
  auto with_mix = [](Mix o) {
    PointerSentinel s = lab::solutions::pointer_sentinel::solution();
    s.mixture = [o](const Tensor& l, const Tensor& z, const Tensor& st, const Index& win) {
      return mixture(o, l, z, st, win);
    };
    return s;
  };
  auto with_log_p = [](LogP o) {
    PointerSentinel s = lab::solutions::pointer_sentinel::solution();
    s.log_prob = [o](const Tensor& l, const Tensor& z, const Tensor& st, const Index& win, const Index& y) {
      return log_prob(o, l, z, st, win, y);
    };
    return s;
  };
  std::vector<Planted<PointerSentinel>> out;
  Mix m;
  m.window_softmax = true;
  out.push_back({"two softmaxes: the pointer over the window alone, the gate from [scores ; sentinel]", with_mix(m),
                 "two softmaxes", true});
  m = {};
  m.sentinel_outside = true;
  out.push_back({"the sentinel left out of the softmax's normaliser", with_mix(m),
                 "the sentinel left out of the normaliser", true});
  m = {};
  m.sigmoid_gate = true;
  out.push_back({"g = sigmoid(sentinel), the pointer a softmax of its own", with_mix(m), "the gate from a sigmoid", true});
  m = {};
  m.gate_wrong_side = true;
  out.push_back({"(1 - g) p_vocab: the gate on the wrong side", with_mix(m), "the gate on the wrong side", true});
  m = {};
  m.no_gate = true;
  out.push_back({"p_vocab + the pointer, no gate", with_mix(m), "p_vocab not scaled by the gate", true});
  m = {};
  m.raw_logits = true;
  out.push_back({"g logits + the pointer: no softmax on the logits", with_mix(m), "without their softmax", true});
  m = {};
  m.last_wins = true;
  out.push_back({"a repeated word's weight overwritten (p[w] = a_j) instead of added", with_mix(m), "overwritten", true});
  m = {};
  m.first_only = true;
  out.push_back({"a repeated word's first slot only", with_mix(m), "a repeated word counted once", true});
  m = {};
  m.by_position = true;
  out.push_back({"slot j's weight added to word j", with_mix(m), "added to word j (the position)", true});
  m = {};
  m.unstable = true;
  out.push_back({"softmax as exp(x) / sum exp(x), no maximum subtracted", with_mix(m), "subtracts the maximum", true});
  m = {};
  m.detached = true;
  out.push_back({"mixture copied through an array (no gradient)", with_mix(m), "mixture(...) does not require grad",
                 true});

  LogP l;
  l.naive = true;
  out.push_back({"log_prob as log(p(y)) of the probabilities", with_log_p(l), "rounds to 0", true});
  l = {};
  l.vocab_only = true;
  out.push_back({"log_prob = log p_vocab(y)", with_log_p(l), "log p_vocab(y) alone", true});
  l = {};
  l.no_copies = true;
  out.push_back({"log_prob = log(g p_vocab(y)), the copies forgotten", with_log_p(l),
                 "the pointer's weight on the copies of y left out", true});
  l = {};
  l.every_slot = true;
  out.push_back({"log_prob adds every slot's weight, not only y's copies", with_log_p(l), "every slot's weight counted",
                 true});
  l = {};
  l.first_copy = true;
  out.push_back({"log_prob counts the first copy of y only", with_log_p(l), "only the first copy of y counted", true});
  l = {};
  l.gate_wrong_side = true;
  out.push_back({"log_prob with (1 - g) p_vocab(y)", with_log_p(l), "the gate on the wrong side (log((1 - g)", true});
  l = {};
  l.detached = true;
  out.push_back({"log_prob copied through an array (no gradient)", with_log_p(l), "log_prob(...) does not require grad",
                 true});

  LogSpace o;
  o.fill = -1e4;
  out.push_back({"log_prob with the slots not holding y filled with -1e4", with_log_space(o),
                 "a finite fill above it (-1e4, -1e9) takes the weight", true});
  o.fill = -1e9;
  out.push_back({"log_prob with the slots not holding y filled with -1e9", with_log_space(o),
                 "a finite fill above it (-1e4, -1e9) takes the weight", true});
  o = {};
  o.logits_detached = true;
  out.push_back({"log_prob with logits detached (no gradient to them)", with_log_space(o),
                 "logits.grad() is undefined: the output does not depend on logits", true});
  for (auto& p : unnamed()) out.push_back(p);
  return out;
}

}  // namespace pointer_sentinel
}  // namespace planted
}  // namespace lab
