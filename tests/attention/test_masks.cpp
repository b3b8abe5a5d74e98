#include "../helpers.hpp"

#include <xtensor/xview.hpp>

#include <cmath>

using attn::Mask;
using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace nn = attn::nn;

namespace {

bool all_finite(const Tensor& t) {
  const auto a = t.to_array();
  for (double x : a)
    if (!std::isfinite(x)) return false;
  return true;
}

}  // namespace

TEST_CASE("padding_mask: true at positions past each valid length") {
  Mask m = nn::padding_mask(attn::Index{2, 4, 0}, 4);
  Mask expected = {{false, false, true, true}, {false, false, false, false}, {true, true, true, true}};
  CHECK(m == expected);
  CHECK_THROWS_WITH_SUBSTR(nn::padding_mask(attn::Index{2, 5}, 4), attn::ValueError, "lengths must be in [0, 4], got 5");
  CHECK_THROWS_WITH_SUBSTR(nn::padding_mask(attn::Index{-1}, 4), attn::ValueError, "got -1");
  CHECK_THROWS_WITH_SUBSTR(nn::padding_mask(attn::Index{{1, 2}}, 4), attn::ShapeError, "expected lengths of shape [B]");
}

TEST_CASE("causal_mask: true above the diagonal") {
  Mask expected = {{false, true, true}, {false, false, true}, {false, false, false}};
  CHECK(nn::causal_mask(3) == expected);
  CHECK(nn::causal_mask(1) == Mask(xt::zeros<bool>({1, 1})));
}

TEST_CASE("masked_softmax: weights sum to 1 over allowed keys and are 0 on masked keys") {
  Tensor scores = test::randn({2, 3, 4}, 1, false);
  Mask padding = nn::padding_mask(attn::Index{3, 2}, 4);  // [B, Tk]
  padding.reshape({2, 1, 4});                             // [B, 1, Tk]: the same for every query
  Tensor w = nn::masked_softmax(scores, padding);
  const auto a = w.to_array(), s = scores.to_array();
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 3; ++i) {
      const std::size_t len = b == 0 ? 3 : 2;
      double total = 0, norm = 0;
      for (std::size_t j = 0; j < len; ++j) norm += std::exp(s(b, i, j));
      for (std::size_t j = 0; j < 4; ++j) {
        total += a(b, i, j);
        if (j >= len) CHECK(a(b, i, j) == 0.0);
        else CHECK(a(b, i, j) == doctest::Approx(std::exp(s(b, i, j)) / norm).epsilon(1e-14));
      }
      CHECK(total == doctest::Approx(1.0).epsilon(1e-14));
    }
}

TEST_CASE("masked_softmax without a mask is softmax") {
  Tensor scores = test::randn({2, 5}, 2, false);
  CHECK(test::allclose(nn::masked_softmax(scores, std::nullopt), attn::softmax(scores, -1), 0.0));
  CHECK(test::allclose(nn::masked_softmax(scores, std::nullopt, 0), attn::softmax(scores, 0), 0.0));
}

TEST_CASE("masked_softmax: a fully masked row gives zeros and a finite, zero gradient") {
  Tensor scores = test::randn({3, 4}, 3);
  Mask mask = {{false, true, false, true}, {true, true, true, true}, {false, false, false, false}};
  Tensor w = nn::masked_softmax(scores, mask);
  const auto a = w.to_array();
  for (std::size_t j = 0; j < 4; ++j) CHECK(a(1, j) == 0.0);
  attn::sum(w * test::randn({3, 4}, 4, false)).backward();
  CHECK(all_finite(scores.grad()));
  for (std::size_t j = 0; j < 4; ++j) CHECK(scores.grad().to_array()(1, j) == 0.0);
  CHECK_GRADCHECK([&](const Inputs& in) { return nn::masked_softmax(in[0], mask); }, {test::randn({3, 4}, 5)});
}

TEST_CASE("masked_softmax: a row blocked through a broadcast [N, 1] mask also gives zeros") {
  Mask rows = xt::zeros<bool>({3, 1});  // [3, 1] against [3, 4]: row 1 blocks every key
  rows(1, 0) = true;
  const auto a = nn::masked_softmax(test::randn({3, 4}, 8, false), rows).to_array();
  for (std::size_t j = 0; j < 4; ++j) CHECK(a(1, j) == 0.0);
  CHECK(xt::sum(xt::view(a, 0))() == doctest::Approx(1.0));
}

TEST_CASE("masked_softmax: gradients, broadcast masks, other dims") {
  Mask causal = nn::causal_mask(3);  // [3, 3] against [2, 3, 3]
  CHECK_GRADCHECK([&](const Inputs& in) { return nn::masked_softmax(in[0], causal); }, {test::randn({2, 3, 3}, 6)});
  Mask along_rows = xt::zeros<bool>({3, 1});  // [3, 1]: softmax over dim 0 skips row 0
  along_rows(0, 0) = true;
  Tensor x = test::randn({3, 2}, 7);
  Tensor w = nn::masked_softmax(x, along_rows, 0);
  CHECK(w.to_array()(0, 1) == 0.0);
  CHECK(w.to_array()(1, 1) + w.to_array()(2, 1) == doctest::Approx(1.0).epsilon(1e-14));
  CHECK_GRADCHECK([&](const Inputs& in) { return nn::masked_softmax(in[0], along_rows, 0); }, {x});
}

TEST_CASE("masked_softmax: huge scores stay finite") {
  Tensor scores = attn::tensor({{1000.0, -1000.0, 500.0}, {1e6, 1e6, 1e6}});
  Mask mask = {{false, false, true}, {true, true, true}};
  Tensor w = nn::masked_softmax(scores, mask);
  CHECK(all_finite(w));
  CHECK(w.to_array()(0, 0) == 1.0);
  CHECK(w.to_array()(1, 0) == 0.0);
}

TEST_CASE("masked_softmax in float32") {
  Tensor scores = attn::tensor({{0.5, 1.5, -2.0}}, true, attn::Dtype::Float32);
  Mask mask = {{false, false, true}};
  Tensor w = nn::masked_softmax(scores, mask);
  CHECK(w.dtype() == attn::Dtype::Float32);
  CHECK(w.to_array()(0, 0) == doctest::Approx(1.0 / (1.0 + std::exp(1.0))).epsilon(1e-6));
  CHECK(w.to_array()(0, 2) == 0.0);
  attn::sum(w * attn::tensor({{1.0, 2.0, 3.0}}, false, attn::Dtype::Float32)).backward();
  CHECK(all_finite(scores.grad()));
}

TEST_CASE("masks of the wrong shape are rejected with both shapes named") {
  Tensor scores = attn::zeros({2, 3, 4});
  CHECK_THROWS_WITH_SUBSTR(nn::masked_softmax(scores, Mask(xt::zeros<bool>({2, 4}))), attn::ShapeError,
                           "masked_softmax: mask [2, 4] does not broadcast against scores [2, 3, 4]");
  CHECK_THROWS_WITH_SUBSTR(nn::masked_softmax(scores, Mask(xt::zeros<bool>({1, 2, 3, 4}))), attn::ShapeError,
                           "does not broadcast");
  CHECK_THROWS_AS(nn::masked_softmax(scores, std::nullopt, 3), attn::ShapeError);
}

TEST_CASE("combine_masks: key padding or-ed with attn_mask, shaped like the scores") {
  Mask padding = nn::padding_mask(attn::Index{3, 2}, 3);  // [B, Tk]
  Mask causal = nn::causal_mask(3);                       // [Tq, Tk]
  auto m = nn::combine_masks({2, 3, 3}, padding, causal, "test");
  REQUIRE(m.has_value());
  CHECK(m->shape()[0] == 2);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j) CHECK((*m)(b, i, j) == (padding(b, j) || causal(i, j)));
  CHECK_FALSE(nn::combine_masks({2, 3, 3}, std::nullopt, std::nullopt, "test").has_value());

  auto with_heads = nn::combine_masks({2, 4, 3, 3}, padding, std::nullopt, "test");  // [B, H, Tq, Tk]
  REQUIRE(with_heads.has_value());
  CHECK((*with_heads)(1, 3, 0, 2) == true);
  CHECK((*with_heads)(1, 3, 0, 1) == false);

  CHECK_THROWS_WITH_SUBSTR(nn::combine_masks({2, 3, 3}, nn::padding_mask(attn::Index{1, 2, 3}, 3), std::nullopt, "Layer"),
                           attn::ShapeError, "Layer: expected key_padding_mask [B, Tk] = [2, 3], got [3, 3]");
  CHECK_THROWS_WITH_SUBSTR(nn::combine_masks({2, 3, 3}, std::nullopt, nn::causal_mask(4), "Layer"), attn::ShapeError,
                           "Layer: expected attn_mask [3, 3] or [2, 3, 3] for scores [2, 3, 3], got [4, 4]");
}
