#include "../helpers.hpp"

#include <cmath>

#include <xtensor/xmanipulation.hpp>

using attn::Tensor;
using Inputs = std::vector<Tensor>;

namespace {

// A float64 input whose values come from a transposed copy of another array
// (the memory order of the original is not the order of the result).
Tensor transposed_input(const attn::Shape& shape, std::uint64_t seed) {
  xt::xarray<double> t = xt::transpose(test::randn(shape, seed, false).data<double>());
  return Tensor(t, true);
}

// f in float32 agrees with f in float64 within 1e-5, values and input gradients.
template <class F>
void check_float32_matches(F f, const Tensor& x64) {
  Tensor a = x64.detach().requires_grad_(), b = x64.detach().to(attn::Dtype::Float32).requires_grad_();
  Tensor ya = f(a), yb = f(b);
  CHECK(yb.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(ya, yb.to(attn::Dtype::Float64), 1e-5));
  attn::sum(ya * ya).backward();
  attn::sum(yb * yb).backward();
  CHECK(test::allclose(a.grad(), b.grad().to(attn::Dtype::Float64), 1e-5));
}

}  // namespace

TEST_CASE("sum and mean: values, keepdim and negative dims") {
  Tensor x = attn::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  CHECK(attn::sum(x).item() == 21.0);
  CHECK(attn::mean(x).item() == 3.5);
  CHECK(test::allclose(attn::sum(x, {0}), attn::tensor({5.0, 7.0, 9.0})));
  Tensor rows = attn::sum(x, {-1}, true);  // [2, 1]
  CHECK(rows.shape() == attn::Shape{2, 1});
  CHECK(rows.to_array()(0, 0) == 6.0);
  CHECK(rows.to_array()(1, 0) == 15.0);
  CHECK(test::allclose(attn::mean(x, {1}), attn::tensor({2.0, 5.0})));
  CHECK(attn::mean(x, {0, -1}, true).shape() == attn::Shape{1, 1});
}

TEST_CASE("sum and mean: gradients") {
  Tensor x = test::randn({2, 3, 4}, 1);
  for (bool keepdim : {false, true}) {
    CAPTURE(keepdim);
    CHECK_GRADCHECK([&](const Inputs& in) { return attn::sum(in[0], {1}, keepdim); }, {x});
    CHECK_GRADCHECK([&](const Inputs& in) { return attn::sum(in[0], {-1, 0}, keepdim); }, {x});
    CHECK_GRADCHECK([&](const Inputs& in) { return attn::mean(in[0], {-2}, keepdim); }, {x});
    CHECK_GRADCHECK([&](const Inputs& in) { return attn::mean(in[0], {0, 2}, keepdim); }, {x});
  }
  CHECK_GRADCHECK([](const Inputs& in) { return attn::sum(in[0]); }, {x});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::mean(in[0]); }, {transposed_input({3, 4}, 2)});
}

TEST_CASE("max over all elements: value, and the gradient goes to the first maximum") {
  Tensor x = attn::tensor({{1.0, 3.0}, {3.0, 2.0}}, true);
  Tensor m = attn::max(x);
  CHECK(m.shape().empty());
  CHECK(m.item() == 3.0);
  m.backward();
  CHECK(test::allclose(x.grad(), attn::tensor({{0.0, 1.0}, {0.0, 0.0}})));
  CHECK_GRADCHECK([](const Inputs& in) { return attn::max(in[0]); }, {test::randn({3, 4}, 3)});
}

TEST_CASE("max over a dim: values, first maximum on ties, keepdim, negative dims") {
  Tensor x = attn::tensor({{1.0, 5.0, 5.0}, {7.0, 2.0, 7.0}}, true);
  CHECK(test::allclose(attn::max(x, 1), attn::tensor({5.0, 7.0})));
  CHECK(test::allclose(attn::max(x, 0, true), attn::tensor({{7.0, 5.0, 7.0}})));
  attn::sum(attn::max(x, -1)).backward();
  CHECK(test::allclose(x.grad(), attn::tensor({{0.0, 1.0, 0.0}, {1.0, 0.0, 0.0}})));

  Tensor y = test::randn({2, 3, 4}, 4);
  for (bool keepdim : {false, true})
    for (long dim : {0L, 1L, 2L, -1L, -3L}) {
      CAPTURE(keepdim);
      CAPTURE(dim);
      CHECK_GRADCHECK([&](const Inputs& in) { return attn::max(in[0], dim, keepdim); }, {y});
    }
  CHECK_GRADCHECK([](const Inputs& in) { return attn::max(in[0], 0); }, {test::randn({5}, 5)});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::max(in[0], 1); }, {transposed_input({4, 3}, 6)});
}

TEST_CASE("max propagates NaN, as PyTorch does") {
  const double nan = std::nan("");
  CHECK(std::isnan(attn::max(attn::tensor({1.0, nan, 2.0})).item()));
  CHECK(std::isnan(attn::max(attn::tensor({nan, 1.0, 2.0})).item()));
  const auto rows = attn::max(attn::tensor({{1.0, 2.0}, {nan, 0.0}, {3.0, nan}}), 1).to_array();
  CHECK(rows(0) == 2.0);
  CHECK(std::isnan(rows(1)));
  CHECK(std::isnan(rows(2)));
}

TEST_CASE("logsumexp: values, stability, gradients") {
  Tensor x = attn::tensor({{0.0, std::log(3.0)}, {1000.0, 1000.0}});
  Tensor y = attn::logsumexp(x, 1);
  CHECK(y.to_array()(0) == doctest::Approx(std::log(4.0)).epsilon(1e-15));
  CHECK(y.to_array()(1) == doctest::Approx(1000.0 + std::log(2.0)).epsilon(1e-15));  // no overflow
  CHECK(attn::logsumexp(x, 0, true).shape() == attn::Shape{1, 2});
  // A row of -inf (everything masked) gives -inf, not NaN.
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(attn::logsumexp(attn::tensor({-inf, -inf}), 0).item() == -inf);

  Tensor z = test::randn({2, 3, 4}, 7);
  for (bool keepdim : {false, true})
    for (long dim : {0L, 1L, -1L}) {
      CAPTURE(keepdim);
      CAPTURE(dim);
      CHECK_GRADCHECK([&](const Inputs& in) { return attn::logsumexp(in[0], dim, keepdim); }, {z});
    }
  CHECK_GRADCHECK([](const Inputs& in) { return attn::logsumexp(in[0], -1); }, {test::randn({6}, 8)});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::logsumexp(in[0], 0); }, {transposed_input({3, 5}, 9)});

  // Large inputs: the gradient (a softmax) is finite too.
  Tensor big = attn::tensor({1000.0, 1001.0}, true);
  attn::logsumexp(big, 0).backward();
  CHECK(big.grad().to_array()(1) == doctest::Approx(1.0 / (1.0 + std::exp(-1.0))).epsilon(1e-14));
}

TEST_CASE("reductions in float32 agree with float64") {
  Tensor x = test::randn({3, 5}, 10, false);
  check_float32_matches([](const Tensor& t) { return attn::sum(t, {1}); }, x);
  check_float32_matches([](const Tensor& t) { return attn::mean(t, {0}, true); }, x);
  check_float32_matches([](const Tensor& t) { return attn::max(t, -1); }, x);
  check_float32_matches([](const Tensor& t) { return attn::max(t); }, x);
  check_float32_matches([](const Tensor& t) { return attn::logsumexp(t, 1); }, x);
}

TEST_CASE("reductions reject bad dims and empty inputs") {
  Tensor x = attn::zeros({2, 3});
  CHECK_THROWS_WITH_SUBSTR(attn::max(x, 2), attn::ShapeError, "max: dim 2 is out of range for a 2-d tensor");
  CHECK_THROWS_WITH_SUBSTR(attn::logsumexp(x, -3), attn::ShapeError, "logsumexp: dim -3 is out of range");
  CHECK_THROWS_WITH_SUBSTR(attn::sum(x, {0, -2}), attn::ShapeError, "sum: a dim appears twice");
  CHECK_THROWS_WITH_SUBSTR(attn::max(attn::zeros({0})), attn::ShapeError, "max: cannot take the max of an empty tensor");
  CHECK_THROWS_WITH_SUBSTR(attn::max(attn::zeros({2, 0}), 1), attn::ShapeError, "max: cannot reduce dim 1 of size 0");
  CHECK_THROWS_WITH_SUBSTR(attn::max(attn::zeros({}), 0), attn::ShapeError, "max: dim 0 is out of range for a 0-d");
  CHECK_THROWS_AS(attn::max(Tensor()), attn::ValueError);
}
