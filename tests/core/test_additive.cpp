// additive_score (core/ops/additive.cpp): the fused additive score against the
// same math composed from core ops, value and gradient, against finite
// differences, at several thread counts, and with bad shapes.
#include "../helpers.hpp"

#include "core/backend/parallel.hpp"

using attn::Tensor;
using Inputs = std::vector<Tensor>;

namespace {

// v . tanh(q_i + k_j) built from ops: what the fused op must equal.
Tensor composed(const Tensor& q, const Tensor& k, const Tensor& v) {
  return attn::matmul(attn::tanh(attn::unsqueeze(q, 2) + attn::unsqueeze(k, 1)), v);
}

// The scores and the gradients of q, k and v for a fixed dL/de.
std::vector<Tensor> run(Tensor (*score)(const Tensor&, const Tensor&, const Tensor&), const Tensor& q,
                        const Tensor& k, const Tensor& v, const Tensor& grad_out) {
  for (Tensor t : {q, k, v}) t.zero_grad();
  Tensor e = score(q, k, v);
  e.backward(grad_out);
  return {e.detach(), q.grad(), k.grad(), v.grad()};
}

}  // namespace

TEST_CASE("additive_score equals the composed ops, values and gradients") {
  // (B, Tq, Tk, A): one query per step as the decoder does, several queries, A = 1
  for (const auto& [B, Tq, Tk, A] : std::vector<std::array<std::size_t, 4>>{{3, 1, 5, 4}, {2, 4, 3, 6}, {1, 2, 2, 1}}) {
    CAPTURE(B);
    CAPTURE(Tq);
    CAPTURE(Tk);
    CAPTURE(A);
    Tensor q = test::randn({B, Tq, A}, 1), k = test::randn({B, Tk, A}, 2), v = test::randn({A}, 3);
    Tensor g = test::randn({B, Tq, Tk}, 4, false);
    const auto fused = run(attn::additive_score, q, k, v, g);
    const auto reference = run(composed, q, k, v, g);
    CHECK(fused[0].shape() == attn::Shape{B, Tq, Tk});
    for (std::size_t i = 0; i < fused.size(); ++i) {
      CAPTURE(i);
      CHECK(test::allclose(fused[i], reference[i], 1e-13));
    }
  }
}

TEST_CASE("additive_score of one tensor as both q and k sums both gradients, as the composed ops") {
  Tensor x = test::randn({2, 3, 4}, 12), v = test::randn({4}, 13);
  Tensor g = test::randn({2, 3, 3}, 14, false);
  const auto fused = run(attn::additive_score, x, x, v, g);
  const auto reference = run(composed, x, x, v, g);
  for (std::size_t i = 0; i < fused.size(); ++i) CHECK(test::allclose(fused[i], reference[i], 1e-13));
  CHECK_GRADCHECK([](const Inputs& in) { return attn::additive_score(in[0], in[0], in[1]); }, {x, v});
}

TEST_CASE("additive_score: gradients against finite differences, and float32") {
  Tensor q = test::randn({2, 3, 4}, 5), k = test::randn({2, 5, 4}, 6), v = test::randn({4}, 7);
  CHECK_GRADCHECK([](const Inputs& in) { return attn::additive_score(in[0], in[1], in[2]); }, {q, k, v});
  const auto f32 = [](const Tensor& t) { return t.detach().to(attn::Dtype::Float32); };
  Tensor e32 = attn::additive_score(f32(q), f32(k), f32(v));
  CHECK(e32.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(e32.to(attn::Dtype::Float64), attn::additive_score(q, k, v), 1e-5));
}

TEST_CASE("additive_score gives the same bits at 1 and 2 threads (a share of the batches each)") {
  // 32 batches of 20 x 20 pairs of 128: big enough to be shared out.
  Tensor q = test::randn({32, 1, 128}, 8), k = test::randn({32, 20, 128}, 9), v = test::randn({128}, 10);
  Tensor g = test::randn({32, 1, 20}, 11, false);
  const int before = attn::get_num_threads();
  attn::set_num_threads(1);
  const auto one = run(attn::additive_score, q, k, v, g);
  attn::set_num_threads(2);
  const auto two = run(attn::additive_score, q, k, v, g);
  attn::set_num_threads(before);
  for (std::size_t i = 0; i < one.size(); ++i) CHECK(test::allclose(one[i], two[i], 0.0));
}

TEST_CASE("additive_score rejects bad shapes and mixed dtypes") {
  Tensor q = attn::zeros({2, 1, 4}), k = attn::zeros({2, 3, 4}), v = attn::zeros({4});
  CHECK_THROWS_WITH_SUBSTR(attn::additive_score(q, attn::zeros({3, 3, 4}), v), attn::ShapeError,
                           "additive_score: expected q [B, Tq, A], k [B, Tk, A] and v [A], got q [2, 1, 4], k [3, 3, 4] "
                           "and v [4]");
  CHECK_THROWS_WITH_SUBSTR(attn::additive_score(q, attn::zeros({2, 3, 5}), v), attn::ShapeError, "k [2, 3, 5]");
  CHECK_THROWS_WITH_SUBSTR(attn::additive_score(q, k, attn::zeros({5})), attn::ShapeError, "and v [5]");
  CHECK_THROWS_WITH_SUBSTR(attn::additive_score(attn::zeros({2, 4}), k, v), attn::ShapeError, "got q [2, 4]");
  CHECK_THROWS_AS(attn::additive_score(q, k, attn::zeros({4}, attn::Dtype::Float32)), attn::Error);
  CHECK_THROWS_AS(attn::additive_score(q, Tensor(), v), attn::Error);
}
