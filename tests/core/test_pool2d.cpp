// max_pool2d and avg_pool2d (core/ops/pool2d.cpp): values and gradients against PyTorch,
// gradcheck, padding (-inf for max, counted zeros for avg), ties, bad shapes.
#include "../helpers.hpp"
#include "../reference.hpp"
#include "core/pool2d.hpp"

using attn::Tensor;
using Inputs = std::vector<Tensor>;

namespace {

attn::Size2 pair(const test::Reference& ref, const std::string& c, const std::string& name) {
  const xt::xarray<double> a = ref.array(c, name);
  return {std::size_t(a(0)), std::size_t(a(1))};
}

Tensor pool(const std::string& kind, const Tensor& x, attn::Size2 k, std::optional<attn::Size2> s, attn::Size2 p) {
  return kind == "max" ? attn::max_pool2d(x, k, s, p) : attn::avg_pool2d(x, k, s, p);
}

}  // namespace

TEST_CASE("max_pool2d and avg_pool2d equal PyTorch's, values and gradients") {
  const test::Reference ref("core_conv2d");
  for (const std::string kind : {"max", "avg"})
    for (const std::string shape : {"_2x2", "_3x3_stride2_pad1", "_nonsquare", "_overlap_odd"}) {
      const std::string c = kind + shape;
      CAPTURE(c);
      Tensor x = ref.tensor(c, "x", true);
      Tensor y = pool(kind, x, pair(ref, c, "kernel"), pair(ref, c, "stride"), pair(ref, c, "padding"));
      CHECK(y.op() == kind + "_pool2d");
      CHECK(test::allclose(y, ref.tensor(c, "y"), 1e-12));
      attn::sum(y * ref.tensor(c, "grad_y")).backward();
      CHECK(test::allclose(x.grad(), ref.tensor(c, "grad_x"), 1e-12));
    }
}

TEST_CASE("pooling's stride defaults to the kernel, in float32 too") {
  const Tensor x = test::randn({2, 3, 6, 4}, 1, false);
  CHECK(test::allclose(attn::max_pool2d(x, 2), attn::max_pool2d(x, 2, 2), 0.0));
  CHECK(test::allclose(attn::avg_pool2d(x, {3, 2}), attn::avg_pool2d(x, {3, 2}, attn::Size2{3, 2}), 0.0));
  CHECK(attn::max_pool2d(x, 2).shape() == attn::Shape{2, 3, 3, 2});
  const Tensor y32 = attn::avg_pool2d(x.to(attn::Dtype::Float32), 2, 1, 1);
  CHECK(y32.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(y32, attn::avg_pool2d(x, 2, 1, 1), 1e-6));
}

TEST_CASE("avg_pool2d counts padding in every window; max_pool2d never picks it") {
  // One 2x2 image of ones, kernel 2, stride 1, padding 1: the corner windows hold one real value
  // of four (1/4), the edges two (1/2), the middle four (1).
  const Tensor x = attn::ones({1, 1, 2, 2}, attn::Dtype::Float64, true);
  const Tensor avg = attn::avg_pool2d(x, 2, 1, 1);
  const xt::xarray<double> want = {{{{0.25, 0.5, 0.25}, {0.5, 1.0, 0.5}, {0.25, 0.5, 0.25}}}};
  CHECK(avg.to_array() == want);
  attn::sum(avg).backward();
  CHECK(x.grad().to_array() == xt::xarray<double>(xt::ones<double>({1, 1, 2, 2})));  // each pixel in 4 windows, 1/4 each
  // All values negative: padding (read as -inf, not 0) never wins.
  const Tensor neg = attn::full({1, 1, 2, 2}, -3.0);
  CHECK(attn::max_pool2d(neg, 2, 1, 1).to_array() == xt::xarray<double>(xt::full_like(want, -3.0)));
}

TEST_CASE("max_pool2d sends the gradient to the first maximum of a tie, as PyTorch") {
  const Tensor x(xt::xarray<double>{{{{1.0, 2.0}, {2.0, 0.0}}}}, true);
  attn::sum(attn::max_pool2d(x, 2)).backward();
  CHECK(x.grad().to_array() == xt::xarray<double>{{{{0.0, 1.0}, {0.0, 0.0}}}});
}

TEST_CASE("pooling gradcheck in double, stride, padding, non-square kernels, N > 1") {
  struct Case {
    attn::Shape x;
    attn::Size2 k;
    std::optional<attn::Size2> s;
    attn::Size2 p;
  };
  const Case cases[] = {
      {{2, 3, 4, 6}, {2, 2}, std::nullopt, {0, 0}},
      {{2, 2, 7, 5}, {3, 3}, attn::Size2{2, 2}, {1, 1}},
      {{3, 1, 5, 6}, {2, 3}, attn::Size2{1, 2}, {1, 1}},
  };
  std::uint64_t seed = 1;
  for (const Case& c : cases)
    for (const std::string kind : {"max", "avg"}) {
      CAPTURE(kind);
      CAPTURE(attn::shape_str(c.x));
      // distinct values (a random normal sample): no ties, so max is differentiable where it is checked
      const Tensor x = test::randn(c.x, seed++);
      CHECK_GRADCHECK([&](const Inputs& in) { return pool(kind, in[0], c.k, c.s, c.p); }, {x});
    }
}

TEST_CASE("pooling refuses bad shapes, naming the op and the shapes") {
  const Tensor x = test::randn({2, 3, 5, 5}, 1, false);
  for (const std::string kind : {"max", "avg"}) {
    CAPTURE(kind);
    const std::string op = kind + "_pool2d: ";
    CHECK_THROWS_WITH_SUBSTR(pool(kind, test::randn({3, 5, 5}, 2, false), {2, 2}, std::nullopt, {0, 0}),
                             attn::ShapeError, op + "expected input [N, C, H, W], got [3, 5, 5]");
    CHECK_THROWS_WITH_SUBSTR(pool(kind, x, {6, 2}, std::nullopt, {0, 0}), attn::ShapeError,
                             op + "kernel (6, 2) is larger than the padded input (5, 5) of input [2, 3, 5, 5]");
    CHECK_THROWS_WITH_SUBSTR(pool(kind, x, {2, 2}, attn::Size2{1, 0}, {0, 0}), attn::ShapeError,
                             op + "stride must be at least 1, got (1, 0)");
    CHECK_THROWS_WITH_SUBSTR(pool(kind, x, {0, 2}, std::nullopt, {0, 0}), attn::ShapeError,
                             op + "kernel must be at least 1x1, got (0, 2)");
    CHECK_THROWS_WITH_SUBSTR(pool(kind, x, {3, 2}, std::nullopt, {1, 2}), attn::ShapeError,
                             op + "padding (1, 2) must be at most half the kernel (3, 2) for input [2, 3, 5, 5]");
    // only N may be 0: no channel, row or column is refused, as PyTorch does
    for (const attn::Shape& empty : {attn::Shape{1, 0, 4, 4}, attn::Shape{1, 1, 0, 4}, attn::Shape{1, 1, 4, 0}})
      CHECK_THROWS_WITH_SUBSTR(pool(kind, attn::zeros(empty), {1, 1}, std::nullopt, {0, 0}), attn::ShapeError,
                               op + "expected an input with at least one channel, row and column (only N may be 0), got " +
                                   attn::shape_str(empty));
  }
}

TEST_CASE("pooling over no images (N = 0): an empty output and an empty gradient") {
  for (const std::string kind : {"max", "avg"}) {
    CAPTURE(kind);
    Tensor x = attn::zeros({0, 2, 4, 4}, true);
    Tensor y = pool(kind, x, {2, 2}, std::nullopt, {0, 0});
    CHECK(y.shape() == attn::Shape{0, 2, 2, 2});
    attn::sum(y).backward();
    CHECK(x.grad().shape() == attn::Shape{0, 2, 4, 4});
  }
}
