// The checks of lab08_cross_entropy.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab08_cross_entropy.hpp"

#include "labs/grader/grader.hpp"

namespace lab {
namespace cross_entropy {

namespace hint {
inline const char* plain = "the loss is -log p[target] with log p = log_softmax(logits) over the classes, averaged";
inline const char* padding =
    "an ignored target (padding) counts for nothing: leave it out of the sum and divide by the number of targets "
    "that are not ignored, not by N";
inline const char* smoothing =
    "the smoothed target puts s / C on every class, the target's included, and 1 - s more on the target: "
    "(1 - s) * (-log p[t]) + (s / C) * sum over c of -log p[c]";
inline const char* ignore_index =
    "compare each target with the ignore_index argument, not a constant (-100 is only PyTorch's default, and a "
    "negative id only one choice of it): here the ignored targets are 7";
inline const char* large =
    "log(softmax(x)) is log(0) = -inf for a far-off class (and log(softmax(x) + tiny) is finite but wrong): use "
    "log_softmax, (x - max) - log(sum(exp(x - max)))";
}  // namespace hint

inline attn::Index ids(const Array& a) { return xt::cast<std::int64_t>(a); }

Result grade(const CrossEntropy& m, std::ostream& os) {
  Grader grader(8, "cross-entropy with padding and label smoothing", os);
  Reference ref("lab08_cross_entropy");
  auto fixed_value = [&](const std::string& c) {
    Tensor logits = ref.tensor(c, "logits");
    double s = ref.scalar(c, "label_smoothing");
    attn::no_grad guard;
    expect_close("the loss", ref.array(c, "loss"), m.loss(logits, ids(ref.array(c, "targets")), -100, s),
                 "logits [6, 4], targets [6], label_smoothing " + num_str(s), 1e-9, 1e-12);
  };
  grader.check("vs PyTorch, no padding", hint::plain, [&] { fixed_value("plain"); });
  grader.check("vs PyTorch, two targets ignored (ignore_index -100)", hint::padding, [&] { fixed_value("padding"); });
  grader.check("vs PyTorch, padding and label smoothing 0.1", hint::smoothing, [&] { fixed_value("smoothing"); });
  grader.check("gradient of the logits vs PyTorch, padding and label smoothing 0.1", hint::smoothing, [&] {
    Tensor logits = ref.tensor("smoothing", "logits", true);
    Tensor loss = m.loss(logits, ids(ref.array("smoothing", "targets")), -100, 0.1);
    if (!loss.requires_grad()) throw Mismatch("the loss does not require grad: compute it with attn's ops from the logits");
    loss.backward();
    expect_close("the gradient of logits", ref.array("smoothing", "grad_logits"), logits.grad(), "logits [6, 4]", 1e-8,
                 1e-10);
  });
  auto random_case = [](Random& rng, std::size_t N, std::size_t C, long ignore, double scale) {
    attn::Index t = attn::Index::from_shape({N});
    for (std::size_t i = 0; i < N; ++i) t(i) = i > 0 && rng.integer(0, 3) == 0 ? ignore : static_cast<long>(rng.integer(0, C - 1));
    return std::make_pair(Tensor(rng.array({N, C}, -scale, scale), true), t);
  };
  grader.check("large logits (|x| up to 1e3) vs nn::cross_entropy", hint::smoothing, [&] {
    Random rng(8000);
    auto [logits, t] = random_case(rng, 5, 4, -100, 1e3);
    attn::no_grad guard;
    Array got = array_of(m.loss(logits, t, -100, 0.1), "the loss");
    try {
      expect_close("the loss", attn::nn::cross_entropy(logits, t, -100, 0.1).data<double>(), got,
                   "logits [5, 4], label_smoothing 0.1", 1e-9, 1e-12);
    } catch (const Mismatch& e) {
      // Named by what the values show: log(0) only when the loss is not finite here and right
      // for the same targets at ordinary logits (|x| up to 1).
      Tensor ordinary(Array(logits.data<double>() * 1e-3));
      bool right = true;
      try {
        expect_close("the loss", attn::nn::cross_entropy(ordinary, t, -100, 0.1).data<double>(),
                     m.loss(ordinary, t, -100, 0.1), "", 1e-9, 1e-12);
      } catch (const Mismatch&) {
        right = false;
      }
      throw at_extreme(e, all_finite(got), right, hint::large, hint::smoothing, /*needs_non_finite=*/false);
    }
  });
  grader.check("random N, C, padding (another ignore_index) and smoothing vs nn::cross_entropy", hint::smoothing, [&] {
    Random rng(8100);
    for (int trial = 0; trial < 10; ++trial) {
      std::size_t N = rng.integer(1, 6), C = rng.integer(2, 6);
      double s = trial % 2 ? rng.uniform(0.0, 0.5) : 0.0;
      auto [logits, t] = random_case(rng, N, C, 7, 3.0);
      attn::no_grad guard;
      Array expected = attn::nn::cross_entropy(logits, t, 7, s).data<double>();
      std::string inputs = "logits " + shape_str(logits.shape()) + ", ignore_index 7, label_smoothing " + num_str(s);
      try {
        expect_close("the loss", expected, m.loss(logits, t, 7, s), inputs, 1e-9, 1e-12);
      } catch (const std::exception& e) {
        // Named by what the values show: right once the ignored targets read -100 and ignore_index is -100.
        attn::Index t100 = t;
        for (auto& id : t100)
          if (id == 7) id = -100;
        bool right = true;
        try {
          expect_close("the loss", expected, m.loss(logits, t100, -100, s), inputs, 1e-9, 1e-12);
        } catch (...) {
          right = false;
        }
        if (!right) throw;  // the first failure, unexplained
        throw Mismatch(std::string(dynamic_cast<const Mismatch*>(&e) ? "" : "raised an error: ") + e.what() +
                           "; with the ignored targets -100 and ignore_index -100 the loss is right",
                       hint::ignore_index);
      }
    }
  });
  grader.check("gradcheck, random N, C, padding and smoothing", hint::smoothing, [&] {
    Random rng(8200);
    for (int trial = 0; trial < 5; ++trial) {
      auto [logits, t] = random_case(rng, rng.integer(1, 5), rng.integer(2, 5), -100, 2.0);
      double s = rng.uniform(0.0, 0.3);
      expect_gradients("cross_entropy", [&](const std::vector<Tensor>& in) { return m.loss(in[0], t, -100, s); },
                       {logits}, {"logits"});
    }
  });
  return grader.finish();
}

}  // namespace cross_entropy
}  // namespace lab
