// The checks of lab09_adam.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab09_adam.hpp"

#include "labs/grader/grader.hpp"

#include <cmath>

namespace lab {
namespace adam {

namespace hint {
inline const char* step =
    "m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2; then p -= lr * m_hat / (sqrt(v_hat) + eps) "
    "with the bias corrections m_hat = m / (1 - beta1^t), v_hat = v / (1 - beta2^t), t counted from 1";
inline const char* tiny =
    "eps is added after the square root, sqrt(v_hat) + eps: with gradients near 1e-9 it decides the step size";
inline const char* moments = "m = beta1 m + (1 - beta1) g and v = beta2 v + (1 - beta2) g^2, stored without the bias "
                             "corrections (m_hat and v_hat are only for the step of p)";
}  // namespace hint

// The usual mistakes, each a whole step, to name the one a learner's values match.
// Kingma & Ba's section 2 reordering, lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t) and
// p -= lr_t m / (sqrt(v) + eps): the same step but for eps, which it adds to sqrt(v) before
// the correction, so that it acts as eps sqrt(1 - beta2^t). Learners who read section 2 write it.
enum class Variant { section2, eps_inside_sqrt, no_bias_correction, eps_ignored };

inline void variant_step(Variant variant, Array& p, const Array& g, Array& m, Array& v, long t, double lr, double b1,
                         double b2, double eps) {
  m = b1 * m + (1.0 - b1) * g;
  v = b2 * v + (1.0 - b2) * g * g;
  double tt = static_cast<double>(t);
  double ms = variant == Variant::no_bias_correction ? 1.0 : 1.0 / (1.0 - std::pow(b1, tt));
  double vs = variant == Variant::no_bias_correction ? 1.0 : 1.0 / (1.0 - std::pow(b2, tt));
  if (variant == Variant::section2)
    p -= lr * std::sqrt(1.0 - std::pow(b2, tt)) / (1.0 - std::pow(b1, tt)) * m / (xt::sqrt(v) + eps);
  else if (variant == Variant::eps_inside_sqrt)
    p -= lr * (m * ms) / xt::sqrt(v * vs + eps);
  else if (variant == Variant::eps_ignored)
    p -= lr * (m * ms) / xt::sqrt(v * vs);
  else
    p -= lr * (m * ms) / (xt::sqrt(v * vs) + eps);
}

struct Mistake {
  Variant variant;
  const char* what;
  const char* hint;
};

inline const std::vector<Mistake>& mistakes() {
  static const std::vector<Mistake> list = {
      {Variant::section2, "Kingma & Ba's section 2 form",
       "lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t) and p -= lr_t m / (sqrt(v) + eps) add eps to sqrt(v) before "
       "the bias correction (it acts as eps sqrt(1 - beta2^t)); add it after the root of the corrected v_hat, "
       "sqrt(v_hat) + eps, as Algorithm 1 and torch.optim.Adam do"},
      {Variant::eps_inside_sqrt, "eps inside the square root, sqrt(v_hat + eps)", hint::tiny},
      {Variant::no_bias_correction, "no bias correction",
       "divide m by (1 - beta1^t) and v by (1 - beta2^t) before the step of p: the bias corrections, which undo "
       "the moments' start at 0"},
      {Variant::eps_ignored, "eps left out: m_hat / sqrt(v_hat)",
       "add eps after the square root, p -= lr * m_hat / (sqrt(v_hat) + eps): it changes the step by a part in "
       "1e7 at ordinary gradients and sets its size for gradients near eps (without it every step is about lr)"}};
  return list;
}

Result grade(const Adam& m, std::ostream& os) {
  Grader grader(9, "one step of Adam", os);
  Reference ref("lab09_adam");
  // `states`: compare m and v after the steps (and not p, which the checks before cover).
  // Each usual mistake runs alongside, to name the one the learner's values match.
  auto run = [&](const std::string& c, int steps, bool states) {
    Array p = ref.array(c, "p0");
    Array mm = xt::zeros<double>(p.shape()), v = xt::zeros<double>(p.shape());
    std::vector<Array> vp(mistakes().size(), p), vm(mistakes().size(), mm), vv(mistakes().size(), v);
    for (int t = 1; t <= steps; ++t) {
      Array g = ref.array(c, "g" + std::to_string(t));
      m.step(p, g, mm, v, t, 0.01, 0.9, 0.999, 1e-8);
      for (std::size_t i = 0; i < mistakes().size(); ++i)
        variant_step(mistakes()[i].variant, vp[i], g, vm[i], vv[i], t, 0.01, 0.9, 0.999, 1e-8);
      if (states) continue;
      try {
        expect_close("p after step " + std::to_string(t), ref.array(c, "p" + std::to_string(t)), p,
                     "p [3, 4], lr 0.01, betas (0.9, 0.999), eps 1e-8", 1e-9, 1e-12);
      } catch (const Mismatch& e) {
        for (std::size_t i = 0; i < mistakes().size(); ++i) {
          try {
            expect_close("p", vp[i], p, "", 1e-12, 1e-16);
          } catch (const Mismatch&) {
            continue;
          }
          throw Mismatch(e.what() + std::string("; your values are what this mistake gives: ") + mistakes()[i].what,
                         mistakes()[i].hint);
        }
        throw;
      }
    }
    if (states) {
      expect_close("m after step 3", ref.array(c, "exp_avg"), mm, "p [3, 4]", 1e-9, 1e-15);
      expect_close("v after step 3", ref.array(c, "exp_avg_sq"), v, "p [3, 4]", 1e-9, 1e-20);
    }
  };
  grader.check("step 1 vs torch.optim.Adam", hint::step, [&] { run("steps", 1, false); });
  grader.check("steps 1 to 3 vs torch.optim.Adam (the bias corrections change with t)", hint::step,
               [&] { run("steps", 3, false); });
  grader.check("m and v after step 3 vs torch.optim.Adam's exp_avg and exp_avg_sq", hint::moments,
               [&] { run("steps", 3, true); });
  grader.check("tiny gradients (about 1e-9) vs torch.optim.Adam", hint::step, [&] {
    try {
      run("tiny", 3, false);
    } catch (const Mismatch& e) {
      if (!e.hint.empty()) throw;
      // The eps hint only when the same steps are right at ordinary gradients.
      bool right = true;
      try {
        run("steps", 3, false);
      } catch (const Mismatch&) {
        right = false;
      }
      throw at_extreme(e, true, right, hint::tiny, hint::step, false);
    }
  });
  grader.check("random shapes and hyperparameters, 5 steps, vs nn::Adam", hint::step, [&] {
    Random rng(9000);
    for (int trial = 0; trial < 6; ++trial) {
      Shape shape = rng.shape(1, 3);
      double lr = rng.uniform(1e-3, 0.1), b1 = rng.uniform(0.5, 0.95), b2 = rng.uniform(0.9, 0.9999), eps = 1e-8;
      Tensor param(rng.array(shape), true);
      attn::nn::Adam opt({param}, lr, {b1, b2}, eps);
      Array p = param.data<double>(), mm = xt::zeros<double>(shape), v = xt::zeros<double>(shape);
      for (int t = 1; t <= 5; ++t) {
        Array g = rng.array(shape);
        opt.zero_grad();
        attn::sum(param * Tensor(g)).backward();  // param.grad() = g
        opt.step();
        m.step(p, g, mm, v, t, lr, b1, b2, eps);
        expect_close("p after step " + std::to_string(t), param.data<double>(), p,
                     "p " + shape_str(shape) + ", lr " + num_str(lr) + ", betas (" + num_str(b1) + ", " + num_str(b2) + ")",
                     1e-9, 1e-12);
      }
    }
  });
  return grader.finish();
}

}  // namespace adam
}  // namespace lab
