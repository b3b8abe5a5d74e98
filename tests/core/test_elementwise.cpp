#include "../helpers.hpp"

#include <cmath>

using attn::Tensor;
using Inputs = std::vector<Tensor>;

TEST_CASE("binary ops: gradients, same shapes and broadcast") {
  auto check_binary = [](auto op) {
    CHECK_GRADCHECK([&](const Inputs& in) { return op(in[0], in[1]); },
                    {test::randn({2, 3}, 1), test::uniform({2, 3}, 0.5, 2.0, 2)});
    CHECK_GRADCHECK([&](const Inputs& in) { return op(in[0], in[1]); },  // [3] broadcast over rows
                    {test::randn({2, 3}, 3), test::uniform({3}, 0.5, 2.0, 4)});
    CHECK_GRADCHECK([&](const Inputs& in) { return op(in[0], in[1]); },  // [2,1] x [1,3] -> [2,3]
                    {test::randn({2, 1}, 5), test::uniform({1, 3}, 0.5, 2.0, 6)});
    CHECK_GRADCHECK([&](const Inputs& in) { return op(in[0], in[1]); },  // scalar tensor
                    {test::randn({4, 2, 3}, 7), test::uniform({}, 0.5, 2.0, 8)});
  };
  SUBCASE("add") { check_binary([](const Tensor& a, const Tensor& b) { return a + b; }); }
  SUBCASE("sub") { check_binary([](const Tensor& a, const Tensor& b) { return a - b; }); }
  SUBCASE("mul") { check_binary([](const Tensor& a, const Tensor& b) { return a * b; }); }
  SUBCASE("div") { check_binary([](const Tensor& a, const Tensor& b) { return a / b; }); }
}

TEST_CASE("unary ops: gradients") {
  Tensor x = test::randn({3, 4}, 11);
  Tensor pos = test::uniform({3, 4}, 0.2, 3.0, 12);
  auto check_unary = [](auto op, const Tensor& input) {
    CHECK_GRADCHECK([&](const Inputs& in) { return op(in[0]); }, {input});
  };
  check_unary([](const Tensor& t) { return -t; }, x);
  check_unary([](const Tensor& t) { return attn::pow(t, 3.0); }, x);
  check_unary([](const Tensor& t) { return attn::pow(t, -1.5); }, pos);
  check_unary([](const Tensor& t) { return attn::exp(t); }, x);
  check_unary([](const Tensor& t) { return attn::log(t); }, pos);
  check_unary([](const Tensor& t) { return attn::sqrt(t); }, pos);
  check_unary([](const Tensor& t) { return attn::abs(t); }, x);
  check_unary([](const Tensor& t) { return attn::tanh(t); }, x);
  check_unary([](const Tensor& t) { return attn::sigmoid(t); }, x);
  check_unary([](const Tensor& t) { return attn::relu(t); }, x);
  check_unary([](const Tensor& t) { return attn::gelu(t); }, x);
  check_unary([](const Tensor& t) { return 2.0 - t / 3.0 + 1.0; }, x);
  check_unary([](const Tensor& t) { return 2.0 / t; }, pos);
}

TEST_CASE("forward values match the formulas") {
  Tensor x = attn::tensor({-1.0, 0.0, 2.0});
  CHECK(test::allclose(attn::relu(x), attn::tensor({0.0, 0.0, 2.0})));
  CHECK(attn::sigmoid(x).to_array()(1) == 0.5);
  CHECK(attn::gelu(x).to_array()(2) == doctest::Approx(1.9544997361036416).epsilon(1e-14));
}

TEST_CASE("negative powers of zero are infinite, as in PyTorch") {
  // xsimd 8.1's pow(0, p < 0) gives 0 (xtensor-stack/xsimd#995); attn must not.
  for (attn::Dtype dtype : {attn::Dtype::Float64, attn::Dtype::Float32}) {
    Tensor x = attn::tensor({0.0, 2.0, 0.0, 4.0, 0.0}, true, dtype);
    const auto y = attn::pow(x, -1.0).to(attn::Dtype::Float64).to_array();
    CHECK(std::isinf(y(0)));
    CHECK(std::isinf(y(4)));  // the last lane too, past the SIMD batches
    CHECK(y(1) == 0.5);
    CHECK(std::isinf((1.0 / x).to(attn::Dtype::Float64).to_array()(2)));
    attn::sum(attn::pow(x, 0.5)).backward();  // d sqrt(x)/dx = 0.5 x^-0.5: inf at 0
    CHECK(std::isinf(x.grad().to(attn::Dtype::Float64).to_array()(0)));
  }
}

TEST_CASE("shapes that do not broadcast are rejected with both shapes named") {
  Tensor a = attn::zeros({2, 3}), b = attn::zeros({4});
  CHECK_THROWS_WITH_SUBSTR(a + b, attn::ShapeError, "add: shapes [2, 3] and [4] do not broadcast");
  CHECK_THROWS_WITH_SUBSTR(a * b, attn::ShapeError, "mul:");
  CHECK_THROWS_AS(a - Tensor(), attn::ValueError);
}

TEST_CASE("float32 ops give float32 results") {
  Tensor x = attn::tensor({0.5, 1.5}, true, attn::Dtype::Float32);
  Tensor y = attn::tanh(x) * attn::exp(x);
  CHECK(y.dtype() == attn::Dtype::Float32);
  attn::sum(y).backward();
  const double v = 0.5, expected = (1 - std::tanh(v) * std::tanh(v)) * std::exp(v) + std::tanh(v) * std::exp(v);
  CHECK(x.grad().to_array()(0) == doctest::Approx(expected).epsilon(1e-6));
}
