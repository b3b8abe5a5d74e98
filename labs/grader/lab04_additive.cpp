// The checks of lab04_additive.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab04_additive.hpp"

#include "labs/grader/grader.hpp"

namespace lab {
namespace additive {

namespace hint {
inline const char* attend =
    "e[b, j] = v . tanh(W s[b] + U h[b, j]): s W^T [B, A] unsqueezed to [B, 1, A] broadcasts against h U^T "
    "[B, T, A]; mask the scores before the softmax (masked_fill with a large negative number), the softmax over "
    "T (the last axis); context[b] = sum over j of weights[b, j] h[b, j]";
inline const char* large =
    "large scores: a softmax that subtracts each row's max (attn::softmax does) never overflows";
inline const char* padding =
    "a padded position (mask true) gets weight exactly 0, so its encoder state cannot change the context";
}  // namespace hint

inline std::vector<std::string> names() { return {"s", "h", "W", "U", "v"}; }

enum class Variant { right, no_mask, mask_after_softmax, no_tanh, softmax_over_batch };

inline Output reference(const std::vector<Tensor>& a, const attn::Mask& mask, Variant variant = Variant::right) {
  Tensor q = attn::unsqueeze(attn::linear(a[0], a[2]), 1);  // [B, 1, A]
  Tensor k = attn::linear(a[1], a[3]);                      // [B, T, A]
  Tensor pre = q + k;
  Tensor e = attn::matmul(variant == Variant::no_tanh ? pre : attn::tanh(pre), a[4]);  // [B, T]
  Tensor w;
  if (variant == Variant::no_mask) w = attn::softmax(e, -1);
  else if (variant == Variant::mask_after_softmax) w = attn::masked_fill(attn::softmax(e, -1), mask, 0.0);
  else if (variant == Variant::softmax_over_batch) w = attn::nn::masked_softmax(e, mask, 0);
  else w = attn::nn::masked_softmax(e, mask, -1);
  Tensor context = attn::squeeze(attn::matmul(attn::unsqueeze(w, 1), a[1]), 1);  // [B, 1, T] x [B, T, He]
  return {w, context};
}

inline std::string diagnose(const std::vector<Tensor>& a, const attn::Mask& mask, const Output& got) {
  const std::vector<std::pair<Variant, const char*>> mistakes = {
      {Variant::no_mask, "the mask is not applied: padded positions get weight"},
      {Variant::mask_after_softmax,
       "the mask applied after the softmax: the weights no longer sum to 1; mask the scores before it"},
      {Variant::no_tanh, "no tanh between the sum and v"},
      {Variant::softmax_over_batch, "the softmax over the batch axis: it runs over T, the last axis"}};
  attn::no_grad guard;
  for (const auto& [variant, what] : mistakes) {
    try {
      Output o = reference(a, mask, variant);
      expect_close("weights", o.first.data<double>(), got.first, "", 1e-9, 1e-12);
      expect_close("context", o.second.data<double>(), got.second, "", 1e-9, 1e-12);
      return std::string("; your values are what this mistake gives: ") + what;
    } catch (const Mismatch&) {
    }
  }
  return "";
}

inline std::string arg_shapes(const std::vector<Tensor>& a, const attn::Mask& mask) {
  std::vector<std::pair<std::string, Shape>> s;
  for (std::size_t i = 0; i < a.size(); ++i) s.push_back({names()[i], a[i].shape()});
  s.push_back({"mask", Shape(mask.shape().begin(), mask.shape().end())});
  return shapes_str(s);
}

inline void expect_output(const std::vector<Tensor>& a, const attn::Mask& mask, const Output& expected,
                          const Output& got, bool name_the_mistake = false) {
  try {
    expect_close("weights", expected.first.data<double>(), got.first, arg_shapes(a, mask), 1e-9, 1e-12);
    expect_close("context", expected.second.data<double>(), got.second, arg_shapes(a, mask), 1e-9, 1e-12);
  } catch (const Mismatch& m) {
    // Named on the fixed inputs only: on a degenerate random case (one key, saturated
    // scores) two different mistakes can give the same values.
    throw Mismatch(m.what() + (name_the_mistake ? diagnose(a, mask, got) : std::string()));
  }
}

inline attn::Mask random_padding(Random& rng, std::size_t B, std::size_t T) {
  attn::Mask m = attn::Mask::from_shape({B, T});
  for (std::size_t b = 0; b < B; ++b) {
    std::size_t len = rng.integer(1, T);
    for (std::size_t j = 0; j < T; ++j) m(b, j) = j >= len;
  }
  return m;
}

inline std::vector<Tensor> random_args(Random& rng, std::size_t B, std::size_t T, std::size_t Hd, std::size_t He,
                                       std::size_t A, bool requires_grad, double v_scale = 1.0) {
  return {Tensor(rng.array({B, Hd}), requires_grad), Tensor(rng.array({B, T, He}), requires_grad),
          Tensor(rng.array({A, Hd}), requires_grad), Tensor(rng.array({A, He}), requires_grad),
          Tensor(rng.array({A}, -v_scale, v_scale), requires_grad)};
}

inline Output call(const Additive& m, const std::vector<Tensor>& a, const attn::Mask& mask) {
  return m.attend(a[0], a[1], a[2], a[3], a[4], mask);
}

// Whether the learner's values are right on `a` with nothing masked: a softmax that is stable by
// itself, so that 0/0 with the mask comes from the mask applied after it.
inline bool right_unmasked(const Additive& m, const std::vector<Tensor>& a, const attn::Mask& mask) {
  attn::Mask none = xt::zeros<bool>(mask.shape());
  try {
    expect_output(a, none, reference(a, none), call(m, a, none));
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

Result grade(const Additive& m, std::ostream& os) {
  Grader grader(4, "Bahdanau's additive attention", os);
  Reference ref("lab04_additive");
  auto fixed = [&](bool requires_grad) {
    std::vector<Tensor> a;
    for (const auto& n : names()) a.push_back(ref.tensor("fixed", n, requires_grad));
    return a;
  };
  const attn::Mask fixed_mask = xt::cast<bool>(ref.array("fixed", "mask"));

  grader.check("weights and context vs PyTorch (B 2, T 5, lengths 5 and 3)", hint::attend, [&] {
    std::vector<Tensor> a = fixed(false);
    expect_output(a, fixed_mask, {ref.tensor("fixed", "weights"), ref.tensor("fixed", "context")},
                  call(m, a, fixed_mask), true);
  });
  grader.check("gradients vs PyTorch (of sum(weights * rw) + sum(context * rc), every argument)", hint::attend, [&] {
    std::vector<Tensor> a = fixed(true);
    Output o = call(m, a, fixed_mask);
    if (!o.first.requires_grad() || !o.second.requires_grad())
      throw Mismatch("weights or context does not require grad: compute them with attn's ops from the arguments");
    (attn::sum(o.first * ref.tensor("fixed", "rw")) + attn::sum(o.second * ref.tensor("fixed", "rc"))).backward();
    for (std::size_t i = 0; i < a.size(); ++i)
      expect_close("the gradient of " + names()[i], ref.array("fixed", "grad_" + names()[i]), a[i].grad(),
                   arg_shapes(a, fixed_mask), 1e-8, 1e-10);
  });
  grader.check("padded positions get weight 0 and do not change the context", hint::padding, [&] {
    Random rng(4000);
    std::vector<Tensor> a = random_args(rng, 3, 6, 3, 4, 5, false);
    attn::Mask mask = random_padding(rng, 3, 6);
    Output before = call(m, a, mask);
    Array h = a[1].data<double>();
    for (std::size_t b = 0; b < 3; ++b)
      for (std::size_t j = 0; j < 6; ++j)
        if (mask(b, j))
          for (std::size_t d = 0; d < 4; ++d) h(b, j, d) = 1e3;  // garbage where nothing may look
    std::vector<Tensor> changed = a;
    changed[1] = Tensor(h);
    Output after = call(m, changed, mask);
    Array w = array_of(before.first, "weights");
    for (std::size_t b = 0; b < 3; ++b)
      for (std::size_t j = 0; j < 6; ++j)
        if (mask(b, j) && w(b, j) != 0.0)
          throw Mismatch("weights (inputs: " + arg_shapes(a, mask) + "), index [" + std::to_string(b) + ", " +
                         std::to_string(j) + "] is padded: expected 0, received " + num_str(w(b, j)));
    expect_close("context after changing h at padded positions only", array_of(before.second, "context"),
                 after.second, arg_shapes(a, mask), 1e-9, 1e-12);
  });
  grader.check("random shapes and padding (T and lengths from 1) vs attn's ops", hint::attend, [&] {
    Random rng(4100);
    for (int trial = 0; trial < 8; ++trial) {
      std::size_t B = rng.integer(1, 3), T = rng.integer(1, 5);
      std::vector<Tensor> a = random_args(rng, B, T, rng.integer(1, 4), rng.integer(1, 4), rng.integer(1, 4), false);
      attn::Mask mask = random_padding(rng, B, T);
      expect_output(a, mask, reference(a, mask), call(m, a, mask));
    }
  });
  grader.check("large scores (|v| up to 1e4) vs attn's ops", hint::large, [&] {
    Random rng(4200);
    std::vector<Tensor> a = random_args(rng, 2, 5, 3, 3, 4, false, 1e4);
    attn::Mask mask = random_padding(rng, 2, 5);
    Output got = call(m, a, mask);
    try {
      expect_output(a, mask, reference(a, mask), got);
    } catch (const Mismatch& e) {
      // Real weights of 0 (or NaN) beside padded weights of 0: the mask came after the softmax.
      std::string zeroed = blocked_zeroed_after_softmax(array_of(got.first, "weights"), mask);
      if (zeroed.empty() || !right_unmasked(m, a, mask)) throw;
      throw Mismatch(e.what() + zeroed, blocked_after_softmax_hint);
    }
  });
  grader.check("real scores near -8e11 (v of -2e11, tanh saturated near 1), padded positions still at 0",
               hint::attend, [&] {
    // s W^T = 5 on every unit and |h U^T| <= 0.45: tanh within 2e-4 of 1, so e is about -8e11 at every
    // real position; a padded position must still get weight 0, and a fill above -8e11 (-1e4, -1e9)
    // takes every weight.
    Random rng(4400);
    std::size_t B = 2, T = 5, Hd = 3, He = 3, A = 4;
    std::vector<Tensor> a = {Tensor(Array(xt::ones<double>({B, Hd}))), Tensor(rng.array({B, T, He})),
                             Tensor(Array(xt::ones<double>({A, Hd}) * (5.0 / Hd))),
                             Tensor(rng.array({A, He}, -0.15, 0.15)), Tensor(Array(xt::ones<double>({A}) * -2e11))};
    attn::Mask mask = attn::Mask::from_shape({B, T});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t j = 0; j < T; ++j) mask(b, j) = j >= (b == 0 ? 5u : 3u);  // lengths 5 and 3
    Output got = call(m, a, mask);
    try {
      expect_output(a, mask, reference(a, mask), got);
    } catch (const Mismatch& e) {
      // The fill named only when the mask works at ordinary scores (v of -2, scores near -8).
      std::vector<Tensor> ordinary = a;
      ordinary[4] = Tensor(Array(a[4].data<double>() * 1e-11));
      std::string outrank = blocked_outrank_real(array_of(got.first, "weights"), mask);
      if (outrank.empty() || !blocked_outrank_real(array_of(call(m, ordinary, mask).first, "weights"), mask).empty())
        throw;
      if (outrank.find("0/0") != std::string::npos && !right_unmasked(m, a, mask)) throw;
      throw Mismatch(e.what() + outrank, blocked_hint(outrank));
    }
  });
  grader.check("gradcheck, random shapes and padding, every argument", hint::attend, [&] {
    Random rng(4300);
    for (int trial = 0; trial < 4; ++trial) {
      std::size_t B = rng.integer(1, 3), T = rng.integer(1, 4);
      std::vector<Tensor> a = random_args(rng, B, T, rng.integer(1, 3), rng.integer(1, 3), rng.integer(1, 3), true);
      attn::Mask mask = random_padding(rng, B, T);
      expect_gradients("additive attention", [&](const std::vector<Tensor>& in) {
        Output o = call(m, in, mask);
        return attn::concat({o.first, o.second}, 1);  // [B, T + He]: both outputs at once
      }, a, names());
    }
  });
  return grader.finish();
}

}  // namespace additive
}  // namespace lab
