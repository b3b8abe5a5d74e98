// argmax, comparisons, one_hot (core/ops/compare.cpp).
#include "../helpers.hpp"

using attn::Index;
using attn::Mask;
using attn::Shape;
using attn::Tensor;

TEST_CASE("argmax: first maximum, any dim, keepdim") {
  Tensor x = attn::tensor({{1.0, 5.0, 5.0}, {7.0, 0.0, 7.0}});
  CHECK(attn::argmax(x, 1) == Index{1, 0});  // ties: the first one
  Index column = Index::from_shape({2, 1});
  column(0, 0) = 1;
  column(1, 0) = 0;
  CHECK(attn::argmax(x, -1, true) == column);
  CHECK(attn::argmax(x, 0) == Index{1, 0, 1});
  CHECK(attn::argmax(x, -2, true) == Index{{1, 0, 1}});

  Tensor y = attn::tensor({{{0.0, 9.0}, {3.0, 1.0}, {4.0, 2.0}}});  // [1, 3, 2]
  CHECK(attn::argmax(y, 1) == Index{{2, 0}});
  CHECK(attn::argmax(attn::tensor({-3.0, -1.0, -2.0}, false, attn::Dtype::Float32), 0) == Index(std::int64_t{1}));
  CHECK(attn::argmax(y, 1).shape()[1] == 2);
}

TEST_CASE("comparisons broadcast and give masks") {
  Tensor a = attn::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Tensor b = attn::tensor({2.0, 2.0, 7.0});
  CHECK(attn::eq(a, b) == Mask{{false, true, false}, {false, false, false}});
  CHECK(attn::ne(a, b) == Mask{{true, false, true}, {true, true, true}});
  CHECK(attn::lt(a, b) == Mask{{true, false, true}, {false, false, true}});
  CHECK(attn::le(a, b) == Mask{{true, true, true}, {false, false, true}});
  CHECK(attn::gt(a, b) == Mask{{false, false, false}, {true, true, false}});
  CHECK(attn::ge(a, b) == Mask{{false, true, false}, {true, true, false}});
  CHECK(attn::gt(a, attn::tensor(3.0)) == Mask{{false, false, false}, {true, true, true}});
  // accuracy, the usual use: argmax against targets
  Index pred = attn::argmax(a, 1);
  CHECK(pred == Index{2, 2});
}

TEST_CASE("one_hot: ids of any shape, any dtype") {
  Tensor h = attn::one_hot(Index{2, 0}, 3);
  CHECK(test::allclose(h, attn::tensor({{0.0, 0.0, 1.0}, {1.0, 0.0, 0.0}})));
  CHECK(attn::one_hot(Index{{1, 1}, {0, 2}}, 4).shape() == Shape{2, 2, 4});
  Tensor f = attn::one_hot(Index{1}, 2, attn::Dtype::Float32);
  CHECK(f.dtype() == attn::Dtype::Float32);
  CHECK_FALSE(f.requires_grad());
  CHECK(attn::argmax(attn::one_hot(Index{3, 1, 4}, 5), -1) == Index{3, 1, 4});
}

TEST_CASE("comparison ops reject bad input with a clear message") {
  Tensor x = attn::zeros({2, 3});
  CHECK_THROWS_WITH_SUBSTR(attn::argmax(x, 2), attn::ShapeError, "argmax: dim 2 is out of range");
  CHECK_THROWS_WITH_SUBSTR(attn::argmax(attn::zeros({2, 0}), 1), attn::ShapeError,
                           "argmax: dim 1 of shape [2, 0] is empty");
  CHECK_THROWS_WITH_SUBSTR(attn::eq(x, attn::zeros({2})), attn::ShapeError, "eq: shapes [2, 3] and [2] do not broadcast");
  CHECK_THROWS_WITH_SUBSTR(attn::ge(x, attn::zeros({4, 1, 2})), attn::ShapeError, "ge: shapes");
  CHECK_THROWS_WITH_SUBSTR(attn::lt(x, attn::zeros({2, 3}, attn::Dtype::Float32)), attn::ValueError,
                           "lt: inputs must share a dtype");
  CHECK_THROWS_WITH_SUBSTR(attn::one_hot(Index{0, 3}, 3), attn::ValueError,
                           "one_hot: id 3 is out of range for num_classes = 3");
  CHECK_THROWS_WITH_SUBSTR(attn::one_hot(Index{-1}, 3), attn::ValueError, "one_hot: id -1 is out of range");
  CHECK_THROWS_WITH_SUBSTR(attn::one_hot(Index{0}, 0), attn::ValueError, "one_hot: num_classes must be positive");
}
