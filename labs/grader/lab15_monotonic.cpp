// The checks of lab15_monotonic.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab15_monotonic.hpp"

#include "labs/grader/grader.hpp"

#include <cmath>
#include <functional>
#include <optional>

namespace lab {
namespace monotonic {

using Positions = std::vector<std::vector<long>>;
using Lengths = std::vector<std::size_t>;

namespace hint {
inline const char* recurrence =
    "p = sigmoid(energy); alpha_{-1} puts all its mass on position 0; for each step t, along j: "
    "q_tj = (1 - p_{t,j-1}) q_{t,j-1} + alpha_{t-1,j} (q_t0 = alpha_{t-1,0}), alpha_tj = p_tj q_tj";
inline const char* padding =
    "p is 0 on padding, j >= lengths[b] (masked_fill before the recurrence), so alpha is 0 there: the mass that "
    "reaches the end of the source is lost, and the rows sum to at most 1";
inline const char* division =
    "your values are not finite where p is exactly 0 or 1 (on padding, or sigmoid of an energy far from 0): something "
    "divides by p_{t,j-1} (Raffel et al.'s eq. 10) or by a cumulative product of 1 - p (their parallel form); the "
    "recurrence in q, q_tj = (1 - p_{t,j-1}) q_{t,j-1} + alpha_{t-1,j}, divides by nothing";
inline const char* gradients =
    "build alpha from energy with attn's ops (sigmoid, masked_fill, select, *, +, stack), nothing copied through an "
    "array: autograd then finds the backward";
inline const char* wrong_values =
    "the gradient of a wrong function is wrong too: the checks of its values name the mistake; fix those first";
inline const char* random =
    "B is energy.size(0), Tq energy.size(1), Tk energy.size(2); a length may be anything from 0 (no position to stop "
    "at: alpha all 0) to Tk";
inline const char* hard =
    "step t starts where step t - 1 stopped (the first step at 0) and stops at the first j < lengths[b] with "
    "energy >= 0 (p >= 0.5), which may be where step t - 1 stopped; running off the end gives -1, and every later "
    "step of that sequence too (the pointer never moves back)";
inline const char* exact_zero =
    "p must be exactly 0 on padding: block it, or set p = 0 there (masked_fill on p, or energies filled with -1e4 or "
    "less, whose sigmoid is 0 in float64); a finite fill such as -30 leaves p near 1e-13, and alpha takes mass where "
    "no position exists";
inline const char* agree =
    "with energies far from 0 every coin flip is certain: the expected alignment is the one-hot row of the hard "
    "decision (all 0 where it ran off the end); the checks above say which of your two functions is wrong";
}  // namespace hint

// ---- the expected alignment and the usual mistakes, computed here on arrays ----

enum class Soft { right, p_same, alpha_form, restart, no_padding, padding_from_next, flipped, normalised, initial_zero };

inline Array soft(const Array& energy, const Lengths& L, Soft v) {
  const std::size_t B = energy.shape()[0], Tq = energy.shape()[1], Tk = energy.shape()[2];
  Array alpha = xt::zeros<double>({B, Tq, Tk});
  for (std::size_t b = 0; b < B; ++b) {
    const std::size_t S = v == Soft::no_padding ? Tk : v == Soft::padding_from_next ? std::min(Tk, L[b] + 1) : L[b];
    auto p = [&](std::size_t t, std::size_t j) {
      return j >= S ? 0.0 : 1.0 / (1.0 + std::exp(v == Soft::flipped ? energy(b, t, j) : -energy(b, t, j)));
    };
    std::vector<double> previous(Tk, 0.0), start(Tk, 0.0);
    if (v != Soft::initial_zero) previous[0] = start[0] = 1.0;
    for (std::size_t t = 0; t < Tq; ++t) {
      const std::vector<double>& from = v == Soft::restart ? start : previous;
      std::vector<double> a(Tk);
      double q = 0.0, sum = 0.0;
      for (std::size_t j = 0; j < Tk; ++j) {
        if (v == Soft::alpha_form)
          a[j] = p(t, j) * ((j ? (1.0 - p(t, j - 1)) * a[j - 1] : 0.0) + from[j]);
        else {
          q = j == 0 ? from[0] : (1.0 - (v == Soft::p_same ? p(t, j) : p(t, j - 1))) * q + from[j];
          a[j] = p(t, j) * q;
        }
        sum += a[j];
      }
      for (std::size_t j = 0; j < Tk; ++j) alpha(b, t, j) = previous[j] = v == Soft::normalised ? a[j] / sum : a[j];
    }
  }
  return alpha;
}

// "; your values are what this mistake gives: ..." when exactly one usual mistake gives the learner's values.
inline std::string diagnose_soft(const Array& energy, const Lengths& L, const Array& got) {
  const std::vector<std::pair<Soft, const char*>> mistakes = {
      {Soft::p_same,
       "q_tj carried on with (1 - p_tj), this position's p: what reaches j still reading did not stop at j - 1, "
       "q_tj = (1 - p_{t,j-1}) q_{t,j-1} + alpha_{t-1,j}"},
      {Soft::alpha_form,
       "the recurrence written in alpha, alpha_tj = p_tj ((1 - p_{t,j-1}) alpha_{t,j-1} + alpha_{t-1,j}), misses the "
       "division by p_{t,j-1} of Raffel et al.'s eq. 10; carry q_tj = alpha_tj / p_tj instead, which needs none"},
      {Soft::restart,
       "every step starts from position 0 (from alpha_{-1}): step t starts from alpha_{t-1}, where step t - 1 "
       "stopped"},
      {Soft::no_padding, "p not zeroed on padding: the positions j >= lengths[b] take mass"},
      {Soft::padding_from_next, "position lengths[b] itself left unpadded: padding is j >= lengths[b]"},
      {Soft::flipped,
       "p = sigmoid(-energy), the probability of reading on: p = sigmoid(energy) is the probability of stopping"},
      {Soft::normalised,
       "each step's alpha normalised to sum 1: its rows sum to at most 1, the rest is the probability of running "
       "off the end"},
      {Soft::initial_zero,
       "alpha_{-1} all 0: before the first step all the mass sits on position 0 (alpha_{-1,0} = 1)"}};
  std::vector<const char*> matched;
  for (const auto& [v, what] : mistakes) {
    try {
      expect_close("", soft(energy, L, v), got, "", 1e-9, 1e-12);
      matched.push_back(what);
    } catch (const Mismatch&) {
    }
  }
  if (matched.size() == 1) return std::string("; your values are what this mistake gives: ") + matched[0];
  if (matched.size() > 1) return "; at these shapes several usual mistakes give these values: the fixed checks tell them apart";
  return "";
}

inline std::string lengths_str(const Lengths& L) {
  std::string out = "(";
  for (std::size_t i = 0; i < L.size(); ++i) out += (i ? ", " : "") + std::to_string(L[i]);
  return out + ")";
}

inline Lengths lengths_of(const Array& a) {
  Lengths L;
  for (double v : a) L.push_back(static_cast<std::size_t>(v));
  return L;
}

// The learner's alpha against `expected`, with the mistake its values match; not finite -> the division hint.
inline void compare_soft(const std::string& what, const Array& expected, const Array& energy, const Lengths& L,
                         const Tensor& got_tensor) {
  Array got = array_of(got_tensor, what);
  std::string inputs = "energy " + shape_str(Shape(energy.shape().begin(), energy.shape().end())) + ", lengths " +
                       lengths_str(L);
  try {
    expect_close(what, expected, got, inputs, 1e-9, 1e-12);
  } catch (const Mismatch& e) {
    if (!all_finite(got))
      throw Mismatch(e.what() + std::string("; your values are not finite, for finite energies"), hint::division);
    throw Mismatch(e.what() + diagnose_soft(energy, L, got));
  }
}

// ---- hard decoding and the usual mistakes ----

enum class Hard { right, strict, restart, past_stop, lengths_ignored, last_not_none, stays };

inline Positions hard(const Array& e, const Lengths& L, Hard v) {
  const std::size_t B = e.shape()[0], Tq = e.shape()[1], Tk = e.shape()[2];
  Positions out(B, std::vector<long>(Tq));
  for (std::size_t b = 0; b < B; ++b) {
    const std::size_t S = v == Hard::lengths_ignored ? Tk : L[b];
    std::size_t j = 0;
    for (std::size_t t = 0; t < Tq; ++t) {
      if (v == Hard::restart) j = 0;
      if (v == Hard::stays) {  // the search runs ahead of the pointer, which moves only when it finds a stop
        std::size_t k = j;
        while (k < S && e(b, t, k) < 0.0) ++k;
        if (k < S) j = k;
        out[b][t] = k < S ? long(k) : -1;
        continue;
      }
      while (j < S && (v == Hard::strict ? e(b, t, j) <= 0.0 : e(b, t, j) < 0.0)) ++j;
      out[b][t] = j < S ? long(j) : v == Hard::last_not_none && S > 0 ? long(S) - 1 : -1;
      if (v == Hard::past_stop && j < S) ++j;
    }
  }
  return out;
}

// "; your positions are what this mistake gives: ..." when exactly one usual mistake gives the learner's positions,
// and, when `also` is given, also passes it (the random check asks that it reproduce the fixed corners case too:
// on a tiny draw several mistakes coincide by chance).
inline std::string diagnose_hard(const Array& e, const Lengths& L, const Positions& got,
                                 const std::function<bool(Hard)>& also = nullptr) {
  const std::vector<std::pair<Hard, const char*>> mistakes = {
      {Hard::strict, "stops only at energy > 0 (p > 0.5): an energy of exactly 0 (p = 0.5) stops, as attn decodes"},
      {Hard::restart,
       "every step starts again at position 0: step t starts where step t - 1 stopped, and never goes back"},
      {Hard::past_stop,
       "the next step starts after the previous stop (j + 1): it starts at the stop itself, and may attend to the "
       "same position again"},
      {Hard::lengths_ignored, "lengths ignored: a step never stops on padding (j >= lengths[b]); past it, -1"},
      {Hard::last_not_none,
       "running off the end gives the last position: it gives -1 (attend to nothing, a context of 0)"},
      {Hard::stays,
       "running off the end left the pointer where it was, so a later step stopped again: once a step runs off the "
       "end, every later step of that sequence gives -1 (the pointer never moves back)"}};
  std::vector<const char*> matched;
  for (const auto& [v, what] : mistakes)
    if (hard(e, L, v) == got && (!also || also(v))) matched.push_back(what);
  if (matched.size() == 1) return std::string("; your positions are what this mistake gives: ") + matched[0];
  return "";
}

// `also` (may be null) is passed to diagnose_hard; `hint` false gives no diagnosis at all.
inline void compare_hard(const Positions& expected, const Array& e, const Lengths& L, const Positions& got,
                         const std::function<bool(Hard)>& also = nullptr, bool hint = true) {
  std::string inputs =
      "energy " + shape_str(Shape(e.shape().begin(), e.shape().end())) + ", lengths " + lengths_str(L);
  if (got.size() != expected.size())
    throw Mismatch("hard_alignment returned " + std::to_string(got.size()) + " sequences, expected B = " +
                   std::to_string(expected.size()) + " (inputs: " + inputs + ")");
  for (std::size_t b = 0; b < expected.size(); ++b) {
    if (got[b].size() != expected[b].size())
      throw Mismatch("hard_alignment returned " + std::to_string(got[b].size()) + " steps for sequence " +
                     std::to_string(b) + ", expected Tq = " + std::to_string(expected[b].size()) + " (inputs: " +
                     inputs + ")");
    for (std::size_t t = 0; t < expected[b].size(); ++t)
      if (got[b][t] != expected[b][t])
        throw Mismatch("hard_alignment (inputs: " + inputs + "), sequence " + std::to_string(b) + ", step " +
                       std::to_string(t) + ": expected position " + std::to_string(expected[b][t]) + ", received " +
                       std::to_string(got[b][t]) + (hint ? diagnose_hard(e, L, got, also) : std::string()));
  }
}

// alpha (or its gradient) exactly 0 at every j >= lengths[b]: close is not enough, mass on padding is a bug.
inline void expect_zero_on_padding(const std::string& what, const Array& got, const Lengths& L,
                                   const std::string& inputs) {
  for (std::size_t b = 0; b < got.shape()[0]; ++b)
    for (std::size_t t = 0; t < got.shape()[1]; ++t)
      for (std::size_t j = L[b]; j < got.shape()[2]; ++j)
        if (got(b, t, j) != 0.0)
          throw Mismatch(what + " (inputs: " + inputs + "), sequence " + std::to_string(b) + ", step " +
                             std::to_string(t) + ", position " + std::to_string(j) + " >= lengths[b] = " +
                             std::to_string(L[b]) + ": expected exactly 0 on padding, received " + num_str(got(b, t, j)),
                         hint::exact_zero);
}

inline std::string soft_inputs(const Array& e, const Lengths& L) {
  return "energy " + shape_str(Shape(e.shape().begin(), e.shape().end())) + ", lengths " + lengths_str(L);
}

inline Positions positions_of(const Array& a) {  // [B, Tq] of floats -> positions
  Positions out(a.shape()[0], std::vector<long>(a.shape()[1]));
  for (std::size_t b = 0; b < out.size(); ++b)
    for (std::size_t t = 0; t < out[b].size(); ++t) out[b][t] = static_cast<long>(a(b, t));
  return out;
}

inline attn::Index index_of(const Lengths& L) {
  attn::Index out = attn::Index::from_shape({L.size()});
  for (std::size_t i = 0; i < L.size(); ++i) out(i) = static_cast<std::int64_t>(L[i]);
  return out;
}

Result grade(const Monotonic& m, std::ostream& os) {
  Grader grader(15, "monotonic attention: the expected alignment and hard decoding", os);
  Reference ref("lab15_monotonic");

  // ---- the expected alignment ----
  auto fixed_soft = [&](const std::string& c, const std::string& energy_name, const std::string& alpha_name) {
    attn::no_grad guard;
    Array e = ref.array(c, energy_name);
    Lengths L = lengths_of(ref.array(c, "lengths"));
    Tensor got = m.expected_alignment(Tensor(e), L);
    compare_soft("expected_alignment(energy, lengths)", ref.array(c, alpha_name), e, L, got);
    expect_zero_on_padding("expected_alignment(energy, lengths)", array_of(got, "expected_alignment"), L,
                           soft_inputs(e, L));
  };
  grader.check("expected_alignment: the chapter's hand case (p = (0.5, 0.5, 0.5), then (0.2, 0.4, 0.6)) vs PyTorch",
               hint::recurrence, [&] { fixed_soft("hand", "energy", "alpha"); });
  grader.check("expected_alignment vs PyTorch, padded (energy [2, 4, 5], lengths 5 and 3)", hint::padding,
               [&] { fixed_soft("padded", "energy", "alpha"); });
  grader.check("expected_alignment: gradient of energy vs PyTorch (of sum(alpha * r); energy [2, 4, 5], lengths 5 and 3)",
               hint::gradients, [&] {
                 Tensor e = ref.tensor("padded", "energy", true);
                 Lengths L = lengths_of(ref.array("padded", "lengths"));
                 Tensor alpha = m.expected_alignment(e, L);
                 if (!alpha.requires_grad())
                   throw Mismatch("expected_alignment(energy) does not require grad: it was not built from energy "
                                  "with attn's ops");
                 attn::sum(alpha * ref.tensor("padded", "r")).backward();
                 try {
                   expect_close("the gradient of energy", ref.array("padded", "grad_energy"), e.grad(),
                                "energy [2, 4, 5], lengths (5, 3)", 1e-8, 1e-11);
                 } catch (const Mismatch& err) {
                   try {
                     expect_close("", ref.array("padded", "alpha"), alpha, "", 1e-9, 1e-12);
                   } catch (const Mismatch&) {
                     throw Mismatch(err.what() + std::string("; expected_alignment's values are wrong too"),
                                    hint::wrong_values);
                   }
                   throw;
                 }
                 expect_zero_on_padding("the gradient of energy", array_of(e.grad(), "the gradient of energy"), L,
                                        "energy [2, 4, 5], lengths (5, 3)");
               });
  grader.check("expected_alignment at saturated energies (40, 800, -800: p exactly 1 or 0 in float64) vs PyTorch",
               hint::recurrence, [&] {
                 attn::no_grad guard;
                 Array e = ref.array("saturated", "energy");
                 Lengths L = lengths_of(ref.array("saturated", "lengths"));
                 Tensor got = m.expected_alignment(Tensor(e), L);
                 try {
                   expect_close("expected_alignment(energy, lengths)", ref.array("saturated", "alpha"), got,
                                "energy [1, 3, 5], lengths (5)", 1e-9, 1e-12);
                 } catch (const Mismatch& err) {
                   bool ordinary_right = true;  // the same energies clipped to [-3, 3]
                   try {
                     Array clipped = ref.array("saturated", "ordinary");
                     expect_close("", ref.array("saturated", "alpha_ordinary"),
                                  m.expected_alignment(Tensor(clipped), L), "", 1e-9, 1e-12);
                   } catch (const Mismatch&) {
                     ordinary_right = false;
                   }
                   throw at_extreme(err, all_finite(array_of(got, "expected_alignment")), ordinary_right,
                                    hint::division, hint::recurrence);
                 }
               });
  grader.check("expected_alignment, random B, Tq, Tk and lengths (0 to Tk), vs nn::monotonic_alignment", hint::random,
               [&] {
                 Random rng(15000);
                 for (int trial = 0; trial < 12; ++trial) {
                   std::size_t B = rng.integer(1, 3), Tq = rng.integer(1, 5), Tk = rng.integer(1, 6);
                   Lengths L(B);
                   for (auto& l : L) l = trial < 4 ? Tk : rng.integer(0, Tk);
                   Array e = rng.array({B, Tq, Tk}, -3.0, 3.0);
                   attn::no_grad guard;
                   Array expected = attn::nn::monotonic_alignment(attn::sigmoid(Tensor(e)), index_of(L)).data<double>();
                   Tensor got = m.expected_alignment(Tensor(e), L);
                   compare_soft("expected_alignment(energy, lengths)", expected, e, L, got);
                   expect_zero_on_padding("expected_alignment(energy, lengths)", array_of(got, "expected_alignment"),
                                          L, soft_inputs(e, L));
                 }
               });
  grader.check("gradcheck of expected_alignment, random shapes and lengths", hint::gradients, [&] {
    Random rng(15100);
    for (int trial = 0; trial < 4; ++trial) {
      std::size_t B = rng.integer(1, 2), Tq = rng.integer(1, 3), Tk = rng.integer(1, 4);
      Lengths L(B);
      for (auto& l : L) l = rng.integer(1, Tk);
      Tensor e(rng.array({B, Tq, Tk}, -2.0, 2.0), true);
      if (!m.expected_alignment(e, L).requires_grad())
        throw Mismatch("expected_alignment(energy) does not require grad: it was not built from energy with attn's ops");
      expect_gradients("expected_alignment", [&](const std::vector<Tensor>& in) { return m.expected_alignment(in[0], L); },
                       {e}, {"energy"});
    }
  });

  // ---- hard decoding ----
  auto fixed_hard = [&](const std::string& c) {
    Array e = ref.array(c, "energy");
    Lengths L = lengths_of(ref.array(c, "lengths"));
    compare_hard(positions_of(ref.array(c, "positions")), e, L, m.hard_alignment(Tensor(e), L));
  };
  grader.check("hard_alignment: the chapter's hand case (first p >= 0.5 from the last stop: 0, then 2)", hint::hard,
               [&] { fixed_hard("hand"); });
  grader.check("hard_alignment vs PyTorch: an energy of exactly 0, a stop repeated, a step that runs off the end, "
               "padding with positive energies (energy [2, 5, 5], lengths 5 and 3)",
               hint::hard, [&] { fixed_hard("hard"); });
  grader.check("hard_alignment, random shapes, lengths and energies (integers -2 .. 2 in half the trials), vs "
               "nn::hard_monotonic_alignment", hint::hard, [&] {
                 // A mistake is named only if it also gives the learner's positions on the fixed corners case, and
                 // never on a degenerate draw (Tk = 1 or every length <= 1), where several coincide.
                 const Array corner_e = ref.array("hard", "energy");
                 const Lengths corner_L = lengths_of(ref.array("hard", "lengths"));
                 std::optional<Positions> corner_got;
                 bool corner_tried = false;
                 auto also = [&](Hard v) {
                   if (!corner_tried) {
                     corner_tried = true;
                     try {
                       corner_got = m.hard_alignment(Tensor(corner_e), corner_L);
                     } catch (const std::exception&) {
                     }
                   }
                   return corner_got && hard(corner_e, corner_L, v) == *corner_got;
                 };
                 Random rng(15200);
                 for (int trial = 0; trial < 16; ++trial) {
                   std::size_t B = rng.integer(1, 3), Tq = rng.integer(1, 6), Tk = rng.integer(1, 6);
                   Lengths L(B);
                   for (auto& l : L) l = rng.integer(0, Tk);
                   Array e = rng.array({B, Tq, Tk}, -2.0, 2.0);
                   if (trial % 2 == 1) e = xt::round(e);
                   attn::Index expected = attn::nn::hard_monotonic_alignment(attn::sigmoid(Tensor(e)), index_of(L));
                   Positions want(B, std::vector<long>(Tq));
                   for (std::size_t b = 0; b < B; ++b)
                     for (std::size_t t = 0; t < Tq; ++t) want[b][t] = static_cast<long>(expected(b, t));
                   bool degenerate = Tk == 1;
                   if (!degenerate) {
                     degenerate = true;
                     for (std::size_t l : L) degenerate = degenerate && l <= 1;
                   }
                   compare_hard(want, e, L, m.hard_alignment(Tensor(e), L), also, !degenerate);
                 }
               });
  grader.check("expected and hard agree where the coin flips are certain (energies of magnitude 20 to 40)", hint::agree,
               [&] {
                 Random rng(15300);
                 for (int trial = 0; trial < 6; ++trial) {
                   std::size_t B = 2, Tq = rng.integer(2, 5), Tk = rng.integer(2, 6);
                   Lengths L(B);
                   for (auto& l : L) l = rng.integer(1, Tk);
                   Array e = rng.away_from_zero({B, Tq, Tk}, 20.0, 40.0);
                   attn::no_grad guard;
                   Array alpha = array_of(m.expected_alignment(Tensor(e), L), "expected_alignment");
                   Positions pos = m.hard_alignment(Tensor(e), L);
                   std::string inputs = "energy " + shape_str({B, Tq, Tk}) + ", lengths " + lengths_str(L);
                   if (pos.size() != B || alpha.shape() != Array::shape_type{B, Tq, Tk})
                     throw Mismatch("expected_alignment or hard_alignment returned the wrong shape (inputs: " +
                                    inputs + ")");
                   for (std::size_t b = 0; b < B; ++b)
                     for (std::size_t t = 0; t < Tq && t < pos[b].size(); ++t)
                       for (std::size_t j = 0; j < Tk; ++j) {
                         double want = pos[b][t] == long(j) ? 1.0 : 0.0;
                         if (!(std::abs(alpha(b, t, j) - want) <= 1e-6))
                           throw Mismatch("(inputs: " + inputs + ") sequence " + std::to_string(b) + ", step " +
                                          std::to_string(t) + ": hard_alignment says position " +
                                          std::to_string(pos[b][t]) + ", and expected_alignment puts " +
                                          num_str(alpha(b, t, j)) + " on position " + std::to_string(j));
                       }
                 }
               });
  return grader.finish();
}

}  // namespace monotonic
}  // namespace lab
