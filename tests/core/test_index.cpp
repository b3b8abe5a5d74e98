// index_select, embedding, masked_fill, where (core/ops/index.cpp).
#include "../helpers.hpp"

using attn::Index;
using attn::Mask;
using attn::Shape;
using attn::Tensor;
using Inputs = std::vector<Tensor>;

TEST_CASE("index_select: values, repeated indices accumulate in the gradient") {
  Tensor x = attn::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, true);
  Tensor y = attn::index_select(x, 1, Index{2, 0, 2});
  CHECK(test::allclose(y, attn::tensor({{3.0, 1.0, 3.0}, {6.0, 4.0, 6.0}})));
  attn::sum(y).backward();
  CHECK(test::allclose(x.grad(), attn::tensor({{1.0, 0.0, 2.0}, {1.0, 0.0, 2.0}})));

  CHECK(attn::index_select(x, 0, Index{1}).shape() == Shape{1, 3});
  CHECK(attn::index_select(x, 0, Index::from_shape({0})).shape() == Shape{0, 3});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::index_select(in[0], -2, Index{1, 1, 0, 3}); },
                  {test::randn({2, 4, 3}, 1)});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::index_select(in[0], 0, Index{2, 2}); }, {test::randn({3, 2}, 2)});
}

TEST_CASE("embedding: rows for ids of any shape, repeated ids accumulate") {
  Tensor w = attn::tensor({{0.0, 0.5}, {1.0, 1.5}, {2.0, 2.5}}, true);  // V = 3, D = 2
  Tensor e = attn::embedding(w, Index{{2, 0}, {2, 2}});                 // ids [2, 2] -> [2, 2, 2]
  CHECK(e.shape() == Shape{2, 2, 2});
  CHECK(test::allclose(attn::reshape(e, {-1}), attn::tensor({2.0, 2.5, 0.0, 0.5, 2.0, 2.5, 2.0, 2.5})));
  attn::sum(e).backward();
  CHECK(test::allclose(w.grad(), attn::tensor({{1.0, 1.0}, {0.0, 0.0}, {3.0, 3.0}})));

  CHECK(attn::embedding(w, Index(std::int64_t{1})).shape() == Shape{2});  // a single id: one row
  CHECK_GRADCHECK([](const Inputs& in) { return attn::embedding(in[0], Index{{3, 1, 3}, {0, 3, 3}}); },
                  {test::randn({4, 5}, 3)});
}

TEST_CASE("masked_fill: broadcast [B, 1, T] padding mask, no gradient where filled") {
  Tensor scores = test::randn({2, 3, 4}, 4);  // [B, T_q, T_k]
  Mask pad = Mask::from_shape({2, 1, 4});     // [B, 1, T_k]: true at padded keys
  pad.fill(false);
  pad(0, 0, 3) = true;
  pad(1, 0, 2) = pad(1, 0, 3) = true;
  Tensor y = attn::masked_fill(scores, pad, -1e9);
  const auto v = y.to_array(), s = scores.to_array();
  CHECK(v(0, 2, 3) == -1e9);
  CHECK(v(1, 0, 2) == -1e9);
  CHECK(v(0, 1, 2) == s(0, 1, 2));
  attn::sum(y).backward();
  const auto g = scores.grad().to_array();
  CHECK(g(0, 1, 3) == 0.0);
  CHECK(g(1, 2, 3) == 0.0);
  CHECK(g(1, 2, 1) == 1.0);
  CHECK(xt::sum(g)() == 2 * 3 * 4 - 3 * 3);

  CHECK_GRADCHECK([&](const Inputs& in) { return attn::masked_fill(in[0], pad, -2.0); }, {test::randn({2, 3, 4}, 5)});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::masked_fill(in[0], Mask{true, false, true}, 7.0); },
                  {test::randn({2, 3}, 6)});
}

TEST_CASE("where: broadcasting among condition, a and b") {
  Mask cond = Mask::from_shape({2, 1});
  cond(0, 0) = true;
  cond(1, 0) = false;
  Tensor a = attn::tensor({1.0, 2.0, 3.0}, true), b = attn::tensor({{-1.0, -2.0, -3.0}, {-4.0, -5.0, -6.0}}, true);
  Tensor y = attn::where(cond, a, b);
  CHECK(test::allclose(y, attn::tensor({{1.0, 2.0, 3.0}, {-4.0, -5.0, -6.0}})));
  attn::sum(y).backward();
  CHECK(test::allclose(a.grad(), attn::tensor({1.0, 1.0, 1.0})));
  CHECK(test::allclose(b.grad(), attn::tensor({{0.0, 0.0, 0.0}, {1.0, 1.0, 1.0}})));

  Mask c3 = Mask::from_shape({2, 1, 3});
  for (std::size_t i = 0; i < c3.size(); ++i) c3.flat(i) = i % 2 == 0;
  CHECK_GRADCHECK([&](const Inputs& in) { return attn::where(c3, in[0], in[1]); },
                  {test::randn({4, 1}, 7), test::randn({3}, 8)});  // result [2, 4, 3]
  CHECK_GRADCHECK([](const Inputs& in) { return attn::where(Mask{false, true}, in[0], in[1]); },
                  {test::randn({2, 2}, 9), test::randn({2, 2}, 10)});
}

TEST_CASE("float32 embedding and masked_fill") {
  Tensor w = attn::tensor({{1.0, 2.0}, {3.0, 4.0}}, true, attn::Dtype::Float32);
  Tensor y = attn::masked_fill(attn::embedding(w, Index{1, 1, 0}), Mask{false, true}, 0.0);
  CHECK(y.dtype() == attn::Dtype::Float32);
  attn::sum(y).backward();
  CHECK(test::allclose(w.grad(), attn::tensor({{1.0, 0.0}, {2.0, 0.0}}, false, attn::Dtype::Float32)));
}

TEST_CASE("index ops reject bad input with a clear message") {
  Tensor x = attn::zeros({2, 3});
  CHECK_THROWS_WITH_SUBSTR(attn::index_select(x, 1, Index{0, 3}), attn::ValueError,
                           "index_select: index 3 is out of range for dim 1 of size 3 (shape [2, 3])");
  CHECK_THROWS_WITH_SUBSTR(attn::index_select(x, 0, Index{-1}), attn::ValueError, "index_select: index -1");
  CHECK_THROWS_WITH_SUBSTR(attn::index_select(x, 0, Index(xt::zeros<std::int64_t>({1, 1}))), attn::ShapeError,
                           "index_select: expected a 1-d index, got shape [1, 1]");
  CHECK_THROWS_WITH_SUBSTR(attn::index_select(x, 2, Index{0}), attn::ShapeError, "index_select: dim 2 is out of range");
  CHECK_THROWS_WITH_SUBSTR(attn::embedding(x, Index{1, 7}), attn::ValueError,
                           "embedding: id 7 is out of range for a vocabulary of V = 2");
  CHECK_THROWS_WITH_SUBSTR(attn::embedding(x, Index{-1}), attn::ValueError, "embedding: id -1 is out of range");
  CHECK_THROWS_WITH_SUBSTR(attn::embedding(attn::zeros({6}), Index{0}), attn::ShapeError,
                           "embedding: expected weight of shape [V, D], got [6]");
  CHECK_THROWS_WITH_SUBSTR(attn::masked_fill(x, Mask::from_shape({2, 2, 3}), 0.0), attn::ShapeError,
                           "masked_fill: mask of shape [2, 2, 3] does not broadcast to x of shape [2, 3]");
  CHECK_THROWS_WITH_SUBSTR(attn::masked_fill(x, Mask::from_shape({2}), 0.0), attn::ShapeError,
                           "masked_fill: shapes [2] and [2, 3] do not broadcast");
  CHECK_THROWS_WITH_SUBSTR(attn::where(Mask::from_shape({2}), x, x), attn::ShapeError,
                           "where: shapes [2] and [2, 3] do not broadcast");
  CHECK_THROWS_WITH_SUBSTR(attn::where(Mask{true}, x, attn::zeros({4})), attn::ShapeError,
                           "where: shapes [2, 3] and [4] do not broadcast");
  CHECK_THROWS_WITH_SUBSTR(attn::where(Mask{true}, x, attn::zeros({2, 3}, attn::Dtype::Float32)), attn::ValueError,
                           "where: inputs must share a dtype");
}
