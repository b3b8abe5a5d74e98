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

// Kingma & Ba's section 2 reordering, lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t) and
// p -= lr_t m / (sqrt(v) + eps): the same step but for eps, which it adds to sqrt(v) before
// the correction, so that it acts as eps sqrt(1 - beta2^t). Learners who read section 2 write it.
inline void section2_step(Array& p, const Array& g, Array& m, Array& v, long t, double lr, double b1, double b2,
                          double eps) {
  m = b1 * m + (1.0 - b1) * g;
  v = b2 * v + (1.0 - b2) * g * g;
  double lr_t = lr * std::sqrt(1.0 - std::pow(b2, static_cast<double>(t))) / (1.0 - std::pow(b1, static_cast<double>(t)));
  p -= lr_t * m / (xt::sqrt(v) + eps);
}

inline const char* section2 =
    "; your values are what Kingma & Ba's section 2 form gives, lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t) and "
    "p -= lr_t m / (sqrt(v) + eps): there eps is added to sqrt(v) before the bias correction (it acts as "
    "eps sqrt(1 - beta2^t)); add it after the root of the corrected v_hat, sqrt(v_hat) + eps, as Algorithm 1 and "
    "torch.optim.Adam do";

Result grade(const Adam& m, std::ostream& os) {
  Grader grader(9, "one step of Adam", os);
  Reference ref("lab09_adam");
  // `states`: compare m and v after the steps (and not p, which the checks before cover).
  auto run = [&](const std::string& c, int steps, bool states) {
    Array p = ref.array(c, "p0");
    Array mm = xt::zeros<double>(p.shape()), v = xt::zeros<double>(p.shape());
    Array p2 = p, m2 = mm, v2 = v;  // the section 2 form alongside, to name it when the learner wrote it
    for (int t = 1; t <= steps; ++t) {
      Array g = ref.array(c, "g" + std::to_string(t));
      m.step(p, g, mm, v, t, 0.01, 0.9, 0.999, 1e-8);
      section2_step(p2, g, m2, v2, t, 0.01, 0.9, 0.999, 1e-8);
      if (states) continue;
      try {
        expect_close("p after step " + std::to_string(t), ref.array(c, "p" + std::to_string(t)), p,
                     "p [3, 4], lr 0.01, betas (0.9, 0.999), eps 1e-8", 1e-9, 1e-12);
      } catch (const Mismatch& e) {
        bool is_section2 = true;
        try {
          expect_close("p", p2, p, "", 1e-13, 1e-16);
        } catch (const Mismatch&) {
          is_section2 = false;
        }
        if (is_section2) throw Mismatch(e.what() + std::string(section2));
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
  grader.check("tiny gradients (about 1e-9) vs torch.optim.Adam", hint::tiny, [&] { run("tiny", 3, false); });
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
