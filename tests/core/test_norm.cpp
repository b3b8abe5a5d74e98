// layer_norm (core/ops/norm.cpp): the fused op against the same math composed
// from core ops, value and gradient, and against finite differences.
#include "../helpers.hpp"

using attn::Tensor;
using Inputs = std::vector<Tensor>;

namespace {

// LayerNorm built from ops: what the fused op must equal.
Tensor composed_layer_norm(const Tensor& x, std::size_t k, const Tensor& weight, const Tensor& bias, double eps) {
  std::vector<long> dims;  // the last k dims
  for (long d = -static_cast<long>(k); d < 0; ++d) dims.push_back(d);
  Tensor centered = x - attn::mean(x, dims, true);
  Tensor y = centered / attn::sqrt(attn::mean(centered * centered, dims, true) + eps);
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

// Values and the gradients of every input agree between the fused and the composed version.
void check_same_as_composed(const attn::Shape& shape, std::size_t k, bool with_weight, bool with_bias) {
  const attn::Shape normalized(shape.end() - static_cast<long>(k), shape.end());
  Tensor x = test::randn(shape, 1), w = test::randn(normalized, 2), b = test::randn(normalized, 3);
  if (!with_weight) w = Tensor();
  if (!with_bias) b = Tensor();
  Tensor gy = test::randn(shape, 4, false);
  auto grads = [&](Tensor y) {
    for (Tensor* t : {&x, &w, &b})
      if (t->defined()) t->zero_grad();
    y.backward(gy);
    std::vector<Tensor> g;
    for (Tensor* t : {&x, &w, &b})
      if (t->defined()) g.push_back(t->grad());
    return g;
  };
  Tensor fused = attn::layer_norm(x, normalized, w, b, 1e-5);
  Tensor composed = composed_layer_norm(x, k, w, b, 1e-5);
  CHECK(test::allclose(fused, composed, 1e-12));
  std::vector<Tensor> gf = grads(fused), gc = grads(composed);
  REQUIRE(gf.size() == gc.size());
  for (std::size_t i = 0; i < gf.size(); ++i) {
    CAPTURE(i);
    CHECK(test::allclose(gf[i], gc[i], 1e-12));
  }
}

}  // namespace

TEST_CASE("layer_norm equals the composed ops, with and without weight and bias, over one and two dims") {
  for (bool with_weight : {true, false})
    for (bool with_bias : {true, false}) {
      CAPTURE(with_weight);
      CAPTURE(with_bias);
      check_same_as_composed({4, 6}, 1, with_weight, with_bias);
      check_same_as_composed({2, 3, 5}, 1, with_weight, with_bias);
      check_same_as_composed({2, 3, 5}, 2, with_weight, with_bias);
    }
}

TEST_CASE("layer_norm: gradients against finite differences") {
  Tensor x = test::randn({3, 4, 5}, 5), w = test::randn({5}, 6), b = test::randn({5}, 7);
  CHECK_GRADCHECK([](const Inputs& in) { return attn::layer_norm(in[0], {5}, in[1], in[2]); }, {x, w, b});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::layer_norm(in[0], {4, 5}); }, {x});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::layer_norm(in[0], {5}, in[1]); }, {x, w});
}

TEST_CASE("layer_norm: each row has mean 0 and variance 1, also in float32, and constant rows give 0") {
  Tensor x = test::randn({8, 16}, 8, false) * 10.0 + 3.0;
  Tensor y = attn::layer_norm(x, {16}, Tensor(), Tensor(), 0.0);
  CHECK(test::allclose(attn::mean(y, {1}), attn::zeros({8}), 1e-12));
  CHECK(test::allclose(attn::mean(y * y, {1}), attn::ones({8}), 1e-12));
  Tensor y32 = attn::layer_norm(x.to(attn::Dtype::Float32), {16});
  CHECK(y32.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(y32.to(attn::Dtype::Float64), attn::layer_norm(x, {16}), 1e-5));
  CHECK(test::allclose(attn::layer_norm(attn::full({2, 3}, 7.0), {3}), attn::zeros({2, 3}), 0.0));
}

TEST_CASE("layer_norm rejects bad shapes, dtypes and eps") {
  Tensor x = attn::zeros({2, 3, 4});
  CHECK_THROWS_WITH_SUBSTR(attn::layer_norm(x, {3}), attn::ShapeError,
                           "layer_norm: expected input [..., 3], got [2, 3, 4]");
  CHECK_THROWS_WITH_SUBSTR(attn::layer_norm(x, {}), attn::ShapeError, "layer_norm: expected input");
  CHECK_THROWS_WITH_SUBSTR(attn::layer_norm(x, {4}, attn::ones({3})), attn::ShapeError,
                           "layer_norm: expected weight [4], got [3]");
  CHECK_THROWS_WITH_SUBSTR(attn::layer_norm(x, {4}, attn::ones({4}), attn::ones({2, 2})), attn::ShapeError,
                           "layer_norm: expected bias [4], got [2, 2]");
  CHECK_THROWS_AS(attn::layer_norm(x, {4}, attn::ones({4}, attn::Dtype::Float32)), attn::Error);
  CHECK_THROWS_WITH_SUBSTR(attn::layer_norm(x, {4}, Tensor(), Tensor(), -1.0), attn::ValueError,
                           "layer_norm: expected eps >= 0");
  CHECK_THROWS_WITH_SUBSTR(attn::layer_norm(attn::zeros({0, 4}), {4}), attn::ShapeError, "non-empty");
}
