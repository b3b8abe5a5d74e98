// The checks of lab14_rotary_alibi.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab14_rotary_alibi.hpp"

#include "labs/grader/grader.hpp"

#include <cmath>

namespace lab {
namespace rotary_alibi {

namespace hint {
inline const char* rotary =
    "feature k pairs with feature k + d/2 (rotate-half), k = 0 .. d/2 - 1; pair k of row t turns by the angle "
    "(start + t) theta_k, theta_k = base^(-2k / d): out[k] = x[k] cos - x[k + d/2] sin, "
    "out[k + d/2] = x[k + d/2] cos + x[k] sin";
inline const char* shapes =
    "x has any number of leading axes: T is x.size(-2) and d is x.size(-1); the angles [T, d/2] broadcast over "
    "the rest";
inline const char* relative =
    "a rotation: the same angle in both features of a pair (cos on both, -sin on the first and +sin on the "
    "second), proportional to the position; then R(m)^T R(n) = R(n - m) and the score depends only on m - n";
inline const char* gradients =
    "build the output from x with attn's ops (narrow, *, -, +, concat), nothing copied through an array: autograd "
    "then finds the backward, the rotation back";
inline const char* wrong_values =
    "the gradient of a wrong function is wrong too: the checks of its values name the mistake; fix those first";
inline const char* slopes_pow2 =
    "for H a power of two, m_h = 2^(-8h / H) with h = 1 .. H: for 8 heads 1/2, 1/4, ..., 1/256";
inline const char* slopes_other =
    "for other H, the paper's rule: the slopes of the largest power of two P below H, then every other slope of 2P "
    "(its 1st, 3rd, 5th, ...) until there are H";
inline const char* symmetric =
    "subtract m_h |i - j| from the score of query i and key j (head h's own slope, the farther the lower), the same "
    "bias [H, T, T] for every sequence of the batch";
inline const char* causal =
    "the same bias, then the keys after their query (j > i) blocked: masked_fill with -1e30 (nn::causal_mask(T)); "
    "a query sees itself";
inline const char* random_scores =
    "scores [B, H, T, T] - m_h |i - j| with the slopes of H heads (H is scores.size(1), T scores.size(-1)); with "
    "causal, the keys j > i filled with -1e30";
inline const char* attention =
    "alibi_scores adds a constant and fills the blocked scores: build it with attn's ops from scores (scores + bias, "
    "masked_fill), nothing copied through an array, so the gradient flows back to q and k";
}  // namespace hint

// ---- rotary: the right rotation and the usual mistakes, computed here on arrays ----

enum class Rot { right, interleaved, sign_flipped, k_from_one, exponent_k, start_ignored, base_ignored };

inline Array rotate(const Array& x, std::size_t start, double base, Rot v) {
  const std::size_t T = x.shape()[x.dimension() - 2], d = x.shape()[x.dimension() - 1], half = d / 2;
  Array out = x;
  for (std::size_t row = 0; row * d < x.size(); ++row) {
    const std::size_t t = row % T;
    for (std::size_t k = 0; k < half; ++k) {
      double e = v == Rot::k_from_one ? 2.0 * double(k + 1) / double(d) : v == Rot::exponent_k ? double(k) / double(d)
                                                                                                : 2.0 * double(k) / double(d);
      double p = double(v == Rot::start_ignored ? t : start + t);
      double a = p * std::pow(v == Rot::base_ignored ? 10000.0 : base, -e) * (v == Rot::sign_flipped ? -1.0 : 1.0);
      std::size_t i1 = v == Rot::interleaved ? 2 * k : k, i2 = v == Rot::interleaved ? 2 * k + 1 : k + half;
      double x1 = x.flat(row * d + i1), x2 = x.flat(row * d + i2);
      out.flat(row * d + i1) = x1 * std::cos(a) - x2 * std::sin(a);
      out.flat(row * d + i2) = x2 * std::cos(a) + x1 * std::sin(a);
    }
  }
  return out;
}

// "; your values are what this mistake gives: ..." when the learner's output is one of the usual mistakes.
inline std::string diagnose_rotary(const Array& x, std::size_t start, double base, const Array& got) {
  const std::vector<std::pair<Rot, const char*>> mistakes = {
      {Rot::interleaved,
       "features 2k and 2k + 1 paired (the paper's interleaved layout): attn pairs feature k with feature k + d/2 "
       "(rotate-half)"},
      {Rot::sign_flipped,
       "the rotation's angle has the wrong sign (turned by -p theta_k): out[k] = x[k] cos - x[k + d/2] sin, "
       "out[k + d/2] = x[k + d/2] cos + x[k] sin"},
      {Rot::k_from_one,
       "k counted from 1 in the frequencies, theta_k = base^(-2(k + 1) / d): the first pair, k = 0, turns by the "
       "position itself (theta_0 = 1)"},
      {Rot::exponent_k, "the exponent k / d instead of 2k / d: theta_k = base^(-2k / d)"},
      {Rot::start_ignored, "start ignored: row t sits at position start + t"},
      {Rot::base_ignored, "base ignored (10000 used): theta_k = base^(-2k / d) with the base given"}};
  for (const auto& [v, what] : mistakes) {
    try {
      expect_close("", rotate(x, start, base, v), got, "", 1e-9, 1e-11);
      return std::string("; your values are what this mistake gives: ") + what;
    } catch (const Mismatch&) {
    }
  }
  return "";
}

// ---- ALiBi: the slopes and the biased scores, right and with the usual mistakes ----

enum class Slopes { right, h_from_zero, next_power_truncated, geometric_over_h, odd_ones_of_above, reversed };

inline std::vector<double> slopes(std::size_t H, Slopes v) {
  if (v == Slopes::reversed) {  // the right slopes, last head first
    std::vector<double> m = slopes(H, Slopes::right);
    return std::vector<double>(m.rbegin(), m.rend());
  }
  auto power_of_two = [v](std::size_t n) {
    std::vector<double> m(n);
    for (std::size_t h = 0; h < n; ++h)
      m[h] = std::pow(2.0, -8.0 * double(v == Slopes::h_from_zero ? h : h + 1) / double(n));
    return m;
  };
  if (v == Slopes::geometric_over_h) return power_of_two(H);  // 2^(-8h / H) whatever H
  std::size_t below = 1;
  while (below * 2 <= H) below *= 2;
  if (v == Slopes::next_power_truncated && below < H) {
    std::vector<double> m = power_of_two(2 * below);
    return std::vector<double>(m.begin(), m.begin() + long(H));
  }
  std::vector<double> m = power_of_two(below);
  const std::vector<double> above = power_of_two(2 * below);
  for (std::size_t k = v == Slopes::odd_ones_of_above ? 1 : 0; m.size() < H; k += 2) m.push_back(above[k]);
  return m;
}

inline Array as_array(const std::vector<double>& v) {
  Array a = Array::from_shape({v.size()});
  std::copy(v.begin(), v.end(), a.begin());
  return a;
}

inline std::string diagnose_slopes(std::size_t H, const std::vector<double>& got) {
  const std::vector<std::pair<Slopes, const char*>> mistakes = {
      {Slopes::h_from_zero, "h counted from 0 (a first slope of 1): m_h = 2^(-8h / H) with h = 1 .. H"},
      {Slopes::next_power_truncated,
       "the first H slopes of the next power of two, without interleaving: the paper takes the slopes of the power "
       "of two P below H, then every other slope of 2P"},
      {Slopes::geometric_over_h,
       "2^(-8h / H) for a head count that is not a power of two: the paper's rule for other counts takes the slopes "
       "of the power of two P below H, then every other slope of 2P"},
      {Slopes::odd_ones_of_above,
       "every other slope of 2P from its 2nd: those repeat the slopes of P; take its 1st, 3rd, 5th, ..."},
      {Slopes::reversed,
       "the slopes in reverse order: m_1 is the steepest, 2^(-8/H), and they fall from there to 2^(-8) at m_H"}};
  for (const auto& [v, what] : mistakes) {
    try {
      expect_close("", as_array(slopes(H, v)), as_array(got), "", 1e-12, 1e-15);
      return std::string("; your slopes are what this mistake gives: ") + what;
    } catch (const Mismatch&) {
    }
  }
  return "";
}

enum class Bias { right, sign_flipped, no_abs, no_mask, diagonal_blocked, past_blocked, next_visible };

inline Array biased(const Array& scores, bool causal, Bias v) {
  const std::size_t H = scores.shape()[1], T = scores.shape()[3];
  const std::vector<double> m = slopes(H, Slopes::right);
  Array out = scores;
  for (std::size_t b = 0; b < scores.shape()[0]; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t j = 0; j < T; ++j) {
          double dist = v == Bias::no_abs ? double(i) - double(j) : std::abs(double(i) - double(j));
          out(b, h, i, j) += (v == Bias::sign_flipped ? 1.0 : -1.0) * m[h] * dist;
          bool blocked = v == Bias::diagonal_blocked ? j >= i
                        : v == Bias::past_blocked   ? j < i
                        : v == Bias::next_visible   ? j > i + 1
                                                    : j > i;
          if (causal && v != Bias::no_mask && blocked) out(b, h, i, j) = -1e30;
        }
  return out;
}

inline std::string diagnose_scores(const Array& scores, bool causal, const Array& got,
                                   const std::vector<double>& learner_slopes) {
  std::vector<std::pair<Bias, const char*>> mistakes = {
      {Bias::sign_flipped, "the bias added instead of subtracted (+m_h |i - j|): the farther the key, the lower its score"},
      {Bias::no_abs,
       "-m_h (i - j) without the absolute value: attn's symmetric form subtracts m_h |i - j|, keys on either side "
       "penalised alike"}};
  if (causal) {
    mistakes.push_back({Bias::no_mask, "the keys after their query not blocked: fill the scores with j > i with -1e30"});
    mistakes.push_back({Bias::diagonal_blocked, "the diagonal blocked too (j >= i): a query sees itself, block only j > i"});
    mistakes.push_back({Bias::past_blocked, "the keys before the query blocked (j < i) instead of those after it (j > i)"});
    mistakes.push_back({Bias::next_visible,
                        "the key right after its query left visible (only j > i + 1 blocked): block every j > i"});
  }
  // A mistake is named only when it alone gives these values: at a small T some give the same
  // (for T 2 nothing lies beyond i + 1), and naming one of them would point at the wrong mistake.
  std::vector<const char*> matched;
  for (const auto& [v, what] : mistakes) {
    try {
      expect_close("", biased(scores, causal, v), got, "", 1e-9, 1e-12);
      matched.push_back(what);
    } catch (const Mismatch&) {
    }
  }
  if (matched.size() == 1) return std::string("; your values are what this mistake gives: ") + matched[0];
  if (matched.size() > 1)
    return "; at T " + std::to_string(scores.shape()[3]) +
           " several usual mistakes give these values: the fixed checks above tell them apart";
  const std::size_t H = scores.shape()[1];
  try {
    expect_close("", as_array(slopes(H, Slopes::right)), as_array(learner_slopes), "", 1e-12, 1e-15);
  } catch (const Mismatch&) {
    return "; alibi_scores takes your alibi_slopes(" + std::to_string(H) +
           "), which are not the paper's: the slopes checks above name the mistake";
  }
  return "";
}

Result grade(const RotaryAlibi& m, std::ostream& os) {
  Grader grader(14, "rotary positions and ALiBi", os);
  Reference ref("lab14_rotary_alibi");

  // ---- rotary ----
  auto fixed_rotary = [&](const std::string& c, std::size_t start, double base) {
    attn::no_grad guard;
    Array x = ref.array(c, "x");
    Tensor got = m.rotary(Tensor(x), start, base);
    std::string inputs = "x " + shape_str(Shape(x.shape().begin(), x.shape().end())) + ", start " +
                         std::to_string(start) + ", base " + num_str(base);
    try {
      expect_close("rotary(x, " + std::to_string(start) + ", " + num_str(base) + ")", ref.array(c, "out"), got, inputs,
                   1e-10, 1e-12);
    } catch (const Mismatch& e) {
      throw Mismatch(e.what() + diagnose_rotary(x, start, base, array_of(got, "rotary")));
    }
  };
  grader.check("rotary vs PyTorch (x [2, 3, 5, 8], start 3, base 10000)", hint::rotary,
               [&] { fixed_rotary("rope", 3, 10000.0); });
  grader.check("rotary vs PyTorch with base 500 (x [1, 2, 4, 6], start 0)", hint::rotary,
               [&] { fixed_rotary("rope_base", 0, 500.0); });
  grader.check("rotary: gradient of x vs PyTorch (of sum(out * r); x [2, 3, 5, 8], start 3)", hint::gradients, [&] {
    Tensor x = ref.tensor("rope", "x", true);
    Tensor out = m.rotary(x, 3, 10000.0);
    if (!out.requires_grad())
      throw Mismatch("rotary(x) does not require grad: it was not built from x with attn's ops");
    attn::sum(out * ref.tensor("rope", "r")).backward();
    try {
      expect_close("the gradient of x", ref.array("rope", "grad_x"), x.grad(), "x [2, 3, 5, 8], start 3", 1e-10, 1e-12);
    } catch (const Mismatch& e) {
      try {
        expect_close("", ref.array("rope", "out"), out, "", 1e-10, 1e-12);
      } catch (const Mismatch&) {  // a wrong rotation has a wrong gradient: the values' checks name the mistake
        throw Mismatch(e.what() + std::string("; rotary's values are wrong too"), hint::wrong_values);
      }
      throw;
    }
  });
  grader.check("rotary, random shapes (2 to 4 axes), starts up to 1000 and bases, vs nn::rotary_embedding", hint::shapes,
               [&] {
                 Random rng(14000);
                 for (int trial = 0; trial < 12; ++trial) {
                   Shape s;
                   for (std::size_t a = rng.integer(0, 2); a > 0; --a) s.push_back(rng.integer(1, 3));
                   s.push_back(rng.integer(1, 6));
                   s.push_back(2 * rng.integer(1, 5));
                   std::size_t start = trial < 4 ? rng.integer(0, 5) : rng.integer(0, 1000);
                   double base = trial % 3 == 0 ? 10000.0 : rng.uniform(50.0, 20000.0);
                   Tensor x(rng.array(s));
                   attn::no_grad guard;
                   Tensor got = m.rotary(x, start, base);
                   try {
                     expect_close("rotary(x, " + std::to_string(start) + ", " + num_str(base) + ")",
                                  attn::nn::rotary_embedding(x, start, base).data<double>(), got,
                                  "x " + shape_str(s) + ", start " + std::to_string(start) + ", base " + num_str(base),
                                  1e-8, 1e-9);
                   } catch (const Mismatch& e) {
                     // The shapes hint only for a rotation right on the fixed [B, H, T, d] inputs; a wrong
                     // rotation gets the rotary diagnosis.
                     bool fixed_right = true;
                     try {
                       fixed_rotary("rope", 3, 10000.0);
                       fixed_rotary("rope_base", 0, 500.0);
                     } catch (const std::exception&) {
                       fixed_right = false;
                     }
                     if (fixed_right) throw;
                     throw Mismatch(e.what() + diagnose_rotary(x.data<double>(), start, base, array_of(got, "rotary")),
                                    hint::rotary);
                   }
                 }
               });
  grader.check("relative positions: rotary(q, m) . rotary(k, n) depends only on m - n (both shifted by 1, 37, 1000)",
               hint::relative, [&] {
                 Random rng(14100);
                 attn::no_grad guard;
                 for (std::size_t d : {2u, 8u}) {
                   Tensor q(rng.array({4, d})), k(rng.array({5, d}));
                   const std::size_t mq = 2, nk = 6;  // q's rows at positions 2 .. 5, k's at 6 .. 10
                   Array base = array_of(attn::matmul(m.rotary(q, mq, 10000.0), attn::transpose(m.rotary(k, nk, 10000.0), 0, 1)), "scores");
                   for (std::size_t shift : {1u, 37u, 1000u}) {
                     Tensor shifted = attn::matmul(m.rotary(q, mq + shift, 10000.0),
                                                   attn::transpose(m.rotary(k, nk + shift, 10000.0), 0, 1));
                     try {
                       expect_close("the scores shifted by " + std::to_string(shift), base, shifted,
                                    "q [4, " + std::to_string(d) + "] from position 2, k [5, " + std::to_string(d) +
                                        "] from position 6", 1e-8, 1e-9);
                     } catch (const Mismatch& e) {
                       throw Mismatch(e.what() + std::string("; the scores changed when both positions moved by ") +
                                      std::to_string(shift) + ": not a function of m - n alone");
                     }
                   }
                 }
               });
  grader.check("gradcheck of rotary, random shapes and starts", hint::gradients, [&] {
    Random rng(14200);
    for (int trial = 0; trial < 4; ++trial) {
      Tensor x(rng.array({rng.integer(1, 2), rng.integer(1, 4), 2 * rng.integer(1, 3)}), true);
      std::size_t start = rng.integer(0, 50);
      if (!m.rotary(x, start, 10000.0).requires_grad())
        throw Mismatch("rotary(x) does not require grad: it was not built from x with attn's ops");
      expect_gradients("rotary", [&](const std::vector<Tensor>& in) { return m.rotary(in[0], start, 10000.0); }, {x},
                       {"x"});
    }
  });

  // ---- ALiBi ----
  auto check_slopes = [&](std::initializer_list<std::size_t> counts) {
    for (std::size_t H : counts) {
      std::vector<double> got = m.alibi_slopes(H);
      try {
        expect_close("alibi_slopes(" + std::to_string(H) + ")", ref.array("slopes_" + std::to_string(H), "slopes"),
                     as_array(got), "H " + std::to_string(H), 1e-12, 1e-15);
      } catch (const Mismatch& e) {
        throw Mismatch(e.what() + diagnose_slopes(H, got));
      }
    }
  };
  grader.check("alibi_slopes for 1, 2, 4, 8 and 16 heads vs the paper's code", hint::slopes_pow2,
               [&] { check_slopes({1, 2, 4, 8, 16}); });
  grader.check("alibi_slopes for 3, 5, 6, 7 and 12 heads (not powers of two) vs the paper's code", hint::slopes_other,
               [&] { check_slopes({3, 5, 6, 7, 12}); });
  auto fixed_scores = [&](const std::string& c, bool causal) {
    attn::no_grad guard;
    Array s = ref.array(c, "scores");
    Tensor got = m.alibi_scores(Tensor(s), causal);
    try {
      expect_close(std::string("alibi_scores(scores, ") + (causal ? "true" : "false") + ")", ref.array(c, "out"), got,
                   "scores " + shape_str(Shape(s.shape().begin(), s.shape().end())), 1e-10, 1e-12);
    } catch (const Mismatch& e) {
      throw Mismatch(e.what() + diagnose_scores(s, causal, array_of(got, "alibi_scores"), m.alibi_slopes(s.shape()[1])));
    }
  };
  grader.check("alibi_scores, symmetric (the encoder's form; scores [2, 4, 5, 5]) vs PyTorch", hint::symmetric,
               [&] { fixed_scores("symmetric", false); });
  grader.check("alibi_scores, causal (scores [1, 6, 6, 6]) vs PyTorch", hint::causal,
               [&] { fixed_scores("causal", true); });
  grader.check("causal ALiBi attention softmax(alibi_scores(q k^T / sqrt(D), true)) v: values and gradients of q, k, v "
               "vs PyTorch", hint::attention, [&] {
                 std::vector<Tensor> a = {ref.tensor("attention", "q", true), ref.tensor("attention", "k", true),
                                          ref.tensor("attention", "v", true)};
                 Tensor scores = attn::matmul(a[0], attn::transpose(a[1], -2, -1)) / std::sqrt(3.0);
                 Tensor biased_scores = m.alibi_scores(scores, true);
                 if (!biased_scores.requires_grad())
                   throw Mismatch("alibi_scores(scores) does not require grad: it was not built from scores with "
                                  "attn's ops");
                 Tensor out = attn::matmul(attn::softmax(biased_scores, -1), a[2]);
                 std::string inputs = "q, k, v [2, 4, 5, 3]";
                 try {
                   expect_close("out", ref.array("attention", "out"), out, inputs, 1e-9, 1e-12);
                 } catch (const Mismatch& e) {
                   throw Mismatch(e.what() + std::string("; out comes from your alibi_scores"), hint::wrong_values);
                 }
                 attn::sum(out * ref.tensor("attention", "r")).backward();
                 const char* names[] = {"q", "k", "v"};
                 for (std::size_t i = 0; i < 3; ++i)
                   expect_close(std::string("the gradient of ") + names[i],
                                ref.array("attention", std::string("grad_") + names[i]), a[i].grad(), inputs, 1e-8,
                                1e-10);
               });
  grader.check("alibi_scores, random B, H (1 to 12) and T, symmetric and causal, vs nn::alibi_bias", hint::random_scores, [&] {
    Random rng(14300);
    for (int trial = 0; trial < 12; ++trial) {
      std::size_t B = rng.integer(1, 3), H = rng.integer(1, 12), T = rng.integer(1, 7);
      bool causal = trial % 2 == 1;
      Tensor s(rng.array({B, H, T, T}, -3.0, 3.0));
      attn::no_grad guard;
      Tensor expected = s + attn::nn::alibi_bias(H, T, 0, T, 0);
      if (causal) expected = attn::masked_fill(expected, attn::nn::causal_mask(T), -1e30);
      Tensor got = m.alibi_scores(s, causal);
      try {
        expect_close(std::string("alibi_scores(scores, ") + (causal ? "true" : "false") + ")",
                     expected.data<double>(), got, "scores " + shape_str(s.shape()), 1e-10, 1e-12);
      } catch (const Mismatch& e) {
        throw Mismatch(e.what() + diagnose_scores(s.data<double>(), causal, array_of(got, "alibi_scores"),
                                                  m.alibi_slopes(H)));
      }
    }
  });
  return grader.finish();
}

}  // namespace rotary_alibi
}  // namespace lab
