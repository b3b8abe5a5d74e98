#include "../helpers.hpp"

#include <cmath>
#include <memory>

using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace nn = attn::nn;
using Mode = nn::LocalAttention::Mode;

namespace {

using test::with_parameters;

// Luong's local weights by hand: softmax of the scores over the valid keys of
// the window [p - D, p + D], times exp(-(j - p)^2 / (2 (D/2)^2)) when gaussian.
xt::xarray<double> loop_weights(const xt::xarray<double>& scores, const xt::xarray<double>& p,
                                const std::vector<std::size_t>& lengths, std::size_t D, bool gaussian = true) {
  const std::size_t B = scores.shape()[0], Tq = scores.shape()[1], Tk = scores.shape()[2];
  const double sigma = D / 2.0;
  xt::xarray<double> w = xt::zeros<double>({B, Tq, Tk});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < Tq; ++t) {
      auto in_window = [&](std::size_t j) { return j < lengths[b] && std::abs(double(j) - p(b, t)) <= double(D); };
      double norm = 0;
      for (std::size_t j = 0; j < Tk; ++j)
        if (in_window(j)) norm += std::exp(scores(b, t, j));
      for (std::size_t j = 0; j < Tk; ++j)
        if (in_window(j))
          w(b, t, j) = std::exp(scores(b, t, j)) / norm *
                       (gaussian ? std::exp(-(double(j) - p(b, t)) * (double(j) - p(b, t)) / (2 * sigma * sigma)) : 1.0);
    }
  return w;
}

// Wraps a score and records how many keys each call scored.
struct CountingScore : nn::Score {
  explicit CountingScore(std::unique_ptr<nn::Score> s) : nn::Score("CountingScore"), inner(std::move(s)) {
    register_module("inner", *inner);
  }
  Tensor precompute_keys(const Tensor& keys) const override { return inner->precompute_keys(keys); }
  Tensor forward_precomputed(const Tensor& query, const Tensor& keys) const override {
    keys_scored.push_back(keys.size(1));
    return inner->forward_precomputed(query, keys);
  }
  std::unique_ptr<nn::Score> inner;
  mutable std::vector<std::size_t> keys_scored;
};

// Global attention restricted to the window: the same score over all keys, every key
// outside [p_t - D, p_t + D] or in the padding blocked.
nn::AttentionOutput global_in_window(nn::Attention& global, const Tensor& s, const Tensor& h, const Tensor& v,
                                     const std::vector<std::size_t>& lengths, const xt::xarray<double>& p,
                                     std::size_t D) {
  const std::size_t B = s.size(0), Tq = s.size(1), Tk = h.size(1);
  attn::Mask blocked = xt::zeros<bool>(attn::Shape{B, Tq, Tk});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < Tq; ++t)
      for (std::size_t j = 0; j < Tk; ++j) blocked(b, t, j) = j >= lengths[b] || std::abs(double(j) - p(b, t)) > double(D);
  return global(s, h, v, std::nullopt, blocked);
}

}  // namespace

TEST_CASE("local-m is the paper's by default: global attention restricted to the window, values and gradients") {
  for (int kind = 0; kind < 3; ++kind) {
    CAPTURE(kind);
    auto make = [&]() -> std::unique_ptr<nn::Score> {
      attn::manual_seed(5);
      if (kind == 0) return std::make_unique<nn::DotScore>();
      if (kind == 1) return std::make_unique<nn::GeneralScore>(3, 3);
      return std::make_unique<nn::ConcatScore>(3, 3, 4);
    };
    nn::LocalAttention local(make(), 2, Mode::Monotonic);
    nn::Attention global(make());
    CHECK(!local.gaussian);
    Tensor s = test::randn({2, 6, 3}, 11), h = test::randn({2, 9, 3}, 12), v = test::randn({2, 9, 2}, 13);
    const attn::Index lengths = {9, 5};
    xt::xarray<double> p = {{0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}};
    auto out = local(s, h, v, lengths);
    auto ref = global_in_window(global, s, h, v, {9, 5}, p, 2);
    CHECK(test::allclose(out.weights, ref.weights, 1e-14));
    CHECK(test::allclose(out.context, ref.context, 1e-14));
    auto grads = [&](Tensor loss, const nn::Module& m) {
      for (Tensor t : {s, h, v}) t.zero_grad();
      for (Tensor p : m.parameters()) p.zero_grad();
      loss.backward();
      std::vector<xt::xarray<double>> g;
      for (const Tensor& t : {s, h, v}) g.push_back(t.grad().to_array());
      for (const Tensor& p : m.parameters()) g.push_back(p.grad().to_array());
      return g;
    };
    Tensor w = test::randn({2, 6, 2}, 14, false), wa = test::randn({2, 6, 9}, 15, false);
    auto g_local = grads(attn::sum(out.context * w) + attn::sum(out.weights * wa), local);
    auto g_ref = grads(attn::sum(ref.context * w) + attn::sum(ref.weights * wa), global);
    REQUIRE(g_local.size() == g_ref.size());
    for (std::size_t i = 0; i < g_local.size(); ++i) CHECK(xt::allclose(g_local[i], g_ref[i], 1e-12, 1e-14));
    CHECK_GRADCHECK([&](const Inputs& in) { return local(in[0], in[1], in[2], lengths).context; },
                    with_parameters(local, {s, h, v}));
  }
}

TEST_CASE("local attention scores only the 2D + 1 window keys, whatever the source length") {
  for (std::size_t Tk : {4, 16, 64}) {
    auto counting = std::make_unique<CountingScore>(std::make_unique<nn::GeneralScore>(3, 3));
    CountingScore& score = *counting;
    nn::LocalAttention local(std::move(counting), 2, Mode::Monotonic);
    Tensor s = test::randn({2, 3, 3}, 16, false), h = test::randn({2, Tk, 3}, 17, false);
    Tensor keys = local.score().precompute_keys(h);  // once per sentence
    for (std::size_t t = 0; t < 3; ++t) local.forward_precomputed(attn::narrow(s, 1, t, 1), keys, h, std::nullopt, t);
    CHECK(score.keys_scored == std::vector<std::size_t>{5, 5, 5});  // 2D + 1 = 5 keys at each step
    // and precomputed keys give exactly what forward(query, keys, ...) gives
    auto a = local(s, h, h), b = local.forward_precomputed(s, keys, h);
    CHECK(test::allclose(a.context, b.context, 0.0));
  }
}

TEST_CASE("local-m with the Gaussian option: p_t = t, softmax over the window times a Gaussian") {
  nn::LocalAttention local(std::make_unique<nn::DotScore>(), 2, Mode::Monotonic, 0, 0, attn::default_generator(), true);
  CHECK(local.gaussian);
  CHECK(local.parameters().empty());
  CHECK(local.sigma == 1.0);
  Tensor s = test::randn({2, 6, 3}, 1), h = test::randn({2, 7, 3}, 2), v = test::randn({2, 7, 2}, 3);
  const attn::Index lengths = {7, 4};
  auto [context, weights] = local(s, h, v, lengths);
  CHECK(weights.shape() == attn::Shape{2, 6, 7});
  xt::xarray<double> p = {{0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}};
  auto expected = loop_weights(nn::DotScore()(s, h).to_array(), p, {7, 4}, 2);
  CHECK(test::allclose(weights, Tensor(expected), 1e-14));
  CHECK(test::allclose(context, attn::matmul(Tensor(expected), v), 1e-14));
  CHECK(test::allclose(local.last_positions(), Tensor(p), 0.0));
  CHECK(test::allclose(local.last_weights(), weights, 0.0));
  // weights sum to at most 1 (the Gaussian is <= 1), and exactly 0 outside the window
  CHECK(weights.to_array()(0, 0, 3) == 0.0);
  CHECK(weights.to_array()(1, 5, 4) == 0.0);
  CHECK_GRADCHECK([&](const Inputs& in) { return local(in[0], in[1], in[2], lengths).context; }, {s, h, v});
}

TEST_CASE("local-m one step at a time: first_step shifts p_t") {
  nn::LocalAttention local(std::make_unique<nn::ScaledDotScore>(), 1, Mode::Monotonic);
  Tensor s = test::randn({2, 4, 3}, 4, false), h = test::randn({2, 5, 3}, 5, false);
  Tensor all_steps = local(s, h, h).context;
  for (std::size_t t = 0; t < 4; ++t) {
    Tensor step = local(attn::narrow(s, 1, t, 1), h, h, std::nullopt, t).context;  // [B, 1, D]
    CHECK(test::allclose(step, attn::narrow(all_steps, 1, t, 1), 1e-14));
  }
}

TEST_CASE("local-m: a window that lies entirely in the padding gives zeros, not NaN") {
  nn::LocalAttention local(std::make_unique<nn::DotScore>(), 1, Mode::Monotonic);
  Tensor s = test::randn({1, 5, 2}, 6), h = test::randn({1, 5, 2}, 7);
  auto out = local(s, h, h, attn::Index{2});  // steps 3 and 4 see keys 2..5, all padding
  for (std::size_t t = 3; t < 5; ++t)
    for (std::size_t j = 0; j < 5; ++j) CHECK(out.weights.to_array()(0, t, j) == 0.0);
  attn::sum(out.context).backward();
  for (double g : s.grad().to_array()) CHECK(std::isfinite(g));
}

TEST_CASE("local-p: p_t = S sigmoid(v_p^T tanh(W_p s_t)), differentiable in p_t") {
  attn::manual_seed(1);
  nn::LocalAttention local(std::make_unique<nn::GeneralScore>(3, 2), 2, Mode::Predictive, 3, 4);
  std::vector<std::string> names;
  for (const auto& entry : local.named_parameters()) names.push_back(entry.first);
  CHECK(names == std::vector<std::string>{"W_p", "v_p", "score.W"});
  Tensor s = test::randn({2, 3, 3}, 8), h = test::randn({2, 6, 2}, 9), v = test::randn({2, 6, 2}, 10);
  const attn::Index lengths = {6, 4};
  auto out = local(s, h, v, lengths);

  // p_t by hand, S per sequence
  const auto sv = s.to_array(), Wp = local.W_p.to_array(), vp = local.v_p.to_array();
  xt::xarray<double> p = xt::zeros<double>({2, 3});
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t t = 0; t < 3; ++t) {
      double z = 0;
      for (std::size_t a = 0; a < 4; ++a) {
        double u = 0;
        for (std::size_t d = 0; d < 3; ++d) u += Wp(a, d) * sv(b, t, d);
        z += vp(a) * std::tanh(u);
      }
      p(b, t) = (b == 0 ? 6.0 : 4.0) / (1.0 + std::exp(-z));
    }
  CHECK(test::allclose(local.last_positions(), Tensor(p), 1e-14));
  auto expected = loop_weights(local.score()(s, h).to_array(), p, {6, 4}, 2);
  CHECK(test::allclose(out.weights, Tensor(expected), 1e-14));
  CHECK(test::allclose(out.context, attn::matmul(Tensor(expected), v), 1e-14));

  // W_p and v_p get their gradient through the Gaussian exp(-(j - p_t)^2 / (2 sigma^2))
  attn::sum(out.context).backward();
  CHECK(xt::amax(xt::abs(local.W_p.grad().to_array()))() > 0.0);
  CHECK_GRADCHECK([&](const Inputs& in) { return local(in[0], in[1], in[2], lengths).context; },
                  with_parameters(local, {s, h, v}));
}

TEST_CASE("local attention rejects bad settings and shapes") {
  CHECK_THROWS_WITH_SUBSTR(nn::LocalAttention(std::make_unique<nn::DotScore>(), 0, Mode::Monotonic), attn::ValueError,
                           "window_radius D must be at least 1");
  CHECK_THROWS_WITH_SUBSTR(nn::LocalAttention(std::make_unique<nn::DotScore>(), 2, Mode::Predictive), attn::ValueError,
                           "local-p needs query_dim and attn_dim");
  nn::LocalAttention local(std::make_unique<nn::DotScore>(), 2, Mode::Predictive, 3, 4);
  Tensor s = attn::zeros({2, 1, 3}), h = attn::zeros({2, 4, 3});
  CHECK_THROWS_WITH_SUBSTR(local(s, h, h, attn::Index{1, 2, 3}), attn::ShapeError,
                           "LocalAttention: expected lengths [B] = [2], got [3]");
  CHECK_THROWS_WITH_SUBSTR(local(s, h, h, attn::Index{1, 5}), attn::ValueError, "lengths must be in [0, 4]");
  CHECK_THROWS_WITH_SUBSTR(local(s, h, attn::zeros({2, 3, 3})), attn::ShapeError,
                           "LocalAttention: expected values [B, Tk, Dv] with B = 2 and Tk = 4, got [2, 3, 3]");
  CHECK_THROWS_WITH_SUBSTR(local(s, attn::zeros({2, 4, 2}), h), attn::ShapeError, "DotScore:");
}
