// transpose, permute, reshape, unsqueeze, squeeze, expand (core/ops/shape.cpp).
#include "../helpers.hpp"

using attn::Shape;
using attn::Tensor;
using Inputs = std::vector<Tensor>;

namespace {
// 0, 1, 2, ... in the given shape.
Tensor iota(const Shape& shape, bool requires_grad = false) {
  xt::xarray<double> a = xt::arange<double>(0.0, static_cast<double>(attn::zeros(shape).numel()));
  a.reshape(shape);
  return Tensor(a, requires_grad);
}
}  // namespace

TEST_CASE("transpose and permute: values") {
  Tensor x = attn::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  CHECK(test::allclose(attn::transpose(x, 0, 1), attn::tensor({{1.0, 4.0}, {2.0, 5.0}, {3.0, 6.0}})));
  CHECK(test::allclose(attn::transpose(x, -1, -2), attn::transpose(x, 1, 0)));
  CHECK(attn::transpose(x, 0, 1).is_leaf());  // no input requires grad: nothing recorded

  Tensor y = attn::permute(iota({2, 3, 4}), {2, 0, 1});  // y[k][i][j] = x[i][j][k] = 12 i + 4 j + k
  CHECK(y.shape() == Shape{4, 2, 3});
  const auto v = y.to_array();
  CHECK(v(3, 1, 2) == 12 * 1 + 4 * 2 + 3);
  CHECK(v(1, 0, 1) == 4 * 1 + 1);
}

TEST_CASE("transpose and permute: gradients, negative dims") {
  CHECK_GRADCHECK([](const Inputs& in) { return attn::transpose(in[0], -1, 0); }, {test::randn({2, 3, 4}, 1)});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::permute(in[0], {1, -1, 0}); }, {test::randn({2, 3, 4}, 2)});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::permute(in[0], {3, 1, 0, 2}); }, {test::randn({2, 1, 3, 2}, 3)});
  // the backward of permute is the inverse permutation, not the same one
  Tensor x = iota({2, 3, 4}, true);
  Tensor y = attn::permute(x, {1, 2, 0});
  y.backward(iota({3, 4, 2}));
  CHECK(test::allclose(x.grad(), attn::permute(iota({3, 4, 2}), {2, 0, 1})));
}

TEST_CASE("reshape, unsqueeze, squeeze: values and gradients") {
  Tensor x = iota({2, 3, 4});
  CHECK(attn::reshape(x, {4, -1}).shape() == Shape{4, 6});
  CHECK(attn::reshape(x, {-1}).shape() == Shape{24});
  CHECK(attn::reshape(x, {2, 12}).to_array()(1, 0) == 12.0);  // row-major order is kept
  CHECK(attn::reshape(attn::tensor({5.0}), {}).shape() == Shape{});
  CHECK(attn::unsqueeze(x, 0).shape() == Shape{1, 2, 3, 4});
  CHECK(attn::unsqueeze(x, -1).shape() == Shape{2, 3, 4, 1});
  CHECK(attn::unsqueeze(x, 3).shape() == Shape{2, 3, 4, 1});
  CHECK(attn::unsqueeze(x, -2).shape() == Shape{2, 3, 1, 4});
  CHECK(attn::squeeze(iota({2, 1, 3}), -2).shape() == Shape{2, 3});

  CHECK_GRADCHECK([](const Inputs& in) { return attn::reshape(in[0], {3, -1}); }, {test::randn({2, 3, 2}, 4)});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::unsqueeze(in[0], -1); }, {test::randn({2, 3}, 5)});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::squeeze(in[0], 1); }, {test::randn({2, 1, 3}, 6)});
}

TEST_CASE("expand: broadcast copy, gradient summed over the copies") {
  Tensor row = attn::tensor({1.0, 2.0, 3.0}, true);
  Tensor y = attn::expand(row, {2, 3});
  CHECK(test::allclose(y, attn::tensor({{1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}})));
  attn::sum(y).backward();
  CHECK(test::allclose(row.grad(), attn::tensor({2.0, 2.0, 2.0})));

  CHECK_GRADCHECK([](const Inputs& in) { return attn::expand(in[0], {2, 3}); }, {test::randn({3}, 7)});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::expand(in[0], {2, 4, 3}); }, {test::randn({2, 1, 3}, 8)});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::expand(in[0], {2, 2, 2}); }, {test::randn({1}, 9)});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::expand(in[0], {2, 3}); }, {test::randn({2, 3}, 10)});
}

TEST_CASE("chains of shape ops: permute then reshape then transpose") {
  CHECK_GRADCHECK(
      [](const Inputs& in) {
        Tensor t = attn::permute(in[0], {0, 2, 1});          // [2, 4, 3]
        t = attn::reshape(t, {-1, 3});                       // [8, 3]
        return attn::transpose(t, 0, 1) * in[1];             // [3, 8] * [8]
      },
      {test::randn({2, 3, 4}, 11), test::randn({8}, 12)});
}

TEST_CASE("float32 shape ops") {
  Tensor x = attn::tensor({{1.0, 2.0}, {3.0, 4.0}}, true, attn::Dtype::Float32);
  Tensor y = attn::reshape(attn::transpose(x, 0, 1), {-1}) * attn::tensor({1.0, 10.0, 100.0, 1000.0}, false, attn::Dtype::Float32);
  CHECK(y.dtype() == attn::Dtype::Float32);
  attn::sum(y).backward();
  CHECK(test::allclose(x.grad(), attn::tensor({{1.0, 100.0}, {10.0, 1000.0}}, false, attn::Dtype::Float32)));
}

TEST_CASE("shape ops reject bad input with a clear message") {
  Tensor x = attn::zeros({2, 3});
  CHECK_THROWS_WITH_SUBSTR(attn::transpose(x, 0, 2), attn::ShapeError, "transpose: dim 2 is out of range for a 2-d tensor");
  CHECK_THROWS_WITH_SUBSTR(attn::permute(x, {0}), attn::ShapeError, "permute: expected 2 dims for a tensor of shape [2, 3], got [0]");
  CHECK_THROWS_WITH_SUBSTR(attn::permute(x, {1, -1}), attn::ShapeError, "permute: dims [1, -1] repeat dim 1");
  CHECK_THROWS_WITH_SUBSTR(attn::reshape(x, {4, 2}), attn::ShapeError,
                           "reshape: cannot reshape a tensor of shape [2, 3] (6 elements) into [4, 2]");
  CHECK_THROWS_WITH_SUBSTR(attn::reshape(x, {4, -1}), attn::ShapeError, "into [4, -1]");
  CHECK_THROWS_WITH_SUBSTR(attn::reshape(x, {-1, -1}), attn::ShapeError, "reshape: only one dim may be -1");
  CHECK_THROWS_WITH_SUBSTR(attn::reshape(x, {-2, -3}), attn::ShapeError, "reshape: invalid size -2");
  CHECK_THROWS_WITH_SUBSTR(attn::unsqueeze(x, 3), attn::ShapeError, "unsqueeze: dim 3 is out of range for a new dim of a 2-d tensor (expected -3 <= dim <= 2)");
  CHECK_THROWS_WITH_SUBSTR(attn::squeeze(x, 1), attn::ShapeError, "squeeze: dim 1 has size 3, expected 1 (shape [2, 3])");
  CHECK_THROWS_WITH_SUBSTR(attn::expand(x, {4, 3}), attn::ShapeError, "expand: cannot expand shape [2, 3] to [4, 3]");
  CHECK_THROWS_WITH_SUBSTR(attn::expand(x, {3}), attn::ShapeError, "expand: cannot expand shape [2, 3] to [3]");
  CHECK_THROWS_AS(attn::reshape(Tensor(), {1}), attn::ValueError);
}

TEST_CASE("split_heads and merge_heads equal reshape + transpose, values and gradients") {
  Tensor x = test::randn({2, 3, 6}, 11);  // [B, T, E], E = H * d with H = 2 (or 3), d = 3 (or 2)
  for (std::size_t H : {1u, 2u, 3u}) {
    CAPTURE(H);
    const long B = 2, T = 3, h = static_cast<long>(H), d = 6 / h;
    Tensor split = attn::split_heads(x, H);
    Tensor composed = attn::transpose(attn::reshape(x, {B, T, h, d}), 1, 2);  // [B, H, T, d]
    CHECK(split.shape() == attn::Shape{2, H, 3, 6 / H});
    CHECK(test::allclose(split, composed, 0.0));
    CHECK(test::allclose(attn::merge_heads(split), x, 0.0));
    CHECK_GRADCHECK([H](const Inputs& in) { return attn::split_heads(in[0], H); }, {x});
    Tensor heads = test::randn({2, H, 3, 6 / H}, 12);
    CHECK_GRADCHECK([](const Inputs& in) { return attn::merge_heads(in[0]); }, {heads});
  }
  CHECK_THROWS_WITH_SUBSTR(attn::split_heads(x, 4), attn::ShapeError,
                           "split_heads: expected x [B, T, E] with E a multiple of num_heads = 4, got [2, 3, 6]");
  CHECK_THROWS_WITH_SUBSTR(attn::split_heads(attn::zeros({6}), 2), attn::ShapeError, "got [6]");
  CHECK_THROWS_WITH_SUBSTR(attn::merge_heads(x), attn::ShapeError, "merge_heads: expected x [B, H, T, d], got [2, 3, 6]");
}
