// The checks of lab12_luong.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab12_luong.hpp"

#include "labs/grader/grader.hpp"

namespace lab {
namespace luong {

namespace hint {
inline const char* step =
    "input feeding: the LSTM cell reads [y; h_tilde_prev] (concat on the last axis) and returns (h_t, m_t), m_t the "
    "cell state (code c, not the context c_t); score the NEW h_t: "
    "e[b, s] = h_t . (W_a hs[b, s]); padded positions blocked before the softmax over S; context = weights hs; "
    "h_tilde = tanh(W_c [c_t; h_t]), the context c_t first";
inline const char* padding = "a padded encoder position (mask true) gets weight 0 and cannot change the step";
inline const char* large =
    "exp of a score above about 709 overflows to inf (and inf / inf is NaN): subtract each row's max score before "
    "exp, as attn::softmax does";
}  // namespace hint

enum class Variant {
  right,
  no_input_feeding,
  score_transposed,
  concat_h_first,
  score_previous_h,
  mask_ignored,
  mask_after_softmax,
  cell_input_swapped,
  feed_previous_h
};

inline Step reference(const Tensor& y, const Tensor& ht, const Tensor& h, const Tensor& c, const Tensor& hs,
                      const attn::Mask& mask, const Params& p, Variant v = Variant::right) {
  Tensor feed = v == Variant::no_input_feeding ? attn::zeros_like(ht) : v == Variant::feed_previous_h ? h : ht;
  Tensor input = v == Variant::cell_input_swapped ? attn::concat({feed, y}, 1) : attn::concat({y, feed}, 1);
  Tensor gates = attn::linear(input, p.w_ih, p.b_ih) + attn::linear(h, p.w_hh, p.b_hh);
  Tensor c1 = attn::lstm_cell_c(gates, c), h1 = attn::lstm_cell_h(gates, c1);
  Tensor query = v == Variant::score_previous_h ? h : h1;
  Tensor keys = v == Variant::score_transposed ? attn::matmul(hs, p.W_a) : attn::linear(hs, p.W_a);  // [B, S, H]
  Tensor e = attn::squeeze(attn::matmul(keys, attn::unsqueeze(query, 2)), 2);                      // [B, S]
  Tensor w = v == Variant::mask_ignored         ? attn::softmax(e, -1)
             : v == Variant::mask_after_softmax ? attn::masked_fill(attn::softmax(e, -1), mask, 0.0)
                                                : attn::nn::masked_softmax(e, mask, -1);
  Tensor context = attn::squeeze(attn::matmul(attn::unsqueeze(w, 1), hs), 1);  // [B, H]
  Tensor both = v == Variant::concat_h_first ? attn::concat({h1, context}, 1) : attn::concat({context, h1}, 1);
  return {attn::tanh(attn::linear(both, p.W_c)), h1, c1, w};
}

inline std::vector<std::pair<std::string, Tensor>> outputs(const Step& s) {
  return {{"h_tilde", s.h_tilde}, {"h", s.h}, {"c (the cell state m_t)", s.c}, {"weights", s.weights}};
}

inline void expect_step(const Step& expected, const Step& got, const std::string& inputs) {
  auto e = outputs(expected), g = outputs(got);
  // the state first: a wrong cell explains everything after it
  for (std::size_t i : {2, 1, 3, 0}) expect_close(e[i].first, e[i].second.data<double>(), g[i].second, inputs, 1e-9, 1e-12);
}

inline std::string diagnose(const std::vector<Tensor>& a, const attn::Mask& mask, const Params& p, const Step& got) {
  const std::vector<std::pair<Variant, const char*>> mistakes = {
      {Variant::no_input_feeding, "no input feeding: the cell must read [y; h_tilde_prev]"},
      {Variant::score_transposed, "the score with W_a transposed: e = h_t . (W_a hs), attn::linear(hs, W_a)"},
      {Variant::concat_h_first, "[h_t; c_t]: the context c_t comes first, W_c [c_t; h_t]"},
      {Variant::score_previous_h, "the previous h scored: Luong scores the new h_t, after the cell"},
      {Variant::mask_ignored, "the mask ignored: block padded positions (mask true) before the softmax"},
      {Variant::mask_after_softmax,
       "the mask applied after the softmax: zeroing padded weights leaves rows that do not sum to 1; block them "
       "before it"},
      {Variant::cell_input_swapped, "the cell read [h_tilde; y]: input feeding appends h_tilde, [y; h_tilde]"},
      {Variant::feed_previous_h, "h fed instead of h_tilde: input feeding feeds the attentional vector h_tilde"}};
  attn::no_grad guard;
  for (const auto& [variant, what] : mistakes) {
    try {
      expect_step(reference(a[0], a[1], a[2], a[3], a[4], mask, p, variant), got, "");
      return std::string("; your values are what this mistake gives: ") + what;
    } catch (const Mismatch&) {
    }
  }
  return "";
}

inline const std::vector<std::string>& input_names() {
  static const std::vector<std::string> n = {"y", "h_tilde", "h", "c", "hs"};
  return n;
}
// "c" is the cell state m_t; the reference file's keys use the code names above
inline std::string display(const std::string& n) { return n == "c" ? "c (the cell state m_t)" : n; }
inline const std::vector<std::string>& param_names() {
  static const std::vector<std::string> n = {"w_ih", "w_hh", "b_ih", "b_hh", "W_a", "W_c"};
  return n;
}
inline std::vector<Tensor*> fields(Params& p) { return {&p.w_ih, &p.w_hh, &p.b_ih, &p.b_hh, &p.W_a, &p.W_c}; }

Result grade(const Luong& m, std::ostream& os) {
  Grader grader(12, "a Luong decoder step: general score, input feeding", os);
  Reference ref("lab12_luong");
  auto load = [&](bool requires_grad, std::vector<Tensor>& in, Params& p) {
    in.clear();
    for (const auto& n : input_names()) in.push_back(ref.tensor("fixed", n, requires_grad));
    auto f = fields(p);
    for (std::size_t i = 0; i < f.size(); ++i) *f[i] = ref.tensor("fixed", param_names()[i], requires_grad);
  };
  const attn::Mask mask = xt::cast<bool>(ref.array("fixed", "mask"));
  // every argument's shape and the rows' lengths, for the failure messages
  const Shape mask_shape(mask.shape().begin(), mask.shape().end());
  std::string shapes;
  {
    std::vector<Tensor> a;
    Params p;
    load(false, a, p);
    std::vector<std::pair<std::string, Shape>> named;
    for (std::size_t i = 0; i < a.size(); ++i) named.push_back({input_names()[i], a[i].shape()});
    named.push_back({"mask", mask_shape});
    shapes = shapes_str(named) + ", lengths";
    for (std::size_t b = 0; b < mask_shape[0]; ++b) {
      std::size_t len = 0;
      for (std::size_t s = 0; s < mask_shape[1]; ++s) len += !mask(b, s);
      shapes += (b ? " and " : " ") + std::to_string(len);
    }
  }
  auto call = [&](const std::vector<Tensor>& a, const attn::Mask& mk, const Params& p) {
    return m.step(a[0], a[1], a[2], a[3], a[4], mk, p);
  };
  grader.check("one step vs PyTorch (h_tilde, h, c, weights)", hint::step, [&] {
    std::vector<Tensor> a;
    Params p;
    load(false, a, p);
    Step got = call(a, mask, p);
    Step expected{ref.tensor("fixed", "h_tilde1"), ref.tensor("fixed", "h1"), ref.tensor("fixed", "c1"),
                  ref.tensor("fixed", "weights1")};
    try {
      expect_step(expected, got, shapes);
    } catch (const Mismatch& e) {
      throw Mismatch(e.what() + diagnose(a, mask, p, got));
    }
  });
  grader.check("gradients of every input and parameter vs PyTorch", hint::step, [&] {
    std::vector<Tensor> a;
    Params p;
    load(true, a, p);
    Step s = call(a, mask, p);
    Tensor loss = attn::sum(s.h_tilde * ref.tensor("fixed", "r_h_tilde")) + attn::sum(s.h * ref.tensor("fixed", "r_h")) +
                  attn::sum(s.c * ref.tensor("fixed", "r_c")) + attn::sum(s.weights * ref.tensor("fixed", "r_weights"));
    if (!loss.requires_grad()) throw Mismatch("the outputs do not require grad: compute them with attn's ops");
    loss.backward();
    // an input the outputs do not reach through attn's ops (detached, or unused) has no gradient at all
    auto expect_grad = [&](const std::string& name, const Tensor& grad) {
      if (!grad.defined())
        throw Mismatch("no gradient reached " + display(name) + " (inputs: " + shapes +
                       "): is it detached, or not used through attn's ops?");
      expect_close("the gradient of " + display(name), ref.array("fixed", "grad_" + name), grad, shapes, 1e-7, 1e-9);
    };
    for (std::size_t i = 0; i < a.size(); ++i) expect_grad(input_names()[i], a[i].grad());
    auto f = fields(p);
    for (std::size_t i = 0; i < f.size(); ++i) expect_grad(param_names()[i], f[i]->grad());
  });
  grader.check("two steps vs PyTorch, the second fed the first's h_tilde", hint::step, [&] {
    std::vector<Tensor> a;
    Params p;
    load(false, a, p);
    attn::no_grad guard;
    Step s1 = call(a, mask, p);
    Step s2 = m.step(ref.tensor("fixed", "y2"), s1.h_tilde, s1.h, s1.c, a[4], mask, p);
    expect_step({ref.tensor("fixed", "h_tilde2"), ref.tensor("fixed", "h2"), ref.tensor("fixed", "c2"),
                 ref.tensor("fixed", "weights2")},
                s2, shapes + ", step 2");
  });
  grader.check("padded positions get weight 0 and do not change the step", hint::padding, [&] {
    std::vector<Tensor> a;
    Params p;
    load(false, a, p);
    attn::no_grad guard;
    Step before = call(a, mask, p);
    Array hs = a[4].data<double>();
    for (std::size_t b = 0; b < mask.shape()[0]; ++b)
      for (std::size_t s = 0; s < mask.shape()[1]; ++s)
        if (mask(b, s))
          for (std::size_t d = 0; d < hs.shape()[2]; ++d) hs(b, s, d) = 1e3;
    std::vector<Tensor> changed = a;
    changed[4] = Tensor(hs);
    Step after = call(changed, mask, p);
    Array w = array_of(before.weights, "weights");
    for (std::size_t k = 0; k < w.size(); ++k)
      if (mask.flat(k) && w.flat(k) != 0.0)
        throw Mismatch("weights (" + shapes + "), index " + shape_str(unravel(k, mask_shape)) + " is padded: expected 0, received " +
                       num_str(w.flat(k)));
    expect_close("h_tilde after changing hs at padded positions only", array_of(before.h_tilde, "h_tilde"), after.h_tilde,
                 shapes, 1e-9, 1e-12);
  });
  grader.check("large scores (hs x 1e4 at real positions): near one-hot weights, no NaN", hint::step, [&] {
    std::vector<Tensor> a;
    Params p;
    load(false, a, p);
    attn::no_grad guard;
    std::vector<Tensor> ordinary = a;  // the fixed inputs, scores of a few units
    Array hs = a[4].data<double>();
    for (std::size_t b = 0; b < mask.shape()[0]; ++b)
      for (std::size_t s = 0; s < mask.shape()[1]; ++s)
        if (!mask(b, s))
          for (std::size_t d = 0; d < hs.shape()[2]; ++d) hs(b, s, d) *= 1e4;
    a[4] = Tensor(hs);
    Step expected = reference(a[0], a[1], a[2], a[3], a[4], mask, p);
    Step got = call(a, mask, p);
    Array w = array_of(got.weights, "weights"), ht = array_of(got.h_tilde, "h_tilde");
    try {
      for (std::size_t k = 0; k < w.size(); ++k)
        if (!std::isfinite(w.flat(k)))
          throw Mismatch("weights (" + shapes + ", hs x 1e4), index " + shape_str(unravel(k, mask_shape)) +
                         ": received " + num_str(w.flat(k)));
      expect_close("weights", expected.weights.data<double>(), w, shapes + ", hs x 1e4", 1e-9, 1e-12);
      expect_close("h_tilde", expected.h_tilde.data<double>(), ht, shapes + ", hs x 1e4", 1e-9, 1e-12);
    } catch (const Mismatch& e) {
      bool right = true;
      try {
        expect_step(reference(ordinary[0], ordinary[1], ordinary[2], ordinary[3], ordinary[4], mask, p),
                    call(ordinary, mask, p), "");
      } catch (const Mismatch&) {
        right = false;
      }
      std::string zeroed = blocked_zeroed_after_softmax(w, mask);  // the mask came after the softmax
      if (right && !zeroed.empty()) throw Mismatch(e.what() + zeroed, blocked_after_softmax_hint);
      throw at_extreme(e, all_finite(w) && all_finite(ht), right, hint::large, hint::step);
    }
  });
  grader.check("real scores near -1e12 (hs rescaled to scores of -1e12), padded positions still at 0", hint::step,
               [&] {
    // The scores are linear in hs and the new state h_t does not read hs, so scaling hs[b, s]
    // sets score e[b, s] to any value: -1e12 - 1e3 s at every real position (steps of 1e3: the
    // weights do not hang on the last digits of the scores); a fill above it (-1e4, -1e9) takes every weight.
    std::vector<Tensor> a;
    Params p;
    load(false, a, p);
    attn::no_grad guard;
    Step first = reference(a[0], a[1], a[2], a[3], a[4], mask, p);
    Array keys = attn::linear(a[4], p.W_a).data<double>(), h1 = first.h.data<double>(), hs = a[4].data<double>();
    for (std::size_t b = 0; b < mask_shape[0]; ++b)
      for (std::size_t s = 0; s < mask_shape[1]; ++s) {
        if (mask(b, s)) continue;
        double score = 0.0;
        for (std::size_t d = 0; d < hs.shape()[2]; ++d) score += keys(b, s, d) * h1(b, d);
        double target = -1e12 - 1e3 * static_cast<double>(s);
        for (std::size_t d = 0; d < hs.shape()[2]; ++d) hs(b, s, d) *= target / score;
      }
    std::vector<Tensor> ordinary = a;  // the fixed inputs, scores of a few units
    a[4] = Tensor(hs);
    Step expected = reference(a[0], a[1], a[2], a[3], a[4], mask, p);
    Step got = call(a, mask, p);
    try {
      expect_step(expected, got, shapes + ", real scores near -1e12");
    } catch (const Mismatch& err) {
      // The fill named only when the mask works at the fixed inputs' ordinary scores.
      std::string outrank = blocked_outrank_real(array_of(got.weights, "weights"), mask);
      if (outrank.empty() || !blocked_outrank_real(array_of(call(ordinary, mask, p).weights, "weights"), mask).empty())
        throw;
      throw Mismatch(err.what() + outrank, blocked_hint(outrank));
    }
  });
  grader.check("gradcheck, random small sizes, every input and parameter", hint::step, [&] {
    Random rng(12000);
    for (int trial = 0; trial < 2; ++trial) {
      std::size_t B = rng.integer(1, 2), S = rng.integer(1, 3), E = rng.integer(1, 2), H = rng.integer(1, 2);
      std::vector<Shape> shapes_in = {{B, E}, {B, H}, {B, H}, {B, H}, {B, S, H}};
      std::vector<Shape> shapes_p = {{4 * H, E + H}, {4 * H, H}, {4 * H}, {4 * H}, {H, H}, {H, 2 * H}};
      std::vector<Tensor> all;
      for (const auto& s : shapes_in) all.push_back(Tensor(rng.array(s), true));
      for (const auto& s : shapes_p) all.push_back(Tensor(rng.array(s), true));
      attn::Mask mk = attn::Mask::from_shape({B, S});
      for (std::size_t b = 0; b < B; ++b) {
        std::size_t len = rng.integer(1, S);
        for (std::size_t s = 0; s < S; ++s) mk(b, s) = s >= len;
      }
      std::vector<std::string> n = input_names();
      n.insert(n.end(), param_names().begin(), param_names().end());
      expect_gradients("luong step", [&](const std::vector<Tensor>& in) {
        Params p{in[5], in[6], in[7], in[8], in[9], in[10]};
        Step s = m.step(in[0], in[1], in[2], in[3], in[4], mk, p);
        return attn::concat({s.h_tilde, s.h, s.c, s.weights}, 1);  // every output at once
      }, all, n);
    }
  });
  return grader.finish();
}

}  // namespace luong
}  // namespace lab
