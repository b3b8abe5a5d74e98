#include "../helpers.hpp"

#include <xtensor/xmanipulation.hpp>

using attn::Tensor;
using Inputs = std::vector<Tensor>;

namespace {

bool all_finite(const Tensor& t) {
  for (double v : t.to_array())
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace

TEST_CASE("softmax: rows sum to one, and log_softmax is its log") {
  Tensor x = test::randn({3, 4}, 1, false);
  for (long dim : {0L, 1L, -1L}) {
    CAPTURE(dim);
    Tensor y = attn::softmax(x, dim);
    CHECK(test::allclose(attn::sum(y, {dim}), attn::ones({dim == 0 ? 4u : 3u}), 1e-15));
    CHECK(test::allclose(attn::log_softmax(x, dim), attn::log(y), 1e-14));
  }
  // softmax([0, log 3]) = [1/4, 3/4]
  Tensor two = attn::softmax(attn::tensor({0.0, std::log(3.0)}), 0);
  CHECK(test::allclose(two, attn::tensor({0.25, 0.75}), 1e-15));
}

TEST_CASE("softmax and log_softmax: gradients over every dim") {
  Tensor x = test::randn({2, 3, 4}, 2);
  for (long dim : {0L, 1L, 2L, -1L, -2L}) {
    CAPTURE(dim);
    CHECK_GRADCHECK([&](const Inputs& in) { return attn::softmax(in[0], dim); }, {x});
    CHECK_GRADCHECK([&](const Inputs& in) { return attn::log_softmax(in[0], dim); }, {x});
  }
  Tensor v = test::randn({5}, 3);
  CHECK_GRADCHECK([](const Inputs& in) { return attn::softmax(in[0], 0); }, {v});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::log_softmax(in[0], -1); }, {v});
  // An input made from a transposed copy.
  Tensor t(xt::xarray<double>(xt::transpose(test::randn({4, 3}, 4, false).data<double>())), true);
  CHECK_GRADCHECK([](const Inputs& in) { return attn::softmax(in[0], 1); }, {t});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::log_softmax(in[0], 0); }, {t});
}

TEST_CASE("softmax of inputs near 1000 gives no NaN or inf, forward or backward") {
  Tensor x = attn::tensor({{1000.0, 1001.0, 1002.0}, {-1000.0, 1000.0, 0.0}}, true);
  Tensor y = attn::softmax(x, 1);
  CHECK(all_finite(y));
  // Shifting a row changes nothing: row 0 is softmax([0, 1, 2]).
  CHECK(test::allclose(attn::select(y, 0, 0), attn::softmax(attn::tensor({0.0, 1.0, 2.0}), 0), 1e-15));
  CHECK(test::allclose(attn::select(y, 0, 1), attn::tensor({0.0, 1.0, 0.0}), 1e-15));
  Tensor ly = attn::log_softmax(x, 1);
  CHECK(all_finite(ly));
  CHECK(ly.to_array()(1, 0) == doctest::Approx(-2000.0).epsilon(1e-15));

  attn::sum(y * attn::tensor({{1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}})).backward();
  CHECK(all_finite(x.grad()));
  x.zero_grad();
  attn::sum(ly * attn::tensor({{1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}})).backward();
  CHECK(all_finite(x.grad()));

  Tensor f = attn::tensor({{1000.0, 1001.0, 1002.0}, {-1000.0, 1000.0, 0.0}}, false, attn::Dtype::Float32);
  CHECK(all_finite(attn::softmax(f, 1)));
  CHECK(all_finite(attn::log_softmax(f, 1)));
}

TEST_CASE("masked entries (-inf) get zero weight") {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor y = attn::softmax(attn::tensor({0.0, -inf, 0.0}), 0);
  CHECK(test::allclose(y, attn::tensor({0.5, 0.0, 0.5}), 1e-15));
}

TEST_CASE("a lane of -inf (every key masked) gives softmax 0 and log_softmax -inf on both paths, never NaN") {
  // attn's choice (docs/ops/softmax.md); PyTorch gives NaN. Both paths must agree.
  const double inf = std::numeric_limits<double>::infinity();
  for (attn::Dtype dtype : {attn::Dtype::Float64, attn::Dtype::Float32})
    for (bool fused : {true, false})
      for (long dim : {1L, 0L}) {
        CAPTURE(fused);
        CAPTURE(dim);
        attn::FusedOps guard(fused);
        // Row 1 (dim 1) or column 1 (dim 0) is entirely -inf; the rest is partly masked.
        xt::xarray<double> v = {{0.5, -inf, 1.0}, {-inf, -inf, -inf}, {2.0, -1.0, -inf}};
        if (dim == 0) v = xt::xarray<double>(xt::transpose(v));
        Tensor x = Tensor(v).to(dtype).requires_grad_();
        Tensor g = test::randn({3, 3}, 7, false).to(dtype);
        Tensor y = attn::softmax(x, dim), ly = attn::log_softmax(x, dim);
        auto yv = y.to(attn::Dtype::Float64).to_array(), lyv = ly.to(attn::Dtype::Float64).to_array();
        for (std::size_t j = 0; j < 3; ++j) {
          double w = dim == 1 ? yv(1, j) : yv(j, 1), lw = dim == 1 ? lyv(1, j) : lyv(j, 1);
          CHECK(w == 0.0);
          CHECK(lw == -inf);
        }
        CHECK(all_finite(y));
        CHECK(test::allclose(attn::sum(y, {dim}), attn::tensor({1.0, 0.0, 1.0}).to(dtype), 1e-6));
        y.backward(g);
        CHECK(all_finite(x.grad()));
        x.zero_grad();
        ly.backward(g);
        CHECK(all_finite(x.grad()));
      }
}

TEST_CASE("softmax in float32 agrees with float64") {
  Tensor x = test::randn({3, 5}, 5, false);
  Tensor g = test::randn({3, 5}, 6, false);
  for (bool log : {false, true}) {
    CAPTURE(log);
    auto f = [log](const Tensor& t) { return log ? attn::log_softmax(t, -1) : attn::softmax(t, -1); };
    Tensor a = x.detach().requires_grad_(), b = x.to(attn::Dtype::Float32).requires_grad_();
    Tensor ya = f(a), yb = f(b);
    CHECK(yb.dtype() == attn::Dtype::Float32);
    CHECK(test::allclose(ya, yb.to(attn::Dtype::Float64), 1e-5));
    ya.backward(g);
    yb.backward(g.to(attn::Dtype::Float32));
    CHECK(test::allclose(a.grad(), b.grad().to(attn::Dtype::Float64), 1e-5));
  }
}

TEST_CASE("softmax rejects bad dims") {
  CHECK_THROWS_WITH_SUBSTR(attn::softmax(attn::zeros({2, 3}), 2), attn::ShapeError,
                           "softmax: dim 2 is out of range for a 2-d tensor");
  CHECK_THROWS_WITH_SUBSTR(attn::log_softmax(attn::zeros({2, 3}), -3), attn::ShapeError, "log_softmax: dim -3");
  CHECK_THROWS_WITH_SUBSTR(attn::softmax(attn::zeros({}), 0), attn::ShapeError, "softmax: dim 0 is out of range");
  CHECK_THROWS_AS(attn::softmax(Tensor(), 0), attn::ValueError);
}

// ---- masked_softmax, the fused op --------------------------------------------

namespace {

// What attn::masked_softmax fuses, from core ops (nn/attention/masks.cpp explains it).
Tensor composed_masked_softmax(const Tensor& x, const attn::Mask& mask, long dim) {
  Tensor weights = attn::softmax(attn::masked_fill(x, mask, -1e30), dim);
  return attn::masked_fill(weights, mask, 0.0);
}

// A mask of `shape` blocking about a third of the entries, reproducibly.
attn::Mask some_mask(const attn::Shape& shape, std::uint64_t seed) {
  const auto u = test::uniform(shape, 0.0, 1.0, seed, false).to_array();
  attn::Mask m = attn::Mask::from_shape(shape);
  for (std::size_t i = 0; i < m.size(); ++i) m.flat(i) = u.flat(i) < 0.35;
  return m;
}

}  // namespace

TEST_CASE("masked_softmax: equals the composed masked_fill -> softmax -> masked_fill, value and gradient") {
  const attn::Shape shape{2, 3, 5};
  attn::Mask full = some_mask(shape, 11);
  full(0, 1, 0) = full(0, 1, 1) = full(0, 1, 2) = full(0, 1, 3) = full(0, 1, 4) = true;  // one row blocked entirely
  attn::Mask per_key = some_mask({2, 1, 5}, 12);  // broadcast over the queries, like a padding mask
  attn::Mask shared = some_mask({5}, 13);         // broadcast over everything
  for (const attn::Mask* mask : {&full, &per_key, &shared})
    for (long dim : {-1L, 1L, 0L})
      for (attn::Dtype dtype : {attn::Dtype::Float64, attn::Dtype::Float32}) {
        CAPTURE(dim);
        Tensor x = test::randn(shape, 14, false).to(dtype);
        x.requires_grad_(true);
        Tensor g = test::randn(shape, 15, false).to(dtype);
        Tensor fused = attn::masked_softmax(x, *mask, dim);
        Tensor composed = composed_masked_softmax(x, *mask, dim);
        const double tol = dtype == attn::Dtype::Float64 ? 1e-15 : 1e-7;
        CHECK(test::allclose(fused, composed, tol));
        attn::sum(fused * g).backward();
        const Tensor fused_grad = x.grad();
        x.zero_grad();
        attn::sum(composed * g).backward();
        CHECK(test::allclose(fused_grad, x.grad(), tol));
      }
  // The row blocked entirely is 0, not NaN.
  Tensor y = attn::masked_softmax(test::randn(shape, 16, false), full, -1);
  for (std::size_t j = 0; j < 5; ++j) CHECK(y.to_array()(0, 1, j) == 0.0);
}

TEST_CASE("masked_softmax: gradcheck, and a mask that does not broadcast is refused") {
  Tensor x = test::randn({3, 4}, 17);
  attn::Mask mask = some_mask({3, 4}, 18);
  mask(1, 0) = mask(1, 1) = mask(1, 2) = mask(1, 3) = true;
  for (long dim : {0L, 1L}) CHECK_GRADCHECK([&](const Inputs& in) { return attn::masked_softmax(in[0], mask, dim); }, {x});
  CHECK_THROWS_WITH_SUBSTR(attn::masked_softmax(x, some_mask({3, 5}, 19), -1), attn::ShapeError,
                           "masked_softmax: shapes [3, 5] and [3, 4] do not broadcast");
  CHECK_THROWS_WITH_SUBSTR(attn::masked_softmax(x, some_mask({2, 3, 4}, 19), -1), attn::ShapeError,
                           "masked_softmax: mask of shape [2, 3, 4] does not broadcast to x of shape [3, 4]");
  CHECK_THROWS_WITH_SUBSTR(attn::masked_softmax(x, mask, 2), attn::ShapeError, "masked_softmax: dim 2");
}
