// Losses on attention weights (nn/attention/alignment_loss.hpp): supervised attention
// against a gold alignment, and the agreement of two directions. Values against loops
// written from the definitions, gradients against finite differences in float64.
#include "../helpers.hpp"

#include <cmath>

using attn::Index;
using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace nn = attn::nn;

namespace {

// Rows that sum to 1 over the first len[b] positions, 0 after: softmax of random scores, [B, T, S].
Tensor random_weights(std::size_t B, std::size_t T, std::size_t S, const std::vector<std::size_t>& len) {
  xt::xarray<double> e = attn::randn({B, T, S}).to_array();
  xt::xarray<double> a = xt::zeros<double>({B, T, S});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t) {
      double total = 0;
      for (std::size_t j = 0; j < len[b]; ++j) total += std::exp(e(b, t, j));
      for (std::size_t j = 0; j < len[b]; ++j) a(b, t, j) = std::exp(e(b, t, j)) / total;
    }
  return attn::tensor(a, true);
}

}  // namespace

TEST_CASE("supervised_attention_loss: -mean over steps with a gold position of log a_{t,g_t}") {
  attn::manual_seed(1);
  Tensor a = random_weights(2, 4, 3, {3, 2});
  const Index gold = {{2, -1, 0, 1}, {1, 0, -1, -1}};  // [B, T]; -1: no gold source
  const xt::xarray<double> w = a.to_array();
  const double hand = -(std::log(w(0, 0, 2)) + std::log(w(0, 2, 0)) + std::log(w(0, 3, 1)) + std::log(w(1, 0, 1)) +
                        std::log(w(1, 1, 0))) / 5.0;
  CHECK(nn::supervised_attention_loss(a, gold).item() == doctest::Approx(hand).epsilon(1e-14));
  CHECK_GRADCHECK([&](const Inputs& in) { return nn::supervised_attention_loss(in[0], gold); }, {a});
  // A gold position whose weight is exactly 0 (here: on padding) costs -log(1e-30), not infinity.
  const Index on_padding = {{-1, -1, -1, -1}, {2, -1, -1, -1}};
  CHECK(nn::supervised_attention_loss(a, on_padding).item() == doctest::Approx(-std::log(1e-30)).epsilon(1e-12));
  // Weights all on the gold positions cost nothing; no gold at all costs nothing and is still a scalar.
  xt::xarray<double> one_hot = xt::zeros<double>({2, 4, 3});
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t t = 0; t < 4; ++t)
      if (gold(b, t) >= 0) one_hot(b, t, std::size_t(gold(b, t))) = 1.0;
  CHECK(nn::supervised_attention_loss(attn::tensor(one_hot), gold).item() == 0.0);
  const Index none = -xt::ones<std::int64_t>({2, 4});
  CHECK(nn::supervised_attention_loss(a, none).item() == 0.0);
  // float32 in, float32 out.
  CHECK(nn::supervised_attention_loss(a.to(attn::Dtype::Float32), gold).dtype() == attn::Dtype::Float32);
}

TEST_CASE("supervised_attention_loss: bad input") {
  Tensor a = attn::softmax(attn::randn({2, 4, 3}), -1);
  const Index past_the_end = {{3, 0, 0, 0}, {0, 0, 0, 0}}, one_row = {{0, 0, 0, 0}};
  const Index two_rows = xt::zeros<std::int64_t>({2, 1}), none = Index::from_shape({0, 0});
  CHECK_THROWS_WITH_SUBSTR(nn::supervised_attention_loss(a, past_the_end), attn::ValueError,
                           "gold position 3 of row 0, step 0 is outside the 3 source positions");
  CHECK_THROWS_WITH_SUBSTR(nn::supervised_attention_loss(a, one_row), attn::ShapeError,
                           "expected attention [B, T, S] and alignment [B, T], got [2, 4, 3] and [1, 4]");
  CHECK_THROWS_WITH_SUBSTR(nn::supervised_attention_loss(a, two_rows), attn::ShapeError, "got [2, 4, 3] and [2, 1]");
  CHECK_THROWS_WITH_SUBSTR(nn::supervised_attention_loss(attn::randn({2, 4}), two_rows), attn::ShapeError,
                           "supervised_attention_loss");
  CHECK_THROWS_WITH_SUBSTR(nn::supervised_attention_loss(a, none), attn::ShapeError, "the examples have no gold alignment");
}

TEST_CASE("agreement_loss: -sum of a^{x->y}_{t,j} a^{y->x}_{j,t} over real tokens, per target token") {
  attn::manual_seed(2);
  // Sentence 0: |x| = 3, |y| = 2; sentence 1: |x| = 2, |y| = 3. Each model has one <eos> step more than its target.
  const std::vector<std::size_t> x_len = {3, 2}, y_len = {2, 3};
  Tensor fwd = random_weights(2, 4, 3, x_len);  // x -> y: [B, max|y| + 1, max|x|]
  Tensor bwd = random_weights(2, 4, 3, y_len);  // y -> x: [B, max|x| + 1, max|y|]
  const xt::xarray<double> f = fwd.to_array(), g = bwd.to_array();
  double trace = 0;
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t t = 0; t < y_len[b]; ++t)
      for (std::size_t j = 0; j < x_len[b]; ++j) trace += f(b, t, j) * g(b, j, t);
  CHECK(nn::agreement_loss(fwd, bwd, x_len, y_len).item() == doctest::Approx(-trace / 5.0).epsilon(1e-14));
  CHECK_GRADCHECK([&](const Inputs& in) { return nn::agreement_loss(in[0], in[1], x_len, y_len); }, {fwd, bwd});
  // Rows past a sentence's target (its <eos> step, padding) and columns past its source do not count, whatever
  // they hold, even where the other direction's weights are not 0.
  xt::xarray<double> noisy_f = f, noisy_g = g;
  noisy_f(0, 2, 0) = noisy_f(0, 2, 1) = 7.0;  // sentence 0's <eos> row (|y| = 2), against x -> y's x_0, x_1 rows of y -> x
  noisy_g(0, 0, 2) = noisy_g(0, 1, 2) = 7.0;  // sentence 0's y -> x column y_2, past |y| = 2
  noisy_g(1, 2, 0) = noisy_g(1, 2, 1) = 7.0;  // sentence 1's <eos> row (|x| = 2)
  noisy_f(1, 0, 2) = noisy_f(1, 1, 2) = 7.0;  // sentence 1's x -> y column x_2, past |x| = 2
  CHECK(g(0, 0, 2) == 0.0);  // y_2 does not exist in sentence 0: what the noise replaces was 0
  CHECK(nn::agreement_loss(attn::tensor(noisy_f), attn::tensor(noisy_g), x_len, y_len).item() ==
        doctest::Approx(-trace / 5.0).epsilon(1e-14));
  // Two hard alignments that are each other's transpose agree fully: the loss is -1.
  xt::xarray<double> diag_f = xt::zeros<double>({1, 3, 2}), diag_g = xt::zeros<double>({1, 3, 2});
  diag_f(0, 0, 1) = diag_f(0, 1, 0) = 1.0;  // y_0 <- x_1, y_1 <- x_0
  diag_g(0, 0, 1) = diag_g(0, 1, 0) = 1.0;  // x_0 <- y_1, x_1 <- y_0
  CHECK(nn::agreement_loss(attn::tensor(diag_f), attn::tensor(diag_g), {2}, {2}).item() == -1.0);
  diag_g(0, 0, 1) = 0.0;
  diag_g(0, 0, 0) = 1.0;  // x_0 <- y_0: one of the two links disagrees
  CHECK(nn::agreement_loss(attn::tensor(diag_f), attn::tensor(diag_g), {2}, {2}).item() == -0.5);
}

TEST_CASE("agreement_loss: bad input") {
  Tensor fwd = attn::softmax(attn::randn({2, 4, 3}), -1), bwd = attn::softmax(attn::randn({2, 4, 3}), -1);
  CHECK_THROWS_WITH_SUBSTR(nn::agreement_loss(fwd, bwd, {3, 2}, {2, 5}), attn::ShapeError,
                           "the x -> y weights need at least [B, 5, 3] and the y -> x weights [B, 3, 5]");
  CHECK_THROWS_WITH_SUBSTR(nn::agreement_loss(fwd, bwd, {3}, {2, 2}), attn::ShapeError, "with 1 and 2 lengths");
  CHECK_THROWS_WITH_SUBSTR(nn::agreement_loss(fwd, attn::randn({3, 4, 3}), {3, 2}, {2, 2}), attn::ShapeError,
                           "[2, 4, 3] and [3, 4, 3]");
}
