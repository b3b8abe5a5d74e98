#include "../helpers.hpp"

#include <xtensor/xmanipulation.hpp>

using attn::Shape;
using attn::Tensor;
using Inputs = std::vector<Tensor>;

namespace {

// C = A B by the textbook triple loop, for 2-D arrays.
xt::xarray<double> naive_matmul(const xt::xarray<double>& a, const xt::xarray<double>& b) {
  xt::xarray<double> c = xt::zeros<double>({a.shape()[0], b.shape()[1]});
  for (std::size_t i = 0; i < a.shape()[0]; ++i)
    for (std::size_t j = 0; j < b.shape()[1]; ++j)
      for (std::size_t k = 0; k < a.shape()[1]; ++k) c(i, j) += a(i, k) * b(k, j);
  return c;
}

void check_matmul_gradients(const Shape& sa, const Shape& sb, std::uint64_t seed) {
  CAPTURE(attn::shape_str(sa));
  CAPTURE(attn::shape_str(sb));
  CHECK_GRADCHECK([](const Inputs& in) { return attn::matmul(in[0], in[1]); },
                  {test::randn(sa, seed), test::randn(sb, seed + 1)});
}

}  // namespace

TEST_CASE("matmul of 2-D matrices equals the triple loop") {
  Tensor a = test::randn({3, 4}, 1, false), b = test::randn({4, 5}, 2, false);
  Tensor c = attn::matmul(a, b);
  CHECK(c.shape() == Shape{3, 5});
  CHECK(test::allclose(c, Tensor(naive_matmul(a.data<double>(), b.data<double>())), 1e-13));
}

TEST_CASE("matmul shapes follow numpy") {
  auto shape_of = [](const Shape& sa, const Shape& sb) { return attn::matmul(attn::ones(sa), attn::ones(sb)).shape(); };
  CHECK(shape_of({3}, {3}) == Shape{});               // dot product
  CHECK(shape_of({2, 3}, {3}) == Shape{2});           // matrix x vector
  CHECK(shape_of({3}, {3, 4}) == Shape{4});           // vector x matrix
  CHECK(shape_of({2, 3, 4}, {4, 5}) == Shape{2, 3, 5});
  CHECK(shape_of({2, 3, 4}, {4}) == Shape{2, 3});
  CHECK(shape_of({4}, {2, 4, 5}) == Shape{2, 5});
  CHECK(shape_of({2, 1, 3, 4}, {3, 4, 2}) == Shape{2, 3, 3, 2});
  CHECK(shape_of({2, 0, 3}, {3, 4}) == Shape{2, 0, 4});
  Tensor dot = attn::matmul(attn::tensor({1.0, 2.0, 3.0}), attn::tensor({4.0, 5.0, 6.0}));
  CHECK(dot.item() == 32.0);
  // Nothing to sum over: the product of [2, 0] and [0, 3] is zeros.
  CHECK(test::allclose(attn::matmul(attn::zeros({2, 0}), attn::zeros({0, 3})), attn::zeros({2, 3})));
}

TEST_CASE("batched matmul equals the matmul of each pair of matrices") {
  // [2, 1, 3, 4] x [3, 4, 2] -> [2, 3, 3, 2]: a's dim 1 and b's missing dim 0 broadcast.
  Tensor a = test::randn({2, 1, 3, 4}, 3, false), b = test::randn({3, 4, 2}, 4, false);
  Tensor c = attn::matmul(a, b);
  for (long i = 0; i < 2; ++i)
    for (long j = 0; j < 3; ++j) {
      Tensor expected = attn::matmul(attn::select(attn::select(a, 0, i), 0, 0), attn::select(b, 0, j));
      CHECK(test::allclose(attn::select(attn::select(c, 0, i), 0, j), expected, 1e-13));
    }
  // [2, 3, 4] x [4, 5]: the batch folds into the rows of one gemm; same as per matrix.
  Tensor x = test::randn({2, 3, 4}, 5, false), w = test::randn({4, 5}, 6, false);
  Tensor y = attn::matmul(x, w);
  for (long i = 0; i < 2; ++i) CHECK(test::allclose(attn::select(y, 0, i), attn::matmul(attn::select(x, 0, i), w), 1e-13));
}

TEST_CASE("matmul gradients: 1-D, 2-D, batched and broadcast batch dims") {
  check_matmul_gradients({3}, {3}, 10);
  check_matmul_gradients({2, 3}, {3}, 12);
  check_matmul_gradients({3}, {3, 4}, 14);
  check_matmul_gradients({2, 3}, {3, 4}, 16);
  check_matmul_gradients({2, 3, 4}, {4, 5}, 18);       // folded: one gemm
  check_matmul_gradients({2, 3, 4}, {4}, 20);          // folded, b a column
  check_matmul_gradients({4}, {2, 4, 3}, 22);          // [D] x [B, D, O]
  check_matmul_gradients({2, 2, 3, 4}, {2, 2, 4, 5}, 24);  // [B, H, T, D] x [B, H, D, S]
  check_matmul_gradients({2, 1, 3, 4}, {3, 4, 2}, 26);    // both operands broadcast
  check_matmul_gradients({1, 3, 4}, {2, 4, 5}, 28);       // a broadcast over the batch
  check_matmul_gradients({2, 3, 4}, {1, 4, 5}, 30);       // b broadcast over the batch
  check_matmul_gradients({3, 4}, {2, 4, 5}, 32);          // a has no batch dims
}

TEST_CASE("matmul gradients: the same tensor twice, reused values, transposed and narrowed inputs") {
  CHECK_GRADCHECK([](const Inputs& in) { return attn::matmul(in[0], in[0]); }, {test::randn({3, 3}, 40)});
  // a's gradient gets contributions from matmul (gemm into the buffer) and from mul.
  CHECK_GRADCHECK([](const Inputs& in) { return attn::matmul(in[0], in[1]) * 2.0 + attn::matmul(in[0] * in[0], in[1]); },
                  {test::randn({2, 3}, 41), test::randn({3, 2}, 42)});
  // Operands made by other ops: a transpose and a column narrow.
  CHECK_GRADCHECK([](const Inputs& in) { return attn::matmul(attn::transpose(in[0], 0, 1), in[1]); },
                  {test::randn({4, 3}, 43), test::randn({4, 2}, 44)});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::matmul(attn::narrow(in[0], 1, 1, 3), in[1]); },
                  {test::randn({2, 5}, 45), test::randn({3, 2}, 46)});
  // An input built from a transposed copy of another array.
  Tensor t(xt::xarray<double>(xt::transpose(test::randn({4, 2, 3}, 47, false).data<double>())), true);  // [3, 2, 4]
  CHECK_GRADCHECK([](const Inputs& in) { return attn::matmul(in[0], in[1]); }, {t, test::randn({4, 2}, 48)});
  // Only one operand requires grad.
  CHECK_GRADCHECK([](const Inputs& in) { return attn::matmul(in[0], in[1]); },
                  {test::randn({2, 3, 4}, 49), test::randn({4, 5}, 50, false)});
}

TEST_CASE("matmul in float32 agrees with float64, values and gradients") {
  for (auto shapes : {std::pair<Shape, Shape>{{2, 3, 4}, {4, 5}}, {{2, 1, 3, 4}, {3, 4, 2}}, {{4}, {4}}}) {
    Tensor a = test::randn(shapes.first, 60), b = test::randn(shapes.second, 61);
    Tensor a32 = a.detach().to(attn::Dtype::Float32).requires_grad_();
    Tensor b32 = b.detach().to(attn::Dtype::Float32).requires_grad_();
    Tensor c = attn::matmul(a, b), c32 = attn::matmul(a32, b32);
    CHECK(c32.dtype() == attn::Dtype::Float32);
    CHECK(test::allclose(c, c32.to(attn::Dtype::Float64), 1e-5));
    attn::sum(c * c).backward();
    attn::sum(c32 * c32).backward();
    CHECK(test::allclose(a.grad(), a32.grad().to(attn::Dtype::Float64), 1e-5));
    CHECK(test::allclose(b.grad(), b32.grad().to(attn::Dtype::Float64), 1e-5));
  }
}

TEST_CASE("matmul with an empty dim: empty or zero results and gradients, no crash") {
  // k = 0 sums nothing (zeros); m, n or a batch dim of 0 give empty arrays
  struct Case {
    attn::Shape a, b, y;
  };
  for (const Case& c : {Case{{2, 0}, {0, 3}, {2, 3}}, Case{{0, 2}, {2, 3}, {0, 3}}, Case{{2, 3}, {3, 0}, {2, 0}},
                        Case{{0, 2, 3}, {0, 3, 4}, {0, 2, 4}}, Case{{2, 2, 0}, {2, 0, 4}, {2, 2, 4}},
                        Case{{1, 2, 3}, {0, 3, 4}, {0, 2, 4}}}) {
    CAPTURE(attn::shape_str(c.a));
    CAPTURE(attn::shape_str(c.b));
    Tensor a = attn::ones(c.a).requires_grad_(true), b = attn::ones(c.b).requires_grad_(true);
    Tensor y = attn::matmul(a, b);
    REQUIRE(y.shape() == c.y);
    CHECK(test::allclose(y, attn::zeros(c.y), 0.0));
    attn::sum(y).backward();
    CHECK(test::allclose(a.grad(), attn::zeros(c.a), 0.0));
    CHECK(test::allclose(b.grad(), attn::zeros(c.b), 0.0));
  }
  // linear: no rows, and no input features (then y is the bias in every row)
  Tensor w = attn::ones({4, 0}).requires_grad_(true), bias = test::randn({4}, 1);
  Tensor y = attn::linear(attn::ones({2, 0}).requires_grad_(true), w, bias);
  CHECK(test::allclose(y, attn::stack({bias, bias}, 0).detach(), 0.0));
  attn::sum(y).backward();
  CHECK(test::allclose(bias.grad(), attn::full({4}, 2.0), 0.0));
  Tensor x0 = attn::ones({0, 3}).requires_grad_(true), w3 = attn::ones({4, 3}).requires_grad_(true);
  attn::sum(attn::linear(x0, w3, bias)).backward();
  CHECK(test::allclose(w3.grad(), attn::zeros({4, 3}), 0.0));
}

TEST_CASE("matmul rejects bad shapes, naming both") {
  auto mm = [](const Shape& sa, const Shape& sb) { return attn::matmul(attn::zeros(sa), attn::zeros(sb)); };
  CHECK_THROWS_WITH_SUBSTR(mm({2, 3}, {4, 5}), attn::ShapeError,
                           "matmul: expected a.shape[-1] == b.shape[-2], got a [2, 3] and b [4, 5]");
  CHECK_THROWS_WITH_SUBSTR(mm({2, 3}, {4}), attn::ShapeError, "matmul: expected a.shape[-1] == b.shape[0], got a [2, 3] and b [4]");
  CHECK_THROWS_WITH_SUBSTR(mm({3}, {4}), attn::ShapeError, "got a [3] and b [4]");
  CHECK_THROWS_WITH_SUBSTR(mm({}, {3}), attn::ShapeError, "matmul: expected operands with at least 1 dim, got a [] and b [3]");
  CHECK_THROWS_WITH_SUBSTR(mm({2, 3, 4}, {3, 4, 5}), attn::ShapeError,
                           "matmul: batch dims do not broadcast (2 vs 3), got a [2, 3, 4] and b [3, 4, 5]");
  CHECK_THROWS_AS(attn::matmul(attn::zeros({2, 2}), attn::zeros({2, 2}, attn::Dtype::Float32)), attn::ValueError);
}

TEST_CASE("linear: gradients with and without bias") {
  Tensor w = test::randn({3, 4}, 70), bias = test::randn({3}, 71);
  for (const Shape& sx : {Shape{4}, Shape{2, 4}, Shape{2, 5, 4}}) {
    CAPTURE(attn::shape_str(sx));
    Tensor x = test::randn(sx, 72);
    CHECK(attn::linear(x, w, bias).shape().back() == 3);
    CHECK_GRADCHECK([](const Inputs& in) { return attn::linear(in[0], in[1], in[2]); }, {x, w, bias});
    CHECK_GRADCHECK([](const Inputs& in) { return attn::linear(in[0], in[1]); }, {x, w});
  }
  // Only the weight requires grad, x comes from a transpose.
  CHECK_GRADCHECK([](const Inputs& in) { return attn::linear(attn::transpose(in[0], 0, 1), in[1], in[2]); },
                  {test::randn({4, 2}, 73, false), w, bias});
}

TEST_CASE("linear equals matmul(x, weight^T) + bias, values and gradients") {
  Tensor x = test::randn({2, 5, 4}, 80), w = test::randn({3, 4}, 81), b = test::randn({3}, 82);
  Tensor g = test::randn({2, 5, 3}, 83, false);
  attn::linear(x, w, b).backward(g);
  const Tensor dx = x.grad(), dw = w.grad(), db = b.grad();
  x.zero_grad(), w.zero_grad(), b.zero_grad();

  Tensor composed = attn::matmul(x, attn::transpose(w, 0, 1)) + b;  // [2, 5, 4] x [4, 3] + [3]
  CHECK(test::allclose(attn::linear(x, w, b), composed, 1e-13));
  composed.backward(g);
  CHECK(test::allclose(dx, x.grad(), 1e-13));
  CHECK(test::allclose(dw, w.grad(), 1e-13));
  CHECK(test::allclose(db, b.grad(), 1e-13));

  // Against a weight transposed by hand with xtensor.
  Tensor wt(xt::xarray<double>(xt::transpose(w.data<double>())));
  CHECK(test::allclose(attn::linear(x, w), attn::matmul(x, wt), 1e-13));
}

TEST_CASE("linear with a whole bias [..., out] adds the product onto it, values and gradients") {
  // As an RNN step uses it: gates = xw + h W^T in one op.
  Tensor x = test::randn({2, 5, 4}, 84), w = test::randn({3, 4}, 85), base = test::randn({2, 5, 3}, 86);
  Tensor g = test::randn({2, 5, 3}, 87, false);
  attn::linear(x, w, base).backward(g);
  const Tensor dx = x.grad(), dw = w.grad(), dbase = base.grad();
  x.zero_grad(), w.zero_grad(), base.zero_grad();

  Tensor composed = base + attn::linear(x, w);
  CHECK(test::allclose(attn::linear(x, w, base), composed, 1e-13));
  composed.backward(g);
  CHECK(test::allclose(dx, x.grad(), 1e-13));
  CHECK(test::allclose(dw, w.grad(), 1e-13));
  CHECK(test::allclose(dbase, base.grad(), 1e-13));

  CHECK_GRADCHECK([](const Inputs& in) { return attn::linear(in[0], in[1], in[2]); }, {x, w, base});
  // The base is also used elsewhere, and its gradient must add up; in float32 too.
  CHECK_GRADCHECK([](const Inputs& in) { return attn::linear(in[0], in[1], in[2]) * in[2]; },
                  {test::randn({6, 4}, 88), w, test::randn({6, 3}, 89)});
  Tensor x32 = x.detach().to(attn::Dtype::Float32), w32 = w.detach().to(attn::Dtype::Float32);
  Tensor base32 = base.detach().to(attn::Dtype::Float32);
  CHECK(test::allclose(attn::linear(x32, w32, base32).to(attn::Dtype::Float64), composed, 1e-5));
}

TEST_CASE("linear in float32 agrees with float64") {
  Tensor x = test::randn({6, 4}, 90), w = test::randn({3, 4}, 91), b = test::randn({3}, 92);
  auto to32 = [](const Tensor& t) { return t.detach().to(attn::Dtype::Float32).requires_grad_(); };
  Tensor x32 = to32(x), w32 = to32(w), b32 = to32(b);
  Tensor y = attn::linear(x, w, b), y32 = attn::linear(x32, w32, b32);
  CHECK(test::allclose(y, y32.to(attn::Dtype::Float64), 1e-5));
  attn::sum(y * y).backward();
  attn::sum(y32 * y32).backward();
  CHECK(test::allclose(w.grad(), w32.grad().to(attn::Dtype::Float64), 1e-5));
  CHECK(test::allclose(b.grad(), b32.grad().to(attn::Dtype::Float64), 1e-5));
}

TEST_CASE("linear rejects bad shapes") {
  Tensor x = attn::zeros({2, 4}), w = attn::zeros({3, 4});
  CHECK_THROWS_WITH_SUBSTR(attn::linear(attn::zeros({2, 5}), w), attn::ShapeError,
                           "linear: expected x.shape[-1] == weight.shape[1], got x [2, 5] and weight [3, 4]");
  CHECK_THROWS_WITH_SUBSTR(attn::linear(x, attn::zeros({4})), attn::ShapeError, "linear: expected a 2-d weight [out, in], got weight [4]");
  CHECK_THROWS_WITH_SUBSTR(attn::linear(x, w, attn::zeros({4})), attn::ShapeError,
                           "linear: expected bias [3] or [2, 3] for x [2, 4] and weight [3, 4], got bias [4]");
  CHECK_THROWS_WITH_SUBSTR(attn::linear(x, w, attn::zeros({3, 3})), attn::ShapeError, "got bias [3, 3]");
  CHECK_THROWS_WITH_SUBSTR(attn::linear(attn::zeros({4}), w, attn::zeros({1, 3})), attn::ShapeError,
                           "linear: expected bias [3] or [3] for x [4] and weight [3, 4], got bias [1, 3]");
  CHECK_THROWS_WITH_SUBSTR(attn::linear(x, w, attn::zeros({1, 3})), attn::ShapeError, "got bias [1, 3]");
  CHECK_THROWS_WITH_SUBSTR(attn::linear(attn::zeros({}), w), attn::ShapeError, "linear: expected x [..., in] with at least 1 dim");
  CHECK_THROWS_AS(attn::linear(x, w, attn::zeros({3}, attn::Dtype::Float32)), attn::ValueError);
}
