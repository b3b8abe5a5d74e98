// dropout (core/ops/dropout.cpp).
#include "../helpers.hpp"

#include <cmath>
#include <limits>

using attn::Generator;
using attn::Tensor;

TEST_CASE("dropout: the same seed gives the same mask") {
  Tensor x = attn::ones({4, 5});
  Generator g1(42), g2(42), g3(43);
  Tensor a = attn::dropout(x, 0.5, true, g1), b = attn::dropout(x, 0.5, true, g2), c = attn::dropout(x, 0.5, true, g3);
  CHECK(test::allclose(a, b, 0.0));
  CHECK_FALSE(test::allclose(a, c, 0.0));
  CHECK_FALSE(test::allclose(a, attn::dropout(x, 0.5, true, g1), 0.0));  // the generator moved on
}

TEST_CASE("dropout: kept values scaled by 1 / (1 - p), mean preserved over 100k values") {
  const double p = 0.3;
  Generator gen(7);
  Tensor y = attn::dropout(attn::full({100000}, 2.0), p, true, gen);
  const auto v = y.to_array();
  std::size_t zeros = 0;
  for (double e : v) {
    if (e == 0.0) ++zeros;
    else CHECK(e == doctest::Approx(2.0 / (1.0 - p)).epsilon(1e-15));
  }
  const double dropped = static_cast<double>(zeros) / 1e5;
  CHECK(dropped == doctest::Approx(p).epsilon(0.02));          // std of the fraction is 0.0014
  CHECK(xt::mean(v)() == doctest::Approx(2.0).epsilon(0.01));  // E[y] = x
}

TEST_CASE("dropout: every position, the last of an odd length too, is dropped about p of the time") {
  // Values 2j and 2j + 1 share one 64-bit hash (32 bits each); an odd length's last value has its own.
  Tensor x = attn::ones({7});
  std::vector<int> dropped(7, 0);
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    Generator gen(seed);
    const auto y = attn::dropout(x, 0.5, true, gen).to_array();
    for (std::size_t i = 0; i < 7; ++i) dropped[i] += y(i) == 0.0;
  }
  for (std::size_t i = 0; i < 7; ++i) {
    CAPTURE(i);
    CHECK(dropped[i] > 160);  // 200 expected, std 10
    CHECK(dropped[i] < 240);
  }
}

TEST_CASE("dropout: identity in eval mode and for p = 0, zeros for p = 1") {
  Tensor x = test::randn({3, 4}, 1);
  Generator gen(0);
  CHECK(attn::dropout(x, 0.5, false, gen).node() == x.node());
  CHECK(attn::dropout(x, 0.0, true, gen).node() == x.node());
  Tensor z = attn::dropout(x, 1.0, true, gen);
  CHECK(test::allclose(z, attn::zeros({3, 4}), 0.0));
  attn::sum(z * 3.0).backward();
  CHECK(test::allclose(x.grad(), attn::zeros({3, 4}), 0.0));
}

TEST_CASE("dropout: a dropped inf or NaN gives NaN, as PyTorch's x * mask * scale") {
  // The mask is applied by a multiply (so that the loop vectorizes): inf * 0 = NaN.
  const double inf = std::numeric_limits<double>::infinity();
  Generator gen(3);
  const auto y = attn::dropout(attn::full({64}, inf), 0.5, true, gen).to_array();
  std::size_t kept = 0, dropped = 0;
  for (double v : y) {
    if (std::isnan(v)) ++dropped;
    else if (v == inf) ++kept;
  }
  CHECK(kept + dropped == 64);
  CHECK(kept > 0);
  CHECK(dropped > 0);
}

TEST_CASE("dropout: the gradient is the mask scale (0 or 1 / (1 - p))") {
  Tensor x = test::randn({50, 40}, 2);
  Generator gen(3);
  Tensor y = attn::dropout(x, 0.25, true, gen);
  attn::sum(y).backward();
  const auto xv = x.to_array(), yv = y.to_array(), g = x.grad().to_array();
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double expected = yv.flat(i) == 0.0 ? 0.0 : 1.0 / 0.75;
    CHECK(g.flat(i) == expected);
    CHECK(yv.flat(i) == doctest::Approx(xv.flat(i) * expected).epsilon(1e-15));
  }
  // gradcheck with a fresh generator of the same seed each call, so the mask is fixed
  CHECK_GRADCHECK(
      [](const std::vector<Tensor>& in) {
        Generator g(5);
        return attn::dropout(in[0], 0.4, true, g);
      },
      {test::randn({4, 6}, 4)});
}

TEST_CASE("dropout in float32") {
  Tensor x = attn::ones({1000}, attn::Dtype::Float32, true);
  Generator gen(9);
  Tensor y = attn::dropout(x, 0.5, true, gen);
  CHECK(y.dtype() == attn::Dtype::Float32);
  y.backward(attn::ones({1000}, attn::Dtype::Float32));
  CHECK(test::allclose(x.grad(), y, 0.0));  // x = 1, so y is the mask itself
}

TEST_CASE("dropout rejects p outside [0, 1]") {
  Tensor x = attn::zeros({2});
  CHECK_THROWS_WITH_SUBSTR(attn::dropout(x, -0.1), attn::ValueError, "dropout: expected a probability 0 <= p <= 1");
  CHECK_THROWS_WITH_SUBSTR(attn::dropout(x, 1.5, false), attn::ValueError, "got p = 1.5");
  CHECK_THROWS_WITH_SUBSTR(attn::dropout(x, std::nan("")), attn::ValueError, "dropout: expected a probability");
  CHECK_THROWS_AS(attn::dropout(Tensor(), 0.5), attn::ValueError);
}
