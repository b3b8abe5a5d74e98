// Layers, losses and optimizers together: an MLP learns to separate three
// interleaved spirals, a Linear layer fits a line, and a seeded run is
// reproducible bit for bit.
#include "../helpers.hpp"

#include <cmath>

using attn::Tensor;
namespace nn = attn::nn;

namespace {

// Three spiral arms in the plane, `per_class` points each, with a little noise.
struct Spirals {
  Tensor x;         // [N, 2]
  attn::Index y;    // [N], class 0, 1 or 2
};

Spirals make_spirals(std::size_t per_class, attn::Generator& gen) {
  const std::size_t n = 3 * per_class;
  xt::xarray<double> x = xt::zeros<double>({n, std::size_t(2)});
  attn::Index y = xt::zeros<std::int64_t>({n});
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t i = 0; i < per_class; ++i) {
      const std::size_t k = c * per_class + i;
      const double r = static_cast<double>(i) / per_class;                      // radius 0..1
      const double theta = 4.0 * c + 4.0 * r + 0.2 * gen.normal();            // each arm turns once
      x(k, 0) = r * std::sin(theta);
      x(k, 1) = r * std::cos(theta);
      y(k) = static_cast<std::int64_t>(c);
    }
  return {Tensor(x), y};
}

struct Run {
  double initial_loss, final_loss, accuracy;
  std::vector<Tensor> parameters;
};

// Full-batch training of MLP {2, 32, 32, 3} with Adam and a cosine schedule.
Run train_spirals(std::uint64_t seed, int steps) {
  attn::manual_seed(seed);
  attn::Generator data_gen(seed + 1);
  const Spirals data = make_spirals(100, data_gen);
  nn::MLP mlp({2, 32, 32, 3}, "tanh");
  nn::Adam opt(mlp.parameters(), 0.02);
  nn::CosineAnnealingLR schedule(opt, steps, 0.002);
  Run run{};
  for (int step = 0; step < steps; ++step) {
    opt.zero_grad();
    Tensor loss = nn::cross_entropy(mlp(data.x), data.y);
    if (step == 0) run.initial_loss = loss.item();
    loss.backward();
    nn::clip_grad_norm_(mlp.parameters(), 5.0);
    opt.step();
    schedule.step();
  }
  attn::no_grad guard;
  Tensor logits = mlp(data.x);
  run.final_loss = nn::cross_entropy(logits, data.y).item();
  const attn::Index predicted = attn::argmax(logits, 1);
  run.accuracy = static_cast<double>(xt::sum(xt::equal(predicted, data.y))()) / static_cast<double>(data.y.size());
  for (const Tensor& p : mlp.parameters()) run.parameters.push_back(p.detach());
  return run;
}

}  // namespace

TEST_CASE("an MLP learns three spirals") {
  const Run run = train_spirals(0, 400);
  MESSAGE("spirals: loss " << run.initial_loss << " -> " << run.final_loss << ", accuracy " << run.accuracy);
  CHECK(run.initial_loss == doctest::Approx(std::log(3.0)).epsilon(0.15));  // near chance at the start
  CHECK(run.final_loss < 0.2 * run.initial_loss);
  CHECK(run.accuracy > 0.9);
}

TEST_CASE("a seeded training run is reproducible bit for bit") {
  const Run a = train_spirals(5, 20), b = train_spirals(5, 20);
  CHECK(a.final_loss == b.final_loss);
  for (std::size_t i = 0; i < a.parameters.size(); ++i)
    CHECK(xt::all(xt::equal(a.parameters[i].data<double>(), b.parameters[i].data<double>())));
}

TEST_CASE("Linear + SGD with momentum fits a line under mse_loss") {
  attn::manual_seed(3);
  nn::Linear fc(1, 1);
  nn::SGD opt(fc.parameters(), 0.1, 0.9);
  nn::StepLR schedule(opt, 100, 0.5);
  Tensor x = attn::reshape(attn::tensor({-1.0, -0.5, 0.0, 0.5, 1.0, 1.5}), {6, 1});  // [6, 1]
  Tensor y = x * 3.0 - 1.0;
  for (int step = 0; step < 300; ++step) {
    opt.zero_grad();
    Tensor loss = nn::mse_loss(fc(x), y);
    loss.backward();
    opt.step();
    schedule.step();
  }
  CHECK(fc.weight.item() == doctest::Approx(3.0).epsilon(1e-6));
  CHECK(fc.bias.item() == doctest::Approx(-1.0).epsilon(1e-6));
}
