// The checks of lab05_sdpa.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab05_sdpa.hpp"

#include "labs/grader/grader.hpp"

#include <cmath>

namespace lab {
namespace sdpa {

namespace hint {
inline const char* causal =
    "true strictly above the diagonal (key j > query i): a query sees itself and every earlier step";
inline const char* padding = "true at positions j >= lengths[b]; a length of 0 blocks the whole row";
inline const char* unset =
    "set every element, the false ones too (m(i, j) = j > i;): Mask::from_shape leaves them unset, holding "
    "whatever the memory held before";
inline const char* attend =
    "scores = q k^T / sqrt(D) ([B, Tq, D] x [B, D, Tk]); mask the scores before the softmax (masked_fill "
    "with -1e30), the softmax over Tk (the last axis); out = weights v";
inline const char* blocked =
    "a row with every key blocked gets weights 0 (and so out 0): filled with -1e30 its softmax is uniform, so set "
    "the blocked weights to 0 after the softmax too (masked_fill(weights, mask, 0))";
inline const char* gradients =
    "the gradients come from the ops that make out and weights: build them from q, k and v with attn's ops "
    "(nothing detached or copied through an array); where the values checks fail too, fix those first";
inline const char* large = "large scores: attn::softmax subtracts each row's max and never overflows";
}  // namespace hint

enum class Variant { right, scale_by_d, no_scale, mask_after_softmax, no_mask };

inline Output reference(const Tensor& q, const Tensor& k, const Tensor& v, const attn::Mask& mask,
                        Variant variant = Variant::right) {
  if (variant == Variant::right) {
    attn::nn::AttentionOutput o = attn::nn::scaled_dot_product_attention(q, k, v, mask);
    return {o.context, o.weights};
  }
  double d = static_cast<double>(q.size(-1));
  double scale = variant == Variant::scale_by_d ? 1.0 / d : variant == Variant::no_scale ? 1.0 : 1.0 / std::sqrt(d);
  Tensor scores = attn::matmul(q, attn::transpose(k, 1, 2)) * scale;
  Tensor w = variant == Variant::no_mask ? attn::softmax(scores, -1)
             : variant == Variant::mask_after_softmax ? attn::masked_fill(attn::softmax(scores, -1), mask, 0.0)
                                                     : attn::nn::masked_softmax(scores, mask, -1);
  return {attn::matmul(w, v), w};
}

inline std::string diagnose(const std::vector<Tensor>& a, const attn::Mask& mask, const Output& got) {
  const std::vector<std::pair<Variant, const char*>> mistakes = {
      {Variant::scale_by_d, "the scores divided by D: divide by sqrt(D)"},
      {Variant::no_scale, "the scores not scaled: divide by sqrt(D)"},
      {Variant::mask_after_softmax,
       "the mask applied after the softmax: the weights no longer sum to 1; mask the scores before it"},
      {Variant::no_mask, "the mask is not applied"}};
  attn::no_grad guard;
  for (const auto& [variant, what] : mistakes) {
    try {
      Output o = reference(a[0], a[1], a[2], mask, variant);
      expect_close("out", o.first.data<double>(), got.first, "", 1e-9, 1e-12);
      expect_close("weights", o.second.data<double>(), got.second, "", 1e-9, 1e-12);
      return std::string("; your values are what this mistake gives: ") + what;
    } catch (const Mismatch&) {
    }
  }
  return "";
}

inline std::string arg_shapes(const std::vector<Tensor>& a, const attn::Mask& mask) {
  return shapes_str({{"q", a[0].shape()}, {"k", a[1].shape()}, {"v", a[2].shape()},
                     {"mask", Shape(mask.shape().begin(), mask.shape().end())}});
}

inline void expect_output(const std::vector<Tensor>& a, const attn::Mask& mask, const Output& expected,
                          const Output& got, bool name_the_mistake = false) {
  try {
    expect_close("weights", expected.second.data<double>(), got.second, arg_shapes(a, mask), 1e-9, 1e-12);
    expect_close("out", expected.first.data<double>(), got.first, arg_shapes(a, mask), 1e-9, 1e-12);
  } catch (const Mismatch& m) {
    // Named on the fixed inputs only: on a degenerate random case (one key, saturated
    // scores) two different mistakes can give the same values.
    throw Mismatch(m.what() + (name_the_mistake ? diagnose(a, mask, got) : std::string()));
  }
}

inline void expect_mask(const std::string& what, const attn::Mask& expected, const attn::Mask& got,
                        const std::string& inputs) {
  Shape es(expected.shape().begin(), expected.shape().end()), gs(got.shape().begin(), got.shape().end());
  if (es != gs) throw Mismatch(what + " has shape " + shape_str(gs) + ", expected " + shape_str(es) + " (" + inputs + ")");
  for (std::size_t k = 0; k < expected.size(); ++k)
    if (expected.flat(k) != got.flat(k))
      throw Mismatch(what + " (" + inputs + "), index " + shape_str(unravel(k, es)) + ": expected " +
                     (expected.flat(k) ? "true" : "false") + ", received " + (got.flat(k) ? "true" : "false"));
}

// Whether the learner's mask shows elements left unset: a byte neither 0 nor 1, a true where
// neither the rule nor its off-by-one has one (`may_be_true`), or two calls that differ.
inline bool looks_unset(const attn::Mask& got, const attn::Mask& again, const std::function<bool(const Shape&)>& may_be_true) {
  Shape gs(got.shape().begin(), got.shape().end()), as(again.shape().begin(), again.shape().end());
  const auto* bytes = reinterpret_cast<const unsigned char*>(got.data());
  const auto* again_bytes = reinterpret_cast<const unsigned char*>(again.data());
  for (std::size_t k = 0; k < got.size(); ++k) {
    if (bytes[k] > 1 || (bytes[k] == 1 && !may_be_true(unravel(k, gs)))) return true;
    if (gs == as && bytes[k] != again_bytes[k]) return true;
  }
  return false;
}

// Throws with the unset hint where two calls of `make` show elements left unset. Run over every
// case before comparing any (one case alone can look like an off-by-one).
inline void expect_set(const std::string& what, std::size_t dims, const std::function<attn::Mask()>& make,
                       const std::string& inputs, const std::function<bool(const Shape&)>& may_be_true) {
  attn::Mask got = make(), again = make();
  if (got.shape().size() == dims && looks_unset(got, again, may_be_true))
    throw Mismatch(what + " (" + inputs + "): its elements differ between two calls or hold trues no rule gives",
                   hint::unset);
}

// Random padding and causal masks [B, T, T], some rows blocked entirely when `empty_rows`.
inline attn::Mask random_mask(Random& rng, std::size_t B, std::size_t Tq, std::size_t Tk, bool empty_rows) {
  attn::Mask m = attn::Mask::from_shape({B, Tq, Tk});
  bool causal = Tq == Tk && rng.coin();
  for (std::size_t b = 0; b < B; ++b) {
    std::size_t len = rng.integer(empty_rows ? 0 : 1, Tk);
    for (std::size_t i = 0; i < Tq; ++i)
      for (std::size_t j = 0; j < Tk; ++j) m(b, i, j) = j >= len || (causal && j > i);
  }
  return m;
}

inline Output call(const Attention& m, const std::vector<Tensor>& a, const attn::Mask& mask) {
  return m.attention(a[0], a[1], a[2], mask);
}

Result grade(const Attention& m, std::ostream& os) {
  Grader grader(5, "scaled dot-product attention with padding and causal masks", os);
  Reference ref("lab05_sdpa");

  grader.check("causal_mask(T) for T from 1 to 6 vs nn::causal_mask", hint::causal, [&] {
    for (std::size_t T = 1; T <= 6; ++T)
      expect_set("causal_mask(" + std::to_string(T) + ")", 2, [&] { return m.causal_mask(T); }, "T " + std::to_string(T),
                 [](const Shape& ij) { return ij.size() == 2 && ij[1] >= ij[0]; });
    for (std::size_t T = 1; T <= 6; ++T) expect_mask("causal_mask(" + std::to_string(T) + ")", attn::nn::causal_mask(T),
                                                   m.causal_mask(T), "T " + std::to_string(T));
  });
  grader.check("padding_mask(lengths, T), lengths from 0 to T, vs nn::padding_mask", hint::padding, [&] {
    for (bool compare : {false, true}) {  // every case for unset elements first, then the values
      Random rng(5000);
      for (int trial = 0; trial < 8; ++trial) {
        std::size_t B = rng.integer(1, 4), T = rng.integer(1, 6);
        std::vector<std::size_t> lengths(B);
        attn::Index idx = attn::Index::from_shape({B});
        std::string text;
        for (std::size_t b = 0; b < B; ++b) {
          lengths[b] = rng.integer(0, T);
          idx(b) = static_cast<std::int64_t>(lengths[b]);
          text += (b ? ", " : "") + std::to_string(lengths[b]);
        }
        std::string inputs = "lengths {" + text + "}, T " + std::to_string(T);
        if (compare)
          expect_mask("padding_mask", attn::nn::padding_mask(idx, T), m.padding_mask(lengths, T), inputs);
        else
          expect_set("padding_mask", 2, [&] { return m.padding_mask(lengths, T); }, inputs,
                     [&](const Shape& bj) { return bj.size() != 2 || bj[0] >= B || bj[1] + 1 >= lengths[bj[0]]; });
      }
    }
  });
  auto fixed = [&](const std::string& c, bool requires_grad) {
    return std::vector<Tensor>{ref.tensor(c, "q", requires_grad), ref.tensor(c, "k", requires_grad),
                               ref.tensor(c, "v", requires_grad)};
  };
  auto fixed_values = [&](const std::string& c) {
    std::vector<Tensor> a = fixed(c, false);
    attn::Mask mask = xt::cast<bool>(ref.array(c, "mask"));
    expect_output(a, mask, {ref.tensor(c, "out"), ref.tensor(c, "weights")}, call(m, a, mask), true);
  };
  grader.check("values vs PyTorch, a padding mask (B 2, T 4, lengths 4 and 2)", hint::attend,
               [&] { fixed_values("padding"); });
  grader.check("values vs PyTorch, a causal mask", hint::attend, [&] { fixed_values("causal"); });
  grader.check("values vs PyTorch, both masks and a row with every key blocked (weights 0 there)", hint::blocked,
               [&] { fixed_values("both"); });
  grader.check("gradients vs PyTorch (of sum(out * ro) + sum(weights * rw); q, k, v), both masks", hint::gradients, [&] {
    std::vector<Tensor> a = fixed("both", true);
    attn::Mask mask = xt::cast<bool>(ref.array("both", "mask"));
    Output o = call(m, a, mask);
    if (!o.first.requires_grad() || !o.second.requires_grad())
      throw Mismatch("out or weights does not require grad: compute them with attn's ops from q, k and v");
    (attn::sum(o.first * ref.tensor("both", "ro")) + attn::sum(o.second * ref.tensor("both", "rw"))).backward();
    const char* names[] = {"q", "k", "v"};
    for (std::size_t i = 0; i < 3; ++i)
      expect_close(std::string("the gradient of ") + names[i], ref.array("both", std::string("grad_") + names[i]),
                   a[i].grad(), arg_shapes(a, mask), 1e-8, 1e-10);
  });
  auto random_args = [](Random& rng, std::size_t B, std::size_t Tq, std::size_t Tk, std::size_t D, std::size_t Dv,
                        bool requires_grad, double scale) {
    return std::vector<Tensor>{Tensor(rng.array({B, Tq, D}, -scale, scale), requires_grad),
                               Tensor(rng.array({B, Tk, D}, -scale, scale), requires_grad),
                               Tensor(rng.array({B, Tk, Dv}), requires_grad)};
  };
  grader.check("random shapes and masks (Tq != Tk too, rows blocked entirely) vs nn::scaled_dot_product_attention",
               hint::attend, [&] {
                 Random rng(5100);
                 for (int trial = 0; trial < 10; ++trial) {
                   std::size_t B = rng.integer(1, 3), Tq = rng.integer(1, 5),
                               Tk = trial % 2 ? Tq : rng.integer(1, 5);
                   std::vector<Tensor> a = random_args(rng, B, Tq, Tk, rng.integer(1, 6), rng.integer(1, 4), false, 1.0);
                   attn::Mask mask = random_mask(rng, B, Tq, Tk, true);
                   expect_output(a, mask, reference(a[0], a[1], a[2], mask), call(m, a, mask));
                 }
               });
  grader.check("large scores (q, k up to 100) vs nn::scaled_dot_product_attention", hint::large, [&] {
    Random rng(5200);
    std::vector<Tensor> a = random_args(rng, 2, 4, 4, 8, 3, false, 100.0);
    attn::Mask mask = random_mask(rng, 2, 4, 4, false);
    Output got = call(m, a, mask);
    try {
      expect_output(a, mask, reference(a[0], a[1], a[2], mask), got);
    } catch (const Mismatch& e) {
      // Real weights of 0 (or NaN) beside blocked weights of 0: the mask came after the softmax.
      std::string zeroed = blocked_zeroed_after_softmax(array_of(got.second, "weights"), mask);
      if (zeroed.empty()) throw;
      throw Mismatch(e.what() + zeroed, blocked_after_softmax_hint);
    }
  });
  grader.check("real scores near -1e12 (q[..., 0] = 1e6, k[..., 0] = -2e6), blocked keys still at 0", hint::attend,
               [&] {
    // D 4: feature 0 gives every score -1e6 * 2e6 / sqrt(4) = -1e12, features 1 to 3 (multiples of 1/8 in
    // [-1, 1]) spread it by a few units. Every product and sum is exact in doubles, so the scores do not
    // depend on the order of the operations; a fill above -1e12 (-1e4, -1e9) takes every weight.
    Random rng(5400);
    std::size_t B = 2, Tq = 3, Tk = 4, D = 4;
    auto eighths = [&](const Shape& s, double first) {
      Array x = xt::round(rng.array(s) * 8.0) / 8.0;
      for (std::size_t b = 0; b < s[0]; ++b)
        for (std::size_t t = 0; t < s[1]; ++t) x(b, t, 0) = first;
      return x;
    };
    std::vector<Tensor> a = {Tensor(eighths({B, Tq, D}, 1e6)), Tensor(eighths({B, Tk, D}, -2e6)),
                             Tensor(rng.array({B, Tk, 3}))};
    attn::Mask mask = attn::Mask::from_shape({B, Tq, Tk});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t i = 0; i < Tq; ++i)
        for (std::size_t j = 0; j < Tk; ++j) mask(b, i, j) = j >= (b == 0 ? 4u : 2u);  // key lengths 4 and 2
    Output got = call(m, a, mask);
    try {
      expect_output(a, mask, reference(a[0], a[1], a[2], mask), got);
    } catch (const Mismatch& e) {
      // Named only when the mask works at ordinary scores (feature 0 set to 1 and -2: scores near -1).
      Array qo = a[0].data<double>(), ko = a[1].data<double>();
      for (std::size_t b = 0; b < B; ++b) {
        for (std::size_t i = 0; i < Tq; ++i) qo(b, i, 0) = 1.0;
        for (std::size_t j = 0; j < Tk; ++j) ko(b, j, 0) = -2.0;
      }
      std::vector<Tensor> ordinary = {Tensor(qo), Tensor(ko), a[2]};
      std::string outrank = blocked_outrank_real(array_of(got.second, "weights"), mask);
      if (outrank.empty() || !blocked_outrank_real(array_of(call(m, ordinary, mask).second, "weights"), mask).empty())
        throw;
      throw Mismatch(e.what() + outrank, blocked_hint(outrank));
    }
  });
  grader.check("gradcheck, random shapes and masks, q, k and v", hint::attend, [&] {
    Random rng(5300);
    for (int trial = 0; trial < 5; ++trial) {
      std::size_t B = rng.integer(1, 2), Tq = rng.integer(1, 4), Tk = trial % 2 ? Tq : rng.integer(1, 4);
      std::vector<Tensor> a = random_args(rng, B, Tq, Tk, rng.integer(1, 4), rng.integer(1, 3), true, 1.0);
      attn::Mask mask = random_mask(rng, B, Tq, Tk, trial == 0);
      expect_gradients("attention", [&](const std::vector<Tensor>& in) {
        Output o = call(m, in, mask);
        return attn::concat({o.first, o.second}, 2);  // [B, Tq, Dv + Tk]: both outputs at once
      }, a, {"q", "k", "v"});
    }
  });
  return grader.finish();
}

}  // namespace sdpa
}  // namespace lab
