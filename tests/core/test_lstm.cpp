// lstm_cell_c and lstm_cell_h (core/ops/lstm.cpp): the fused LSTM step against
// the same math composed from core ops, value and gradient, and against finite differences.
#include "../helpers.hpp"

using attn::Tensor;
using Inputs = std::vector<Tensor>;

namespace {

// The LSTM step built from ops: what the two fused ops must equal. Returns h' and c' side by side.
Tensor composed_step(const Tensor& gates, const Tensor& c) {
  std::vector<Tensor> g = attn::chunk(gates, 4, 1);  // i, f, g, o
  Tensor c_new = attn::sigmoid(g[1]) * c + attn::sigmoid(g[0]) * attn::tanh(g[2]);
  Tensor h_new = attn::sigmoid(g[3]) * attn::tanh(c_new);
  return attn::concat({h_new, c_new}, 1);
}

Tensor fused_step(const Tensor& gates, const Tensor& c) {
  Tensor c_new = attn::lstm_cell_c(gates, c);
  return attn::concat({attn::lstm_cell_h(gates, c_new), c_new}, 1);
}

}  // namespace

TEST_CASE("lstm_cell_c / lstm_cell_h equal the composed ops, values and gradients") {
  Tensor gates = (test::randn({3, 20}, 1, false) * 2.0).requires_grad_(true), c = test::randn({3, 5}, 2);  // B = 3, H = 5
  Tensor gy = test::randn({3, 10}, 3, false);
  auto grads = [&](Tensor y) {
    gates.zero_grad();
    c.zero_grad();
    y.backward(gy);
    return std::pair<Tensor, Tensor>(gates.grad(), c.grad());
  };
  Tensor fused = fused_step(gates, c), composed = composed_step(gates, c);
  CHECK(test::allclose(fused, composed, 1e-14));
  auto [fg, fc] = grads(fused);
  auto [cg, cc] = grads(composed);
  CHECK(test::allclose(fg, cg, 1e-14));
  CHECK(test::allclose(fc, cc, 1e-14));
}

TEST_CASE("lstm_cell_c / lstm_cell_h: gradients against finite differences, and float32") {
  Tensor gates = test::randn({2, 12}, 4), c = test::randn({2, 3}, 5);
  CHECK_GRADCHECK([](const Inputs& in) { return attn::lstm_cell_c(in[0], in[1]); }, {gates, c});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::lstm_cell_h(in[0], in[1]); }, {gates, c});
  CHECK_GRADCHECK([](const Inputs& in) { return fused_step(in[0], in[1]); }, {gates, c});
  Tensor g32 = gates.detach().to(attn::Dtype::Float32), c32 = c.detach().to(attn::Dtype::Float32);
  Tensor y32 = fused_step(g32, c32);
  CHECK(y32.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(y32.to(attn::Dtype::Float64), fused_step(gates, c), 1e-6));
}

TEST_CASE("lstm_cell_c / lstm_cell_h reject bad shapes and mixed dtypes") {
  Tensor gates = attn::zeros({2, 12}), c = attn::zeros({2, 3});
  CHECK_THROWS_WITH_SUBSTR(attn::lstm_cell_c(gates, attn::zeros({2, 4})), attn::ShapeError,
                           "lstm_cell_c: expected gates [B, 4H] and c [B, H], got gates [2, 12] and c [2, 4]");
  CHECK_THROWS_WITH_SUBSTR(attn::lstm_cell_h(attn::zeros({3, 12}), c), attn::ShapeError,
                           "lstm_cell_h: expected gates [B, 4H] and c_new [B, H], got gates [3, 12] and c_new [2, 3]");
  CHECK_THROWS_WITH_SUBSTR(attn::lstm_cell_c(attn::zeros({12}), c), attn::ShapeError, "got gates [12]");
  CHECK_THROWS_AS(attn::lstm_cell_c(gates, attn::zeros({2, 3}, attn::Dtype::Float32)), attn::Error);
}
