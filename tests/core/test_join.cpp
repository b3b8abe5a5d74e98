// concat, stack, split, chunk, narrow, select (core/ops/join.cpp).
#include "../helpers.hpp"

using attn::Shape;
using attn::Tensor;
using Inputs = std::vector<Tensor>;

TEST_CASE("concat: values and gradients of three tensors") {
  Tensor a = attn::tensor({{1.0, 2.0}}), b = attn::tensor({{3.0, 4.0}, {5.0, 6.0}}), c = attn::tensor({{7.0, 8.0}});
  CHECK(test::allclose(attn::concat({a, b, c}, 0), attn::tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}, {7.0, 8.0}})));
  CHECK(test::allclose(attn::concat({b, b}, -1), attn::tensor({{3.0, 4.0, 3.0, 4.0}, {5.0, 6.0, 5.0, 6.0}})));

  auto three = [](const Inputs& in) { return attn::concat({in[0], in[1], in[2]}, 1); };
  CHECK_GRADCHECK(three, {test::randn({2, 1, 3}, 1), test::randn({2, 3, 3}, 2), test::randn({2, 2, 3}, 3)});
  auto last = [](const Inputs& in) { return attn::concat({in[0], in[1], in[2]}, -1); };
  CHECK_GRADCHECK(last, {test::randn({2, 3, 1}, 4), test::randn({2, 3, 2}, 5), test::randn({2, 3, 4}, 6)});
  // the same tensor twice, and an input that needs no gradient
  CHECK_GRADCHECK([](const Inputs& in) { return attn::concat({in[0], in[1], in[0]}, 0); },
                  {test::randn({2, 2}, 7), test::randn({1, 2}, 8, false)});
}

TEST_CASE("stack: a new dim") {
  Tensor a = attn::tensor({1.0, 2.0}), b = attn::tensor({3.0, 4.0});
  CHECK(test::allclose(attn::stack({a, b}, 0), attn::tensor({{1.0, 2.0}, {3.0, 4.0}})));
  CHECK(test::allclose(attn::stack({a, b}, -1), attn::tensor({{1.0, 3.0}, {2.0, 4.0}})));
  CHECK(attn::stack({attn::zeros({2, 3}), attn::zeros({2, 3})}, 1).shape() == Shape{2, 2, 3});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::stack({in[0], in[1], in[2]}, 1); },
                  {test::randn({2, 3}, 9), test::randn({2, 3}, 10), test::randn({2, 3}, 11)});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::stack({in[0], in[1]}, -1); },
                  {test::randn({2, 3}, 12), test::randn({2, 3}, 13)});
}

TEST_CASE("split and chunk: PyTorch's piece sizes") {
  Tensor x = test::randn({7, 2}, 14);
  std::vector<Shape> shapes;
  for (const Tensor& p : attn::split(x, 3, 0)) shapes.push_back(p.shape());
  CHECK(shapes == std::vector<Shape>{{3, 2}, {3, 2}, {1, 2}});
  shapes.clear();
  for (const Tensor& p : attn::chunk(x, 3, 0)) shapes.push_back(p.shape());  // ceil(7 / 3) = 3 each
  CHECK(shapes == std::vector<Shape>{{3, 2}, {3, 2}, {1, 2}});
  CHECK(attn::chunk(attn::zeros({5}), 4, 0).size() == 3);  // pieces of 2: 2, 2, 1 (fewer than 4, as PyTorch)
  CHECK(attn::chunk(attn::zeros({6}), 3, -1).size() == 3);
  CHECK(attn::split(attn::zeros({4}), 10, 0).size() == 1);
  CHECK(test::allclose(attn::split(attn::tensor({1.0, 2.0, 3.0, 4.0, 5.0}), 2, 0)[2], attn::tensor({5.0})));

  // uneven pieces, weighted differently, so each piece's gradient lands in its own place
  CHECK_GRADCHECK(
      [](const Inputs& in) {
        auto p = attn::split(in[0], 2, -1);  // [3, 2], [3, 2], [3, 1]
        return attn::concat({p[2] * 3.0, p[0] - p[1]}, 1);
      },
      {test::randn({3, 5}, 15)});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::chunk(in[0], 2, 0)[1]; }, {test::randn({3, 2}, 16)});
}

TEST_CASE("narrow and select: values and gradients") {
  Tensor x = attn::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  CHECK(test::allclose(attn::narrow(x, 1, 1, 2), attn::tensor({{2.0, 3.0}, {5.0, 6.0}})));
  CHECK(test::allclose(attn::narrow(x, -2, 1, 1), attn::tensor({{4.0, 5.0, 6.0}})));
  CHECK(attn::narrow(x, 1, 3, 0).shape() == Shape{2, 0});
  CHECK(test::allclose(attn::select(x, 1, 0), attn::tensor({1.0, 4.0})));
  CHECK(test::allclose(attn::select(x, 0, -1), attn::tensor({4.0, 5.0, 6.0})));
  CHECK(attn::select(attn::tensor({7.0}), 0, 0).shape() == Shape{});

  CHECK_GRADCHECK([](const Inputs& in) { return attn::narrow(in[0], -1, 1, 2); }, {test::randn({2, 3, 4}, 17)});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::select(in[0], 0, -1); }, {test::randn({3, 2}, 18)});
}

TEST_CASE("select the time step t of a [B, T, D] batch, as an RNN does") {
  Tensor x = test::randn({2, 4, 3}, 19);
  const auto v = x.to_array();
  Tensor step = attn::select(x, 1, 2);  // x[:, 2, :]
  CHECK(step.shape() == Shape{2, 3});
  CHECK(step.to_array()(1, 0) == v(1, 2, 0));
  // every step selected once and stacked back gives x itself, gradient included
  CHECK_GRADCHECK(
      [](const Inputs& in) {
        std::vector<Tensor> steps;
        for (long t = 0; t < 4; ++t) steps.push_back(attn::tanh(attn::select(in[0], 1, t)));
        return attn::stack(steps, 1);
      },
      {x});
}

TEST_CASE("a permuted tensor fed to narrow and select") {
  CHECK_GRADCHECK(
      [](const Inputs& in) {
        Tensor t = attn::permute(in[0], {2, 0, 1});                   // [4, 2, 3]
        Tensor a = attn::narrow(attn::narrow(t, 0, 1, 2), -1, 1, 2);  // [2, 2, 2]
        Tensor b = attn::select(t, 2, -1);                            // [4, 2]
        return attn::concat({attn::reshape(a, {-1}), attn::reshape(b * b, {-1})}, 0);
      },
      {test::randn({2, 3, 4}, 20)});
}

TEST_CASE("float32 concat and select") {
  Tensor a = attn::tensor({1.0, 2.0}, true, attn::Dtype::Float32);
  Tensor y = attn::select(attn::concat({a, a}, 0), 0, 3) * 5.0;
  CHECK(y.dtype() == attn::Dtype::Float32);
  y.backward();
  CHECK(test::allclose(a.grad(), attn::tensor({0.0, 5.0}, false, attn::Dtype::Float32)));
}

TEST_CASE("join ops reject bad input with a clear message") {
  Tensor x = attn::zeros({2, 3});
  CHECK_THROWS_WITH_SUBSTR(attn::concat({}, 0), attn::ValueError, "concat: expected at least one tensor");
  CHECK_THROWS_WITH_SUBSTR(attn::concat({x, attn::zeros({3, 2})}, 0), attn::ShapeError,
                           "concat: expected shapes equal except in dim 0, got [2, 3] (tensor 0) and [3, 2] (tensor 1)");
  CHECK_THROWS_WITH_SUBSTR(attn::concat({x, attn::zeros({2, 3, 1})}, 1), attn::ShapeError, "[2, 3, 1] (tensor 1)");
  CHECK_THROWS_WITH_SUBSTR(attn::concat({x, attn::zeros({2, 3}, attn::Dtype::Float32)}, 0), attn::ValueError,
                           "concat: inputs must share a dtype");
  CHECK_THROWS_WITH_SUBSTR(attn::concat({x}, 2), attn::ShapeError, "concat: dim 2 is out of range");
  CHECK_THROWS_WITH_SUBSTR(attn::stack({x, attn::zeros({2, 2})}, 0), attn::ShapeError,
                           "stack: expected tensors of equal shapes, got [2, 3] (tensor 0) and [2, 2] (tensor 1)");
  CHECK_THROWS_WITH_SUBSTR(attn::stack({x}, 3), attn::ShapeError, "stack: dim 3 is out of range");
  CHECK_THROWS_WITH_SUBSTR(attn::split(x, 0, 0), attn::ValueError, "split: split_size must be positive, got 0");
  CHECK_THROWS_WITH_SUBSTR(attn::split(x, 1, 2), attn::ShapeError, "split: dim 2 is out of range");
  CHECK_THROWS_WITH_SUBSTR(attn::chunk(x, 0, 0), attn::ValueError, "chunk: chunks must be positive, got 0");
  CHECK_THROWS_WITH_SUBSTR(attn::narrow(x, 1, 2, 2), attn::ValueError,
                           "narrow: start 2 + length 2 exceeds the size 3 of dim 1 (shape [2, 3])");
  CHECK_THROWS_WITH_SUBSTR(attn::narrow(x, 0, 5, 0), attn::ValueError, "narrow: start 5 + length 0 exceeds");
  CHECK_THROWS_WITH_SUBSTR(attn::select(x, 1, 3), attn::ValueError,
                           "select: index 3 is out of range for dim 1 of size 3 (shape [2, 3])");
  CHECK_THROWS_WITH_SUBSTR(attn::select(x, 0, -3), attn::ValueError, "select: index -3 is out of range");
  CHECK_THROWS_WITH_SUBSTR(attn::select(x, -3, 0), attn::ShapeError, "select: dim -3 is out of range");
}
