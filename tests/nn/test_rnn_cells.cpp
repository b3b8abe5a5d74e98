// nn::RNNCell, LSTMCell, GRUCell: gradients, PyTorch equality, bad inputs.
#include "../helpers.hpp"
#include "../reference.hpp"

using attn::Tensor;
using attn::nn::LSTMState;
using Inputs = std::vector<Tensor>;

namespace {

// Makes every parameter of `m` an extra gradcheck input, after `inputs`. The function
// passed to gradcheck then puts inputs[first..] back into the module before running it.
std::vector<std::pair<std::string, Tensor*>> append_parameters(attn::nn::Module& m, Inputs& inputs) {
  auto params = m.state();
  for (auto& entry : params) inputs.push_back(*entry.second);
  return params;
}

void use_parameters(std::vector<std::pair<std::string, Tensor*>>& params, const Inputs& in, std::size_t first) {
  for (std::size_t i = 0; i < params.size(); ++i) *params[i].second = in[first + i];
}

// Puts the recorded weights of `case_name` into the module.
void load_weights(attn::nn::Module& m, const test::Reference& ref, const std::string& case_name) {
  for (auto& [name, p] : m.state()) *p = ref.tensor(case_name, name, /*requires_grad=*/true);
}

void check_weight_grads(const attn::nn::Module& m, const test::Reference& ref, const std::string& case_name) {
  for (const auto& [name, p] : m.named_parameters()) {
    INFO(case_name << ": grad of " << name);
    CHECK(test::allclose(p.grad(), ref.tensor(case_name, "grad_" + name), 1e-10));
  }
}

}  // namespace

TEST_CASE("cells have PyTorch's parameter names, shapes and init range") {
  attn::nn::LSTMCell lstm(3, 5);
  auto named = lstm.named_parameters();
  REQUIRE(named.size() == 4);
  CHECK(named[0].first == "weight_ih");
  CHECK(named[1].first == "weight_hh");
  CHECK(named[2].first == "bias_ih");
  CHECK(named[3].first == "bias_hh");
  CHECK(lstm.weight_ih.shape() == attn::Shape{20, 3});  // 4 gates x H
  CHECK(lstm.weight_hh.shape() == attn::Shape{20, 5});
  CHECK(attn::nn::GRUCell(3, 5).weight_ih.shape() == attn::Shape{15, 3});
  CHECK(attn::nn::RNNCell(3, 5).bias_hh.shape() == attn::Shape{5});
  CHECK(attn::nn::RNNCell(3, 5, /*bias=*/false).named_parameters().size() == 2);
  const double bound = 1.0 / std::sqrt(5.0);
  for (const auto& [name, p] : named) CHECK(xt::amax(xt::abs(p.to_array()))() <= bound);
}

TEST_CASE("cells: gradients over the input, the states and every weight") {
  Tensor x = test::randn({2, 3}, 1), h = test::randn({2, 4}, 2), c = test::randn({2, 4}, 3);
  SUBCASE("RNNCell tanh") {
    attn::nn::RNNCell cell(3, 4);
    Inputs inputs{x, h};
    auto params = append_parameters(cell, inputs);
    CHECK_GRADCHECK([&](const Inputs& in) { use_parameters(params, in, 2); return cell(in[0], in[1]); }, inputs);
  }
  SUBCASE("RNNCell relu, no bias") {
    attn::nn::RNNCell cell(3, 4, false, attn::nn::Nonlinearity::ReLU);
    Inputs inputs{x, h};
    auto params = append_parameters(cell, inputs);
    CHECK_GRADCHECK([&](const Inputs& in) { use_parameters(params, in, 2); return cell(in[0], in[1]); }, inputs);
  }
  SUBCASE("LSTMCell") {
    attn::nn::LSTMCell cell(3, 4);
    Inputs inputs{x, h, c};
    auto params = append_parameters(cell, inputs);
    CHECK_GRADCHECK(
        [&](const Inputs& in) {
          use_parameters(params, in, 3);
          LSTMState s = cell(in[0], {in[1], in[2]});
          return attn::concat({s.h, s.c}, 1);
        },
        inputs);
  }
  SUBCASE("GRUCell") {
    attn::nn::GRUCell cell(3, 4);
    Inputs inputs{x, h};
    auto params = append_parameters(cell, inputs);
    CHECK_GRADCHECK([&](const Inputs& in) { use_parameters(params, in, 2); return cell(in[0], in[1]); }, inputs);
  }
}

TEST_CASE("cells match PyTorch: values and every gradient") {
  test::Reference ref("nn_rnn");
  SUBCASE("RNNCell") {
    attn::nn::RNNCell cell(3, 4);
    load_weights(cell, ref, "rnn_cell");
    Tensor x = ref.tensor("rnn_cell", "x", true), h0 = ref.tensor("rnn_cell", "h0", true);
    Tensor h = cell(x, h0);
    CHECK(test::allclose(h, ref.tensor("rnn_cell", "h"), 1e-10));
    attn::sum(h * ref.tensor("rnn_cell", "grad_h")).backward();
    CHECK(test::allclose(x.grad(), ref.tensor("rnn_cell", "grad_x"), 1e-10));
    CHECK(test::allclose(h0.grad(), ref.tensor("rnn_cell", "grad_h0"), 1e-10));
    check_weight_grads(cell, ref, "rnn_cell");
  }
  SUBCASE("LSTMCell") {
    attn::nn::LSTMCell cell(3, 4);
    load_weights(cell, ref, "lstm_cell");
    Tensor x = ref.tensor("lstm_cell", "x", true);
    Tensor h0 = ref.tensor("lstm_cell", "h0", true), c0 = ref.tensor("lstm_cell", "c0", true);
    LSTMState s = cell(x, {h0, c0});
    CHECK(test::allclose(s.h, ref.tensor("lstm_cell", "h"), 1e-10));
    CHECK(test::allclose(s.c, ref.tensor("lstm_cell", "c"), 1e-10));
    attn::sum(s.h * ref.tensor("lstm_cell", "grad_h") + s.c * ref.tensor("lstm_cell", "grad_c")).backward();
    CHECK(test::allclose(x.grad(), ref.tensor("lstm_cell", "grad_x"), 1e-10));
    CHECK(test::allclose(h0.grad(), ref.tensor("lstm_cell", "grad_h0"), 1e-10));
    CHECK(test::allclose(c0.grad(), ref.tensor("lstm_cell", "grad_c0"), 1e-10));
    check_weight_grads(cell, ref, "lstm_cell");
  }
  SUBCASE("GRUCell") {
    attn::nn::GRUCell cell(3, 4);
    load_weights(cell, ref, "gru_cell");
    Tensor x = ref.tensor("gru_cell", "x", true), h0 = ref.tensor("gru_cell", "h0", true);
    Tensor h = cell(x, h0);
    CHECK(test::allclose(h, ref.tensor("gru_cell", "h"), 1e-10));
    attn::sum(h * ref.tensor("gru_cell", "grad_h")).backward();
    CHECK(test::allclose(x.grad(), ref.tensor("gru_cell", "grad_x"), 1e-10));
    CHECK(test::allclose(h0.grad(), ref.tensor("gru_cell", "grad_h0"), 1e-10));
    check_weight_grads(cell, ref, "gru_cell");
  }
}

TEST_CASE("cells: an undefined state means zeros") {
  attn::nn::LSTMCell lstm(3, 4);
  Tensor x = test::randn({2, 3}, 5, false);
  LSTMState a = lstm(x), b = lstm(x, {attn::zeros({2, 4}), attn::zeros({2, 4})});
  CHECK(test::allclose(a.h, b.h, 0.0));
  CHECK(test::allclose(a.c, b.c, 0.0));
  attn::nn::GRUCell gru(3, 4);
  CHECK(test::allclose(gru(x), gru(x, attn::zeros({2, 4})), 0.0));
}

TEST_CASE("cells work in float32") {
  attn::nn::LSTMCell cell(3, 4);
  Tensor x = test::randn({2, 3}, 6, false);
  LSTMState expected = cell(x);
  cell.to(attn::Dtype::Float32);
  LSTMState s = cell(x.to(attn::Dtype::Float32));
  CHECK(s.h.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(s.h, expected.h, 1e-6));
  CHECK(test::allclose(s.c, expected.c, 1e-6));
  attn::sum(s.h).backward();
  CHECK(cell.weight_hh.grad().dtype() == attn::Dtype::Float32);
}

TEST_CASE("cells reject bad inputs with clear messages") {
  attn::nn::LSTMCell lstm(3, 4);
  attn::nn::GRUCell gru(3, 4);
  attn::nn::RNNCell rnn(3, 4);
  CHECK_THROWS_WITH_SUBSTR(lstm(attn::zeros({2, 5})), attn::ShapeError,
                           "LSTMCell: expected input of shape [B, 3], got [2, 5]");
  CHECK_THROWS_WITH_SUBSTR(rnn(attn::zeros({2, 3, 1})), attn::ShapeError, "RNNCell: expected input of shape [B, 3]");
  CHECK_THROWS_WITH_SUBSTR(gru(attn::zeros({2, 3}), attn::zeros({3, 4})), attn::ShapeError,
                           "GRUCell: expected h of shape [2, 4], got [3, 4]");
  CHECK_THROWS_WITH_SUBSTR(lstm(attn::zeros({2, 3}), {attn::zeros({2, 4}), attn::zeros({2, 5})}), attn::ShapeError,
                           "LSTMCell: expected c of shape [2, 4], got [2, 5]");
  CHECK_THROWS_WITH_SUBSTR(rnn(attn::zeros({2, 3}, attn::Dtype::Float32)), attn::ValueError,
                           "RNNCell: the input is float32 but the parameters are float64");
  CHECK_THROWS_WITH_SUBSTR(attn::nn::LSTMCell(0, 4), attn::ValueError, "LSTMCell: input_size and hidden_size");
}
