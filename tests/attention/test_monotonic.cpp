#include "../helpers.hpp"

#include <xtensor/xview.hpp>

#include <cmath>

using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace nn = attn::nn;

namespace {

using test::with_parameters;

// The expected alignment straight from the stop/attend process, without the
// recurrence: step i attends to j if step i - 1 stopped at some k <= j, step i
// read past k .. j - 1 and stopped at j:
//   alpha_ij = sum_{k <= j} alpha_{i-1,k} prod_{l=k}^{j-1} (1 - p_il) p_ij.
xt::xarray<double> by_definition(const xt::xarray<double>& p, const std::vector<std::size_t>& lengths) {
  const std::size_t B = p.shape()[0], Tq = p.shape()[1], Tk = p.shape()[2];
  xt::xarray<double> alpha = xt::zeros<double>({B, Tq, Tk});
  for (std::size_t b = 0; b < B; ++b) {
    std::vector<double> previous(Tk, 0.0);
    previous[0] = 1.0;
    for (std::size_t i = 0; i < Tq; ++i) {
      for (std::size_t j = 0; j < lengths[b]; ++j)
        for (std::size_t k = 0; k <= j; ++k) {
          double read_on = 1.0;
          for (std::size_t l = k; l < j; ++l) read_on *= 1.0 - p(b, i, l);
          alpha(b, i, j) += previous[k] * read_on * p(b, i, j);
        }
      for (std::size_t j = 0; j < Tk; ++j) previous[j] = alpha(b, i, j);
    }
  }
  return alpha;
}

}  // namespace

TEST_CASE("monotonic_alignment on a 2 x 3 case computed by hand") {
  // Step 0 starts at j = 0 (alpha_{-1} = [1, 0, 0]), p_0 = [0.5, 0.5, 0.5]:
  //   q = 1                     alpha = 0.5 * 1     = 0.5
  //   q = 0.5 * 1 + 0 = 0.5     alpha = 0.5 * 0.5   = 0.25
  //   q = 0.5 * 0.5 + 0 = 0.25  alpha = 0.5 * 0.25  = 0.125     (0.125 never stops)
  // Step 1, p_1 = [0.2, 0.4, 0.6]:
  //   q = 0.5                           alpha = 0.2 * 0.5   = 0.1
  //   q = 0.8 * 0.5 + 0.25 = 0.65       alpha = 0.4 * 0.65  = 0.26
  //   q = 0.6 * 0.65 + 0.125 = 0.515    alpha = 0.6 * 0.515 = 0.309
  // (Raffel's form agrees: 0.4 * (0.8 * 0.1 / 0.2 + 0.25) = 0.26, 0.6 * (0.6 * 0.26 / 0.4 + 0.125) = 0.309.)
  Tensor p = attn::tensor(xt::xarray<double>{{{0.5, 0.5, 0.5}, {0.2, 0.4, 0.6}}});
  Tensor expected = attn::tensor(xt::xarray<double>{{{0.5, 0.25, 0.125}, {0.1, 0.26, 0.309}}});
  CHECK(test::allclose(nn::monotonic_alignment(p), expected, 1e-15));
  // one step at a time gives the same
  Tensor a0 = nn::monotonic_alignment_step(attn::select(p, 1, 0), nn::monotonic_initial_alignment(1, 3));
  Tensor a1 = nn::monotonic_alignment_step(attn::select(p, 1, 1), a0);
  CHECK(test::allclose(a1, attn::select(expected, 1, 1), 1e-15));
  // and the hard decisions: step 0 stops at 0 (p = 0.5 >= 0.5), step 1 reads on to 2
  CHECK(nn::hard_monotonic_alignment(p) == attn::Index{{0, 2}});
}

TEST_CASE("the recurrence equals the stop/attend process; rows sum to <= 1; padding gets 0") {
  Tensor p = attn::sigmoid(test::randn({3, 5, 6}, 1, false) * 2.0);
  const std::vector<std::size_t> lengths = {6, 4, 1};
  Tensor alpha = nn::monotonic_alignment(p, attn::Index{6, 4, 1});
  CHECK(test::allclose(alpha, Tensor(by_definition(p.to_array(), lengths)), 1e-14));
  const auto a = alpha.to_array();
  for (std::size_t b = 0; b < 3; ++b)
    for (std::size_t i = 0; i < 5; ++i) {
      double total = 0;
      for (std::size_t j = 0; j < 6; ++j) {
        CHECK(a(b, i, j) >= 0.0);
        if (j >= lengths[b]) CHECK(a(b, i, j) == 0.0);
        total += a(b, i, j);
      }
      CHECK(total <= 1.0 + 1e-15);
    }
  // rows sum to <= 1 and the total never grows from step to step: mass only leaks off the end
  for (std::size_t b = 0; b < 3; ++b)
    for (std::size_t i = 1; i < 5; ++i)
      CHECK(xt::sum(xt::view(a, b, i, xt::all()))() <= xt::sum(xt::view(a, b, i - 1, xt::all()))() + 1e-15);
}

TEST_CASE("gradcheck: monotonic_alignment in p and in the previous alignment") {
  Tensor z = test::randn({2, 3, 4}, 2);
  Tensor previous = test::uniform({2, 4}, 0.0, 0.25, 3);
  CHECK_GRADCHECK([&](const Inputs& in) { return nn::monotonic_alignment(attn::sigmoid(in[0]), attn::Index{4, 2}, in[1]); },
                  {z, previous});
}

TEST_CASE("MonotonicAttention: context = alpha V, gradcheck of the layer in double with its parameters") {
  attn::manual_seed(7);
  nn::MonotonicAttention layer(3, 4, 5);
  CHECK(layer.parameters().size() == 6);
  Tensor s = test::randn({2, 3, 3}, 4), h = test::randn({2, 5, 4}, 5), v = test::randn({2, 5, 2}, 6);
  const attn::Index lengths = {5, 3};
  auto [context, weights] = layer(s, h, v, lengths);
  CHECK(context.shape() == attn::Shape{2, 3, 2});
  CHECK(weights.shape() == attn::Shape{2, 3, 5});
  Tensor p = attn::sigmoid(layer.energy(s, layer.precompute_keys(h)));
  CHECK(test::allclose(weights, nn::monotonic_alignment(p, lengths), 1e-15));
  CHECK(test::allclose(context, attn::matmul(weights, v), 1e-15));
  CHECK(test::allclose(layer.last_weights(), weights, 0.0));
  // the energy by hand for one pair: g v.tanh(W1 s + b + W2 h) / ||v|| + r
  {
    auto W1 = layer.W1.to_array(), W2 = layer.W2.to_array(), bb = layer.b.to_array(), vv = layer.v.to_array();
    auto sa = s.to_array(), ha = h.to_array();
    double e = layer.r.item(), norm = std::sqrt(xt::sum(vv * vv)());
    for (std::size_t a = 0; a < 5; ++a) {
      double x = bb(a);
      for (std::size_t d = 0; d < 3; ++d) x += W1(a, d) * sa(1, 2, d);
      for (std::size_t d = 0; d < 4; ++d) x += W2(a, d) * ha(1, 4, d);
      e += layer.g.item() * vv(a) / norm * std::tanh(x);
    }
    CHECK(layer.energy(s, layer.precompute_keys(h)).to_array()(1, 2, 4) == doctest::Approx(e).epsilon(1e-13));
  }
  CHECK_GRADCHECK([&](const Inputs& in) { return layer(in[0], in[1], in[2], lengths).context; },
                  with_parameters(layer, {s, h, v}));
  Tensor previous = test::uniform({2, 5}, 0.0, 0.2, 8);
  CHECK_GRADCHECK([&](const Inputs& in) { return layer(in[0], in[1], in[2], lengths, in[3]).weights; },
                  with_parameters(layer, {s, h, v, previous}));
}

TEST_CASE("MonotonicAttention: noise only in training") {
  nn::MonotonicOptions options;
  options.noise_std = 1.0;
  nn::MonotonicAttention layer(3, 3, 4, options);
  Tensor s = test::randn({1, 2, 3}, 9, false), h = test::randn({1, 4, 3}, 10, false);
  layer.eval();
  CHECK(test::allclose(layer(s, h, h).weights, layer(s, h, h).weights, 0.0));
  layer.train();
  CHECK(!test::allclose(layer(s, h, h).weights, layer(s, h, h).weights, 1e-6));
}

TEST_CASE("hard monotonic decoding picks the expected positions on a hand case") {
  // Row 0: step 0 reads 0 (0.1), stops at 1 (0.7); step 1 starts at 1 (0.2), reads on to 2 (0.6);
  // step 2 starts at 2 (0.4) and reads off the end (0.3): none; step 3: none.
  // Row 1 has length 2: step 0 stops at 0 (0.9); steps 1-3 read 0 (0.1), 1 (0.2) and end: none,
  // even though p = 0.9 at the padded position 2.
  Tensor p = attn::tensor(xt::xarray<double>{{{0.1, 0.7, 0.2, 0.9},
                                               {0.9, 0.2, 0.6, 0.1},
                                               {0.9, 0.9, 0.4, 0.3},
                                               {0.9, 0.9, 0.9, 0.9}},
                                              {{0.9, 0.1, 0.9, 0.9},
                                               {0.1, 0.2, 0.9, 0.9},
                                               {0.1, 0.2, 0.9, 0.9},
                                               {0.9, 0.9, 0.9, 0.9}}});
  CHECK(nn::hard_monotonic_alignment(p, attn::Index{4, 2}) == attn::Index{{1, 2, -1, -1}, {0, -1, -1, -1}});
}

TEST_CASE("when p saturates to 0 or 1, the soft alignment is the hard one") {
  // the matrix form
  Tensor p = attn::tensor(xt::xarray<double>{{{0, 1, 0, 1}, {0, 0, 1, 1}, {0, 0, 0, 0}}, {{1, 0, 1, 1}, {1, 1, 1, 1}, {0, 1, 0, 1}}});
  auto hard = nn::hard_monotonic_alignment(p, attn::Index{4, 3});
  auto soft = nn::monotonic_alignment(p, attn::Index{4, 3}).to_array();
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 4; ++j) CHECK(soft(b, i, j) == (hard(b, i) == std::int64_t(j) ? 1.0 : 0.0));
  // the layer: a large g saturates p = sigmoid(e); hard_step, scoring lazily, picks the same
  // positions as the soft weights, and the same contexts
  attn::manual_seed(11);
  nn::MonotonicAttention layer(3, 4, 6);
  layer.g.data<double>()(0) = 2000.0;
  layer.r.data<double>()(0) = 0.0;
  const std::size_t Tq = 6, Tk = 7;
  Tensor s = test::randn({3, Tq, 3}, 12, false), h = test::randn({3, Tk, 4}, 13, false), v = test::randn({3, Tk, 2}, 14, false);
  const attn::Index lengths = {7, 5, 2};
  layer.eval();
  auto out = layer(s, h, v, lengths);
  const auto w = out.weights.to_array(), c = out.context.to_array();
  Tensor keys = layer.precompute_keys(h);
  attn::Index pointer = nn::MonotonicAttention::start_pointer(3);
  std::size_t attended = 0;
  for (std::size_t i = 0; i < Tq; ++i) {
    auto step = layer.hard_step(attn::select(s, 1, long(i)), keys, v, lengths, pointer);
    const auto ctx = step.context.to_array();
    for (std::size_t b = 0; b < 3; ++b) {
      for (std::size_t j = 0; j < Tk; ++j)
        CHECK(w(b, i, j) == doctest::Approx(step.positions(b) == std::int64_t(j) ? 1.0 : 0.0).epsilon(1e-9));
      for (std::size_t d = 0; d < 2; ++d) CHECK(ctx(b, d) == doctest::Approx(c(b, i, d)).epsilon(1e-9));
      attended += step.positions(b) >= 0;
    }
  }
  CHECK(attended > 3);   // the case is not all "none"
  CHECK(layer.pairs_scored() <= 3 * (Tk + Tq));  // linear: each step scores from its pointer to its stop
}

TEST_CASE("MonotonicAttention rejects bad shapes, naming the op, expected and actual") {
  nn::MonotonicAttention layer(3, 4, 5);
  Tensor s = attn::zeros({2, 3, 3}), h = attn::zeros({2, 5, 4}), v = attn::zeros({2, 5, 2});
  CHECK_THROWS_WITH_SUBSTR(layer(attn::zeros({2, 3, 2}), h, v), attn::ShapeError,
                           "MonotonicAttention: expected query [B, Tq, 3], got [2, 3, 2]");
  CHECK_THROWS_WITH_SUBSTR(layer(s, attn::zeros({2, 5, 3}), v), attn::ShapeError,
                           "MonotonicAttention: expected keys [B, Tk, 4], got [2, 5, 3]");
  CHECK_THROWS_WITH_SUBSTR(layer(s, attn::zeros({3, 5, 4}), v), attn::ShapeError, "with B = 2, got [3, 5, 5]");
  CHECK_THROWS_WITH_SUBSTR(layer(s, h, attn::zeros({2, 4, 2})), attn::ShapeError,
                           "expected values [B, Tk, Dv] with B = 2 and Tk = 5, got [2, 4, 2]");
  CHECK_THROWS_WITH_SUBSTR(layer(s, h, v, attn::Index{5}), attn::ShapeError, "expected lengths [B] = [2], got [1]");
  CHECK_THROWS_WITH_SUBSTR(layer(s, h, v, attn::Index{5, 6}), attn::ValueError, "lengths must be in [0, 5], got 6");
  CHECK_THROWS_WITH_SUBSTR(layer(s, h, v, std::nullopt, attn::zeros({2, 4})), attn::ShapeError,
                           "expected previous alignment [B, Tk] = [2, 5], got [2, 4]");
  CHECK_THROWS_WITH_SUBSTR(nn::monotonic_alignment(attn::zeros({2, 3})), attn::ShapeError,
                           "monotonic_alignment: expected p [B, Tq, Tk] with Tk > 0, got [2, 3]");
  CHECK_THROWS_WITH_SUBSTR(nn::monotonic_alignment_step(attn::zeros({2, 3}), attn::zeros({2, 4})), attn::ShapeError,
                           "monotonic_alignment_step: expected p [B, Tk] and previous [B, Tk]");
  CHECK_THROWS_WITH_SUBSTR(nn::hard_monotonic_alignment(attn::zeros({2, 3})), attn::ShapeError,
                           "hard_monotonic_alignment: expected p [B, Tq, Tk], got [2, 3]");
  attn::Index pointer = nn::MonotonicAttention::start_pointer(2);
  Tensor keys = layer.precompute_keys(h);
  CHECK_THROWS_WITH_SUBSTR(layer.hard_step(s, keys, v, std::nullopt, pointer), attn::ShapeError,
                           "MonotonicAttention::hard_step: expected query [B, 3], got [2, 3, 3]");
  attn::Index short_pointer = nn::MonotonicAttention::start_pointer(1);
  CHECK_THROWS_WITH_SUBSTR(layer.hard_step(attn::zeros({2, 3}), keys, v, std::nullopt, short_pointer),
                           attn::ShapeError, "expected pointer [B] = [2], got [1]");
  attn::Index far = {0, 9};
  CHECK_THROWS_WITH_SUBSTR(layer.hard_step(attn::zeros({2, 3}), keys, v, std::nullopt, far), attn::ValueError,
                           "pointer must be in [0, 5], got 9");
  CHECK_THROWS_WITH_SUBSTR(nn::MonotonicAttention(0, 4, 5), attn::ValueError, "must be positive");
}
