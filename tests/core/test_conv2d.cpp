// conv2d (core/ops/conv2d.cpp, and its fused path core/backend/conv2d.cpp): values and gradients
// against PyTorch, gradcheck of every input, the fused path against the composed one, bad shapes.
#include "../helpers.hpp"
#include "../reference.hpp"
#include "core/conv2d.hpp"

using attn::Tensor;
using Inputs = std::vector<Tensor>;

namespace {

attn::Size2 pair(const test::Reference& ref, const std::string& c, const std::string& name) {
  const xt::xarray<double> a = ref.array(c, name);
  return {std::size_t(a(0)), std::size_t(a(1))};
}

const char* const kCases[] = {"conv_3x3", "conv_stride2_pad1", "conv_nonsquare", "conv_odd", "conv_no_bias", "conv_1x1"};

}  // namespace

TEST_CASE("conv2d equals torch.nn.functional.conv2d, values and gradients, on both paths") {
  const test::Reference ref("core_conv2d");
  for (bool fused : {false, true}) {
    attn::FusedOps guard(fused);
    for (const std::string c : kCases) {
      CAPTURE(fused);
      CAPTURE(c);
      Tensor x = ref.tensor(c, "x", true), w = ref.tensor(c, "weight", true);
      Tensor b = ref.has(c, "bias") ? ref.tensor(c, "bias", true) : Tensor();
      Tensor y = attn::conv2d(x, w, b, pair(ref, c, "stride"), pair(ref, c, "padding"));
      CHECK(y.op() == "conv2d");
      CHECK(test::allclose(y, ref.tensor(c, "y"), 1e-12));
      attn::sum(y * ref.tensor(c, "grad_y")).backward();
      CHECK(test::allclose(x.grad(), ref.tensor(c, "grad_x"), 1e-12));
      CHECK(test::allclose(w.grad(), ref.tensor(c, "grad_weight"), 1e-12));
      if (b.defined()) CHECK(test::allclose(b.grad(), ref.tensor(c, "grad_bias"), 1e-12));
    }
  }
}

TEST_CASE("conv2d gradcheck in double: input, weight and bias, stride, padding, non-square kernels, N > 1") {
  struct Case {
    attn::Shape x, w;
    attn::Size2 stride, padding;
  };
  const Case cases[] = {
      {{2, 3, 5, 4}, {2, 3, 3, 3}, {1, 1}, {0, 0}},
      {{2, 2, 6, 5}, {3, 2, 3, 3}, {2, 2}, {1, 1}},
      {{3, 2, 5, 6}, {2, 2, 2, 3}, {1, 2}, {1, 0}},
      {{1, 1, 4, 7}, {2, 1, 3, 1}, {2, 3}, {0, 1}},
  };
  for (bool fused : {false, true}) {
    attn::FusedOps guard(fused);
    std::uint64_t seed = 1;
    for (const Case& c : cases) {
      CAPTURE(fused);
      CAPTURE(attn::shape_str(c.x));
      CAPTURE(attn::shape_str(c.w));
      const Tensor x = test::randn(c.x, seed++), w = test::randn(c.w, seed++), b = test::randn({c.w[0]}, seed++);
      CHECK_GRADCHECK([&](const Inputs& in) { return attn::conv2d(in[0], in[1], in[2], c.stride, c.padding); },
                      {x, w, b});
      CHECK_GRADCHECK([&](const Inputs& in) { return attn::conv2d(in[0], in[1], Tensor(), c.stride, c.padding); },
                      {x, w});
    }
  }
}

TEST_CASE("conv2d's fused path equals the composed one, values and gradients, in float64 and float32") {
  const Tensor x0 = test::randn({3, 4, 9, 8}, 11), w0 = test::randn({5, 4, 3, 2}, 12), b0 = test::randn({5}, 13);
  for (attn::Dtype dtype : {attn::Dtype::Float64, attn::Dtype::Float32}) {
    const double tol = dtype == attn::Dtype::Float64 ? 1e-11 : 2e-4;
    CAPTURE(attn::dtype_name(dtype));
    std::vector<Tensor> ys, grads;
    for (bool fused : {false, true}) {
      attn::FusedOps guard(fused);
      Tensor x = x0.detach().to(dtype), w = w0.detach().to(dtype), b = b0.detach().to(dtype);
      for (Tensor* t : {&x, &w, &b}) t->requires_grad_(true);
      const Tensor y = attn::conv2d(x, w, b, {2, 1}, {1, 2});
      CHECK(y.dtype() == dtype);
      CHECK(y.shape() == attn::Shape{3, 5, 5, 11});
      attn::sum(y * test::randn(y.shape(), 14, false).to(dtype)).backward();
      ys.push_back(y);
      for (const Tensor& t : {x, w, b}) grads.push_back(t.grad());
    }
    CHECK(test::allclose(ys[0], ys[1], tol));
    for (std::size_t i = 0; i < 3; ++i) {
      CAPTURE(i);
      CHECK(test::allclose(grads[i], grads[3 + i], tol));
    }
  }
}

TEST_CASE("conv2d refuses bad shapes, naming the op and the shapes") {
  const Tensor x = test::randn({2, 3, 5, 5}, 1, false), w = test::randn({4, 3, 3, 3}, 2, false);
  for (bool fused : {false, true}) {
    attn::FusedOps guard(fused);
    CHECK_THROWS_WITH_SUBSTR(attn::conv2d(test::randn({3, 5, 5}, 3, false), w), attn::ShapeError,
                             "conv2d: expected input [N, C, H, W], got [3, 5, 5]");
    CHECK_THROWS_WITH_SUBSTR(attn::conv2d(x, test::randn({4, 2, 3, 3}, 4, false)), attn::ShapeError,
                             "conv2d: expected weight [O, 3, kH, kW] for input [2, 3, 5, 5], got weight [4, 2, 3, 3]");
    CHECK_THROWS_WITH_SUBSTR(attn::conv2d(x, test::randn({4, 3, 3}, 4, false)), attn::ShapeError,
                             "got weight [4, 3, 3]");
    CHECK_THROWS_WITH_SUBSTR(attn::conv2d(x, w, test::randn({3}, 5, false)), attn::ShapeError,
                             "conv2d: expected bias [4] for weight [4, 3, 3, 3], got bias [3]");
    CHECK_THROWS_WITH_SUBSTR(attn::conv2d(x, test::randn({4, 3, 6, 3}, 6, false), Tensor(), 1, 0), attn::ShapeError,
                             "conv2d: kernel (6, 3) is larger than the padded input (5, 5) of input [2, 3, 5, 5]");
    CHECK_NOTHROW(attn::conv2d(x, test::randn({4, 3, 6, 3}, 6, false), Tensor(), 1, 1));  // padded to 7 x 7
    CHECK_THROWS_WITH_SUBSTR(attn::conv2d(x, w, Tensor(), {0, 1}, {0, 0}), attn::ShapeError,
                             "conv2d: stride must be at least 1, got (0, 1) for input [2, 3, 5, 5]");
    CHECK_THROWS_WITH_SUBSTR(attn::conv2d(x.to(attn::Dtype::Float32), w), attn::ValueError, "conv2d");
    // only N may be 0: no channel, or no row or column even with padding, is refused, as PyTorch does
    const std::string empty = "conv2d: expected an input with at least one channel, row and column (only N may be 0), got ";
    CHECK_THROWS_WITH_SUBSTR(attn::conv2d(attn::zeros({1, 0, 4, 4}), attn::zeros({3, 0, 3, 3}), attn::zeros({3})),
                             attn::ShapeError, empty + "[1, 0, 4, 4]");
    CHECK_THROWS_WITH_SUBSTR(attn::conv2d(attn::zeros({1, 1, 0, 4}), attn::zeros({3, 1, 1, 1}), Tensor(), 1, 1),
                             attn::ShapeError, empty + "[1, 1, 0, 4]");
    CHECK_THROWS_WITH_SUBSTR(attn::conv2d(attn::zeros({1, 1, 4, 0}), attn::zeros({3, 1, 1, 1}), Tensor(), 1, 1),
                             attn::ShapeError, empty + "[1, 1, 4, 0]");
  }
}

TEST_CASE("conv2d over no images (N = 0): an empty output and zero gradients, on both paths") {
  for (bool fused : {false, true}) {
    attn::FusedOps guard(fused);
    CAPTURE(fused);
    Tensor x = attn::zeros({0, 2, 4, 4}, true), w = test::randn({3, 2, 3, 3}, 1), b = test::randn({3}, 2);
    Tensor y = attn::conv2d(x, w, b, 1, 1);
    CHECK(y.shape() == attn::Shape{0, 3, 4, 4});
    attn::sum(y).backward();
    CHECK(x.grad().shape() == attn::Shape{0, 2, 4, 4});
    CHECK(test::allclose(w.grad(), attn::zeros({3, 2, 3, 3}), 0.0));
    CHECK(test::allclose(b.grad(), attn::zeros({3}), 0.0));
  }
}
