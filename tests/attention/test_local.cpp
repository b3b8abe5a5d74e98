#include "../helpers.hpp"

#include <algorithm>
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

// ---- the windowed step: O(D) per step, checked against the full-length formulation ----

namespace {

// The composed formulation the windowed step replaces: every key scored, then a
// softmax over the whole row with everything outside the window [p_t - D, p_t + D]
// or the valid source blocked, times the Gaussian when on. p_t is recomputed from
// the layer's own parameters (local-p), so gradients flow the same way.
nn::AttentionOutput full_length_reference(nn::LocalAttention& local, const Tensor& s, const Tensor& h,
                                          const Tensor& v, const std::vector<std::size_t>& lengths,
                                          std::size_t first_step) {
  const std::size_t B = s.size(0), Tq = s.size(1), Tk = h.size(1), D = local.window_radius;
  Tensor p;
  if (local.mode == Mode::Monotonic) {
    xt::xarray<double> steps = xt::zeros<double>({B, Tq});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t t = 0; t < Tq; ++t) steps(b, t) = double(first_step + t);
    p = Tensor(steps);
  } else {
    xt::xarray<double> lens = xt::zeros<double>({B, std::size_t(1)});
    for (std::size_t b = 0; b < B; ++b) lens(b, 0) = double(lengths[b]);
    p = attn::sigmoid(attn::sum(attn::tanh(attn::linear(s, local.W_p)) * local.v_p, {-1})) * Tensor(lens);  // [B, Tq]
  }
  const xt::xarray<double> pv = p.to_array();
  attn::Mask blocked = xt::zeros<bool>(attn::Shape{B, Tq, Tk});
  xt::xarray<double> j = xt::zeros<double>({B, Tq, Tk});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < Tq; ++t)
      for (std::size_t k = 0; k < Tk; ++k) {
        blocked(b, t, k) = k >= lengths[b] || std::abs(double(k) - pv(b, t)) > double(D);
        j(b, t, k) = double(k);
      }
  Tensor weights = nn::masked_softmax(local.score()(s, h), blocked, -1);  // [B, Tq, Tk]
  if (local.gaussian) {
    Tensor offset = Tensor(j) - attn::unsqueeze(p, 2);  // j - p_t: [B, Tq, Tk]
    weights = weights * attn::exp(offset * offset * (-1.0 / (2.0 * local.sigma * local.sigma)));
  }
  return {attn::matmul(weights, v), weights};  // [B, Tq, Tk] x [B, Tk, Dv] -> [B, Tq, Dv]
}

// Gradients of loss with respect to each of xs, then each parameter of m.
std::vector<xt::xarray<double>> gradients_of(Tensor loss, const std::vector<Tensor>& xs, const nn::Module& m) {
  for (Tensor t : xs) t.zero_grad();
  for (Tensor p : m.parameters()) p.zero_grad();
  loss.backward();
  std::vector<xt::xarray<double>> g;
  for (const Tensor& t : xs) g.push_back(t.grad().to_array());
  for (const Tensor& p : m.parameters()) g.push_back(p.grad().to_array());
  return g;
}

// The layers under test: local-m (with and without the Gaussian) and local-p, radius D.
std::unique_ptr<nn::LocalAttention> make_local(int kind, std::size_t D) {
  attn::manual_seed(3);
  if (kind == 0)
    return std::make_unique<nn::LocalAttention>(std::make_unique<nn::GeneralScore>(3, 3), D, Mode::Monotonic);
  if (kind == 1)
    return std::make_unique<nn::LocalAttention>(std::make_unique<nn::ConcatScore>(3, 3, 4), D, Mode::Monotonic, 0, 0,
                                                attn::default_generator(), true);
  auto local =
      std::make_unique<nn::LocalAttention>(std::make_unique<nn::GeneralScore>(3, 3), D, Mode::Predictive, 3, 5);
  local->v_p.data<double>() *= 6.0;  // p_t spread over the whole source, both ends included
  return local;
}

}  // namespace

TEST_CASE("gather_windows and place_windows: windows clamped at both edges, values and gradients") {
  Tensor x = test::randn({2, 5, 3}, 21);
  const attn::Index start = {{-2, 0, 3}, {4, 7, -6}};  // before 0, inside, past the end, fully out
  Tensor y = attn::gather_windows(x, start, 4);
  REQUIRE(y.shape() == attn::Shape{2, 3, 4, 3});
  const auto xv = x.to_array(), yv = y.to_array();
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t q = 0; q < 3; ++q)
      for (std::size_t w = 0; w < 4; ++w)
        for (std::size_t d = 0; d < 3; ++d) {
          const long j = long(start(b, q)) + long(w);
          CHECK(yv(b, q, w, d) == (j >= 0 && j < 5 ? xv(b, std::size_t(j), d) : 0.0));
        }
  CHECK_GRADCHECK([&](const Inputs& in) { return attn::gather_windows(in[0], start, 4); }, {x});

  // backward adds into the gradient x already has, at the windows' rows only
  x.zero_grad();
  attn::sum(x * 2.0).backward();  // x.grad = 2 everywhere
  Tensor r = test::randn({2, 3, 4, 3}, 22, false);
  attn::sum(attn::gather_windows(x, start, 4) * r).backward();
  xt::xarray<double> expected = xt::ones<double>({2, 5, 3}) * 2.0;
  const auto rv = r.to_array();
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t q = 0; q < 3; ++q)
      for (std::size_t w = 0; w < 4; ++w) {
        const long j = long(start(b, q)) + long(w);
        if (j >= 0 && j < 5)
          for (std::size_t d = 0; d < 3; ++d) expected(b, std::size_t(j), d) += rv(b, q, w, d);
      }
  CHECK(xt::allclose(x.grad().to_array(), expected, 0.0, 1e-15));

  Tensor w = test::randn({2, 3, 4}, 23);
  Tensor rows = attn::place_windows(w, start, 5);  // [B, Q, 5]
  REQUIRE(rows.shape() == attn::Shape{2, 3, 5});
  const auto wv = w.to_array(), rowv = rows.to_array();
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t q = 0; q < 3; ++q)
      for (std::size_t j = 0; j < 5; ++j) {
        const long k = long(j) - long(start(b, q));
        CHECK(rowv(b, q, j) == (k >= 0 && k < 4 ? wv(b, q, std::size_t(k)) : 0.0));
      }
  CHECK_GRADCHECK([&](const Inputs& in) { return attn::place_windows(in[0], start, 5); }, {w});

  CHECK_THROWS_WITH_SUBSTR(attn::gather_windows(attn::zeros({2, 5}), start, 4), attn::ShapeError,
                           "gather_windows: expected x [B, N, D], got [2, 5]");
  CHECK_THROWS_WITH_SUBSTR(attn::gather_windows(x, attn::Index{{0, 1}}, 4), attn::ShapeError,
                           "gather_windows: expected start [B, Q] with B = 2 (x [2, 5, 3]), got start [1, 2]");
  CHECK_THROWS_WITH_SUBSTR(attn::gather_windows(x, start, 0), attn::ValueError,
                           "gather_windows: expected a window width");
  CHECK_THROWS_WITH_SUBSTR(attn::place_windows(w, attn::Index{{0, 1}, {2, 3}}, 5), attn::ShapeError,
                           "place_windows: expected start [B, Q] = [2, 3] (windows [2, 3, 4]), got start [2, 2]");
}

TEST_CASE("the windowed step equals the full-length masked softmax: local-m and local-p, edges, padding") {
  // B = 3 sources of lengths 9, 5 and 1 padded to Tk = 9; 11 steps, so local-m's windows
  // run off the start (t < D), off the valid source and off Tk itself.
  const std::vector<std::size_t> lens = {9, 5, 1};
  const attn::Index lengths = {9, 5, 1};
  for (int kind = 0; kind < 3; ++kind)
    for (std::size_t D : {1, 2, 3}) {
      CAPTURE(kind);
      CAPTURE(D);
      auto local = make_local(kind, D);
      Tensor s = test::randn({3, 11, 3}, 31), h = test::randn({3, 9, 3}, 32), v = test::randn({3, 9, 2}, 33);
      Tensor keys = local->score().precompute_keys(h);
      auto out = local->forward_window(s, keys, v, lengths);
      REQUIRE(out.weights.shape() == attn::Shape{3, 11, 2 * D + 1});
      REQUIRE(out.start.shape()[0] == 3);
      auto ref = full_length_reference(*local, s, h, v, lens, 0);
      if (kind == 2) {  // local-p's p_t came close to both ends of some source
        const auto p = local->last_positions().to_array();
        double p0_max = 0;  // source 0 has all 9 positions
        for (std::size_t t = 0; t < 11; ++t) p0_max = std::max(p0_max, p(0, t));
        CHECK(xt::amin(p)() < double(D));
        CHECK(p0_max > 9.0 - double(D));
      }
      const auto starts = out.start;
      CHECK(xt::amin(starts)() < (kind == 2 && D == 1 ? 1 : 0));  // (p_t > 0, so ceil(p_t - 1) >= 0)
      CHECK(xt::amax(starts)() + long(2 * D) >= 9);
      CHECK(test::allclose(out.context, ref.context, 1e-14));
      Tensor rows = nn::LocalAttention::window_to_rows(out, 9);
      CHECK(test::allclose(rows, ref.weights, 1e-14));
      CHECK(test::allclose(local->last_weights(), ref.weights, 1e-14));  // laid out on demand
      auto full = local->forward_precomputed(s, keys, v, lengths);
      CHECK(test::allclose(full.weights, ref.weights, 1e-14));
      CHECK(test::allclose(full.context, out.context, 0.0));

      // gradients through the context and through the laid-out weights
      Tensor wc = test::randn({3, 11, 2}, 34, false), wa = test::randn({3, 11, 9}, 35, false);
      auto g_new = gradients_of(attn::sum(out.context * wc) + attn::sum(rows * wa), {s, h, v}, *local);
      auto g_ref = gradients_of(attn::sum(ref.context * wc) + attn::sum(ref.weights * wa), {s, h, v}, *local);
      REQUIRE(g_new.size() == g_ref.size());
      for (std::size_t i = 0; i < g_new.size(); ++i) {
        CAPTURE(i);
        CHECK(xt::allclose(g_new[i], g_ref[i], 1e-12, 1e-13));
      }
    }
}

TEST_CASE("one decoder step at a time: finite-difference gradients at both edges and past the source") {
  const attn::Index lengths = {6, 3};
  for (int kind = 0; kind < 3; ++kind) {
    CAPTURE(kind);
    auto local = make_local(kind, 2);
    Tensor s = test::randn({2, 1, 3}, 41), h = test::randn({2, 6, 3}, 42), v = test::randn({2, 6, 2}, 43);
    // t = 0 (window starts at -2), 3 (past source 1's end), 5 (past Tk), 7 (all padding)
    for (std::size_t t : {0, 3, 5, 7}) {
      CAPTURE(t);
      auto step = [&](const Inputs& in) {
        auto out = local->forward_window(in[0], local->score().precompute_keys(in[1]), in[2], lengths, t);
        return attn::concat({attn::reshape(out.context, {-1}), attn::reshape(out.weights, {-1})}, 0);
      };
      CHECK_GRADCHECK(step, test::with_parameters(*local, {s, h, v}));
      if (kind == 2) break;  // local-p ignores first_step
    }
  }
}
