// Optimizers, clip_grad_norm_ and learning-rate schedules: every update equal
// to PyTorch 1.13's over 5 steps (tools/reference/nn_optim.py, within 1e-12),
// hand-computed steps, skipped parameters, bad settings.
#include "../helpers.hpp"
#include "../reference.hpp"

#include <cmath>
#include <functional>
#include <memory>

using attn::Tensor;
namespace nn = attn::nn;

namespace {

using MakeOptimizer = std::function<std::unique_ptr<nn::Optimizer>(std::vector<Tensor>)>;

// Gives p the gradient g, as backward would.
void set_grad(Tensor& p, const Tensor& g) {
  p.zero_grad();
  attn::sum(p * g).backward();
}

}  // namespace

TEST_CASE("optimizers with clip_grad_norm_ equal torch.optim over 5 steps") {
  test::Reference ref("nn_optim");
  const std::vector<std::pair<std::string, MakeOptimizer>> optimizers = {
      {"sgd", [](auto p) { return std::make_unique<nn::SGD>(p, 0.1); }},
      {"sgd_momentum", [](auto p) { return std::make_unique<nn::SGD>(p, 0.1, 0.9, 0.1, 0.01); }},
      {"sgd_nesterov", [](auto p) { return std::make_unique<nn::SGD>(p, 0.05, 0.8, 0.0, 0.02, true); }},
      {"adam", [](auto p) { return std::make_unique<nn::Adam>(p, 0.01, std::make_pair(0.8, 0.95), 1e-6, 0.1); }},
      {"adam_default", [](auto p) { return std::make_unique<nn::Adam>(p); }},
      {"adamw", [](auto p) { return std::make_unique<nn::AdamW>(p, 0.02, std::make_pair(0.85, 0.99), 1e-7, 0.05); }},
      {"adamw_default", [](auto p) { return std::make_unique<nn::AdamW>(p); }},
  };
  for (const auto& [name, make] : optimizers) {
    Tensor w = ref.tensor("init", "w", true), b = ref.tensor("init", "b", true);
    auto opt = make({w, b});
    for (int k = 0; k < 5; ++k) {
      INFO(name << " step " << k);
      const std::string grads = "grads_" + std::to_string(k), after = name + "_" + std::to_string(k);
      opt->zero_grad();
      set_grad(w, ref.tensor(grads, "w"));
      if (ref.has(grads, "b")) set_grad(b, ref.tensor(grads, "b"));  // step 2: b has no gradient
      const double total = nn::clip_grad_norm_(opt->params(), 1.0);
      CHECK(total == doctest::Approx(ref.array(after, "total_norm")()).epsilon(1e-13));
      opt->step();
      CHECK(test::allclose(w, ref.tensor(after, "w"), 1e-12));
      CHECK(test::allclose(b, ref.tensor(after, "b"), 1e-12));
    }
  }
}

TEST_CASE("SGD and Adam: one step by hand") {
  Tensor p = attn::tensor({1.0, -2.0}, true);
  nn::SGD sgd({p}, 0.5, 0.9);
  set_grad(p, attn::tensor({0.2, 0.4}));
  sgd.step();  // the first momentum buffer is the gradient itself
  CHECK(test::allclose(p, attn::tensor({0.9, -2.2}), 1e-15));
  sgd.step();  // buffer 0.9 * g + g = 1.9 g
  CHECK(test::allclose(p, attn::tensor({0.9 - 0.5 * 0.38, -2.2 - 0.5 * 0.76}), 1e-15));

  Tensor q = attn::tensor({1.0, -2.0}, true);
  nn::Adam adam({q}, 0.1);
  set_grad(q, attn::tensor({0.2, -4.0}));
  adam.step();  // first step: m_hat = g, v_hat = g^2, so p -= lr * g / (|g| + eps)
  CHECK(q.to_array()(0) == doctest::Approx(0.9).epsilon(1e-7));
  CHECK(q.to_array()(1) == doctest::Approx(-1.9).epsilon(1e-7));
}

TEST_CASE("optimizers skip parameters without gradients and work in float32") {
  Tensor used = attn::ones({2}, attn::Dtype::Float32, true), unused = attn::ones({2}, attn::Dtype::Float32, true);
  nn::AdamW opt({used, unused}, 0.1);
  attn::sum(used * used).backward();
  opt.step();
  CHECK(used.dtype() == attn::Dtype::Float32);
  CHECK(used.to_array()(0) == doctest::Approx(1.0 * (1 - 0.1 * 0.01) - 0.1).epsilon(1e-6));
  CHECK(unused.to_array()(0) == 1.0);  // not even weight decay: it has no gradient
  opt.zero_grad();
  CHECK_FALSE(used.grad().defined());
  CHECK(used.is_leaf());
}

TEST_CASE("clip_grad_norm_: the joint norm, scaled only when above max_norm") {
  Tensor a = attn::zeros({2}, attn::Dtype::Float64, true), b = attn::zeros({1}, attn::Dtype::Float64, true);
  set_grad(a, attn::tensor({3.0, 0.0}));
  set_grad(b, attn::tensor({4.0}));
  CHECK(nn::clip_grad_norm_({a, b}, 10.0) == doctest::Approx(5.0));
  CHECK(a.grad().to_array()(0) == 3.0);  // under max_norm: untouched
  CHECK(nn::clip_grad_norm_({a, b}, 1.0) == doctest::Approx(5.0));
  CHECK(a.grad().to_array()(0) == doctest::Approx(3.0 / (5.0 + 1e-6)).epsilon(1e-14));
  CHECK(b.grad().to_array()(0) == doctest::Approx(4.0 / (5.0 + 1e-6)).epsilon(1e-14));
  Tensor none = attn::zeros({2}, attn::Dtype::Float64, true);
  CHECK(nn::clip_grad_norm_({none}, 1.0) == 0.0);
}

TEST_CASE("optimizers reject bad settings") {
  Tensor p = attn::zeros({2}, attn::Dtype::Float64, true);
  CHECK_THROWS_WITH_SUBSTR(nn::SGD({p}, -0.1), attn::ValueError, "invalid learning rate");
  CHECK_THROWS_WITH_SUBSTR(nn::SGD({p}, 0.1, 0.0, 0.0, 0.0, true), attn::ValueError, "nesterov");
  CHECK_THROWS_WITH_SUBSTR(nn::SGD({p}, 0.1, -0.5), attn::ValueError, "momentum");
  CHECK_THROWS_WITH_SUBSTR(nn::Adam({p}, 0.1, {1.0, 0.999}), attn::ValueError, "Adam: betas must be in [0, 1)");
  CHECK_THROWS_WITH_SUBSTR(nn::AdamW({p}, 0.1, {0.9, 0.999}, -1.0), attn::ValueError, "AdamW: invalid eps");
  CHECK_THROWS_WITH_SUBSTR(nn::Adam({p}, 0.1, {0.9, 0.999}, 1e-8, -1.0), attn::ValueError, "weight_decay");
  CHECK_THROWS_WITH_SUBSTR(nn::SGD({p * 2.0}, 0.1), attn::ValueError, "only leaf tensors can be optimized");
  CHECK_THROWS_AS(nn::SGD({Tensor()}, 0.1), attn::ValueError);
}

TEST_CASE("StepLR and CosineAnnealingLR equal torch.optim.lr_scheduler") {
  test::Reference ref("nn_optim");
  Tensor p = attn::zeros({1}, attn::Dtype::Float64, true);
  for (const std::string name : {"step_lr", "cosine_lr"}) {
    nn::SGD opt({p}, 0.1);
    std::unique_ptr<nn::LRScheduler> schedule;
    if (name == "step_lr") schedule = std::make_unique<nn::StepLR>(opt, 3, 0.5);
    else schedule = std::make_unique<nn::CosineAnnealingLR>(opt, 10, 0.01);
    const xt::xarray<double> lrs = ref.array(name, "lr");
    for (std::size_t k = 0; k < lrs.size(); ++k) {
      INFO(name << " epoch " << k);
      CHECK(schedule->last_epoch() == static_cast<long>(k));
      CHECK(opt.lr == doctest::Approx(lrs(k)).epsilon(1e-13));
      CHECK(schedule->get_lr() == opt.lr);
      schedule->step();
    }
  }
}

TEST_CASE("NoamLR: linear warm-up, peak at warmup_steps, then 1/sqrt(step)") {
  Tensor p = attn::zeros({1}, attn::Dtype::Float64, true);
  nn::Adam opt({p}, 1.0);
  nn::NoamLR noam(opt, 512, 4000, 2.0);
  auto expected = [](double n) { return 2.0 / std::sqrt(512.0) * std::min(1 / std::sqrt(n), n * std::pow(4000.0, -1.5)); };
  CHECK(opt.lr == doctest::Approx(expected(1)).epsilon(1e-14));  // the first update uses step 1
  double previous = opt.lr;
  for (long n = 2; n <= 8000; ++n) {
    noam.step();
    CHECK(opt.lr == doctest::Approx(expected(static_cast<double>(n))).epsilon(1e-14));
    if (n <= 4000) CHECK(opt.lr > previous);
    else CHECK(opt.lr < previous);
    previous = opt.lr;
  }
  CHECK(expected(4000) == doctest::Approx(2.0 / std::sqrt(512.0) / std::sqrt(4000.0)));
  CHECK_THROWS_AS(nn::NoamLR(opt, 512, 0), attn::ValueError);
  CHECK_THROWS_AS(nn::StepLR(opt, 0), attn::ValueError);
  CHECK_THROWS_AS(nn::CosineAnnealingLR(opt, 0), attn::ValueError);
}
