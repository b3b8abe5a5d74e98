// nn::RNN, LSTM, GRU over sequences: gradients, PyTorch equality (packed,
// bidirectional, batch_first), padding, bad inputs, and a task an LSTM learns.
#include "../helpers.hpp"
#include "../reference.hpp"
#include "nn/linear.hpp"
#include "nn/loss.hpp"
#include "nn/optim.hpp"

#include <xtensor/xview.hpp>

using attn::Tensor;
using attn::nn::LSTMOutput;
using attn::nn::RNNOptions;
using Inputs = std::vector<Tensor>;

namespace {

RNNOptions options(std::size_t num_layers, bool bidirectional, bool batch_first = false) {
  RNNOptions opt;
  opt.num_layers = num_layers;
  opt.bidirectional = bidirectional;
  opt.batch_first = batch_first;
  return opt;
}

// The three layers behind one call, returning (output, h, c); c only for the LSTM.
LSTMOutput run(const attn::nn::LSTM& m, const Tensor& x, const Tensor& h0, const Tensor& c0,
               const attn::nn::Lengths& lengths = {}) {
  return m(x, {h0, c0}, lengths);
}
template <class Layer>
LSTMOutput run(const Layer& m, const Tensor& x, const Tensor& h0, const Tensor& c0,
               const attn::nn::Lengths& lengths = {}) {
  auto r = m(x, h0, lengths);
  return {r.output, r.h, Tensor()};
}

void copy_weights(attn::nn::Module& from, attn::nn::Module& to) {
  auto a = from.state(), b = to.state();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) *b[i].second = a[i].second->detach().requires_grad_(true);
}

// Compares a layer with PyTorch on the recorded case `name` (tools/reference/nn_rnn.py).
template <class Layer>
void check_against_torch(Layer& layer, const std::string& name) {
  INFO("case " << name);
  test::Reference ref("nn_rnn");
  for (auto& [pname, p] : layer.state()) *p = ref.tensor(name, pname, /*requires_grad=*/true);
  const bool lstm = ref.has(name, "c0");
  Tensor x = ref.tensor(name, "x", true), h0 = ref.tensor(name, "h0", true);
  Tensor c0 = lstm ? ref.tensor(name, "c0", true) : Tensor();
  attn::nn::Lengths lengths;
  if (ref.has(name, "lengths")) lengths = ref.index(name, "lengths");

  LSTMOutput r = run(layer, x, h0, c0, lengths);
  CHECK(test::allclose(r.output, ref.tensor(name, "output"), 1e-10));
  CHECK(test::allclose(r.h, ref.tensor(name, "h"), 1e-10));
  Tensor loss = attn::sum(r.output * ref.tensor(name, "grad_output")) + attn::sum(r.h * ref.tensor(name, "grad_h"));
  if (lstm) {
    CHECK(test::allclose(r.c, ref.tensor(name, "c"), 1e-10));
    loss = loss + attn::sum(r.c * ref.tensor(name, "grad_c"));
  }
  loss.backward();
  CHECK(test::allclose(x.grad(), ref.tensor(name, "grad_x"), 1e-10));
  CHECK(test::allclose(h0.grad(), ref.tensor(name, "grad_h0"), 1e-10));
  if (lstm) CHECK(test::allclose(c0.grad(), ref.tensor(name, "grad_c0"), 1e-10));
  for (const auto& [pname, p] : layer.named_parameters()) {
    INFO("grad of " << pname);
    CHECK(test::allclose(p.grad(), ref.tensor(name, "grad_" + pname), 1e-10));
  }
}

// Gradcheck of a layer over x, h0, (c0) and every weight.
template <class Layer>
void check_layer_gradients(Layer& layer, const Tensor& x, bool lstm, const attn::nn::Lengths& lengths) {
  const attn::Shape state{layer.options.num_layers * layer.num_directions(), x.size(layer.options.batch_first ? 0 : 1),
                          layer.hidden_size};
  Inputs inputs{x, test::randn(state, 21), lstm ? test::randn(state, 22) : attn::zeros({1})};
  auto params = layer.state();
  for (auto& entry : params) inputs.push_back(*entry.second);
  CHECK_GRADCHECK(
      [&](const Inputs& in) {
        for (std::size_t i = 0; i < params.size(); ++i) *params[i].second = in[3 + i];
        LSTMOutput r = run(layer, in[0], in[1], lstm ? in[2] : Tensor(), lengths);
        Tensor all = attn::concat({attn::reshape(r.output, {-1}), attn::reshape(r.h, {-1})}, 0);
        return lstm ? attn::concat({all, attn::reshape(r.c, {-1})}, 0) : all;
      },
      inputs);
}

}  // namespace

TEST_CASE("layers have PyTorch's parameter names and shapes") {
  attn::nn::LSTM lstm(3, 5, options(2, true));
  std::vector<std::string> names;
  for (const auto& [name, p] : lstm.named_parameters()) names.push_back(name);
  const std::vector<std::string> expected{
      "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
      "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse",
      "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1",
      "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse"};
  CHECK(names == expected);
  CHECK(lstm.weights[0].weight_ih.shape() == attn::Shape{20, 3});
  CHECK(lstm.weights[2].weight_ih.shape() == attn::Shape{20, 10});  // layer 1 reads both directions
  CHECK(lstm.weights[3].weight_hh.shape() == attn::Shape{20, 5});
  CHECK(attn::nn::GRU(3, 5).weights[0].bias_hh.shape() == attn::Shape{15});
  RNNOptions no_bias;
  no_bias.bias = false;
  CHECK(attn::nn::RNN(3, 5, no_bias).named_parameters().size() == 2);
  CHECK(lstm.str().rfind("LSTM(3, 5, num_layers=2, bidirectional=true)", 0) == 0);
}

TEST_CASE("layers match PyTorch: outputs, final states and every gradient") {
  SUBCASE("plain") {
    attn::nn::RNN rnn(3, 4);
    check_against_torch(rnn, "rnn_plain");
    RNNOptions relu;
    relu.nonlinearity = attn::nn::Nonlinearity::ReLU;
    attn::nn::RNN rnn_relu(3, 4, relu);
    check_against_torch(rnn_relu, "rnn_relu_plain");
    attn::nn::LSTM lstm(3, 4);
    check_against_torch(lstm, "lstm_plain");
    attn::nn::GRU gru(3, 4);
    check_against_torch(gru, "gru_plain");
  }
  SUBCASE("2 layers, bidirectional, uneven lengths (pack_padded_sequence), time-major and batch-first") {
    for (bool batch_first : {false, true}) {
      const std::string suffix = batch_first ? "_packed_bf" : "_packed";
      attn::nn::RNN rnn(3, 4, options(2, true, batch_first));
      check_against_torch(rnn, "rnn" + suffix);
      attn::nn::LSTM lstm(3, 4, options(2, true, batch_first));
      check_against_torch(lstm, "lstm" + suffix);
      attn::nn::GRU gru(3, 4, options(2, true, batch_first));
      check_against_torch(gru, "gru" + suffix);
    }
  }
}

TEST_CASE("layers: gradients over inputs, initial states and every weight") {
  const attn::nn::Lengths lengths{4, 2, 3};
  SUBCASE("RNN, one layer") {
    attn::nn::RNN rnn(2, 3);
    check_layer_gradients(rnn, test::randn({4, 3, 2}, 1), false, {});
  }
  SUBCASE("RNN, 2 layers, bidirectional, uneven lengths") {
    attn::nn::RNN rnn(2, 3, options(2, true));
    check_layer_gradients(rnn, test::randn({4, 3, 2}, 2), false, lengths);
  }
  SUBCASE("LSTM, 2 layers, bidirectional, uneven lengths") {
    attn::nn::LSTM lstm(2, 3, options(2, true));
    check_layer_gradients(lstm, test::randn({4, 3, 2}, 3), true, lengths);
  }
  SUBCASE("GRU, 2 layers, bidirectional, uneven lengths, batch-first") {
    attn::nn::GRU gru(2, 3, options(2, true, true));
    check_layer_gradients(gru, test::randn({3, 4, 2}, 4), false, lengths);
  }
}

TEST_CASE("padded steps change nothing, and each sequence is as if run alone") {
  attn::nn::LSTM lstm(3, 4, options(2, true));
  const std::vector<std::size_t> lengths{5, 2, 4};
  Tensor x = test::randn({5, 3, 3}, 7, false);
  LSTMOutput r = lstm(x, {}, lengths);

  // New values at the padded steps only.
  xt::xarray<double> other = x.to_array(), noise = test::randn({5, 3, 3}, 8, false).to_array();
  for (std::size_t b = 0; b < 3; ++b)
    for (std::size_t t = lengths[b]; t < 5; ++t) xt::view(other, t, b) = xt::view(noise, t, b);
  LSTMOutput r2 = lstm(Tensor(other), {}, lengths);
  CHECK(test::allclose(r.output, r2.output, 0.0));
  CHECK(test::allclose(r.h, r2.h, 0.0));
  CHECK(test::allclose(r.c, r2.c, 0.0));

  const xt::xarray<double> out = r.output.to_array(), h = r.h.to_array(), c = r.c.to_array();
  for (std::size_t b = 0; b < 3; ++b) {
    INFO("sequence " << b);
    for (std::size_t t = lengths[b]; t < 5; ++t) CHECK(xt::amax(xt::abs(xt::view(out, t, b)))() == 0.0);
    // The same sequence alone, cut to its length: [len, 1, 3]
    Tensor alone = attn::narrow(attn::narrow(x, 1, b, 1), 0, 0, lengths[b]);
    LSTMOutput a = lstm(alone);
    const xt::xarray<double> expected_out = xt::view(out, xt::range(0, lengths[b]), xt::range(b, b + 1));
    CHECK(test::allclose(a.output, Tensor(expected_out), 1e-12));
    CHECK(test::allclose(a.h, Tensor(xt::xarray<double>(xt::view(h, xt::all(), xt::range(b, b + 1)))), 1e-12));
    CHECK(test::allclose(a.c, Tensor(xt::xarray<double>(xt::view(c, xt::all(), xt::range(b, b + 1)))), 1e-12));
  }
}

TEST_CASE("batch_first gives the same results, transposed") {
  attn::nn::GRU tm(3, 4, options(2, true, false));
  attn::nn::GRU bf(3, 4, options(2, true, true));
  copy_weights(tm, bf);
  Tensor x = test::randn({5, 2, 3}, 9, false), h0 = test::randn({4, 2, 4}, 10, false);
  auto a = tm(x, h0, {3, 5});
  auto b = bf(attn::transpose(x, 0, 1), h0, {3, 5});
  CHECK(b.output.shape() == attn::Shape{2, 5, 8});
  CHECK(test::allclose(attn::transpose(b.output, 0, 1), a.output, 0.0));
  CHECK(test::allclose(b.h, a.h, 0.0));
}

TEST_CASE("a one-layer LSTM is the LSTMCell applied step by step") {
  attn::nn::LSTM lstm(3, 4);
  attn::nn::LSTMCell cell(3, 4);
  copy_weights(lstm, cell);
  Tensor x = test::randn({4, 2, 3}, 11, false);
  LSTMOutput r = lstm(x);
  attn::nn::LSTMState s;
  for (long t = 0; t < 4; ++t) {
    s = cell(attn::select(x, 0, t), s);
    CHECK(test::allclose(attn::select(r.output, 0, t), s.h, 1e-12));
  }
  CHECK(test::allclose(attn::select(r.c, 0, 0), s.c, 1e-12));
}

TEST_CASE("dropout acts between layers, only in training") {
  RNNOptions opt = options(2, false);
  opt.dropout = 0.5;
  attn::nn::LSTM with(3, 4, opt), without(3, 4, options(2, false));
  copy_weights(with, without);
  Tensor x = test::randn({4, 2, 3}, 12, false);
  with.eval();
  CHECK(test::allclose(with(x).output, without(x).output, 0.0));
  with.train();
  CHECK_FALSE(test::allclose(with(x).output, without(x).output, 1e-6));
  opt.num_layers = 1;  // nothing to drop with one layer
  attn::nn::LSTM single(3, 4, opt), reference(3, 4);
  copy_weights(single, reference);
  CHECK(test::allclose(single(x).output, reference(x).output, 0.0));
}

TEST_CASE("layers work in float32") {
  attn::nn::LSTM lstm(3, 4, options(2, true));
  Tensor x = test::randn({5, 2, 3}, 13, false);
  LSTMOutput expected = lstm(x, {}, {5, 3});
  lstm.to(attn::Dtype::Float32);
  LSTMOutput r = lstm(x.to(attn::Dtype::Float32), {}, {5, 3});
  CHECK(r.output.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(r.output, expected.output, 1e-5));
  CHECK(test::allclose(r.c, expected.c, 1e-5));
  attn::sum(r.output).backward();
  CHECK(lstm.weights[0].weight_ih.grad().dtype() == attn::Dtype::Float32);
}

TEST_CASE("layers reject bad inputs with clear messages") {
  attn::nn::LSTM lstm(3, 4, options(2, true));
  Tensor x = attn::zeros({5, 2, 3});
  CHECK_THROWS_WITH_SUBSTR(lstm(attn::zeros({5, 2, 6})), attn::ShapeError,
                           "LSTM: expected input of shape [T, B, 3], got [5, 2, 6]");
  CHECK_THROWS_WITH_SUBSTR(lstm(attn::zeros({5, 3})), attn::ShapeError, "LSTM: expected input of shape [T, B, 3]");
  attn::nn::GRU bf(3, 4, options(1, false, true));
  CHECK_THROWS_WITH_SUBSTR(bf(attn::zeros({2, 5, 4})), attn::ShapeError,
                           "GRU: expected input of shape [B, T, 3] (batch_first), got [2, 5, 4]");
  CHECK_THROWS_WITH_SUBSTR(lstm(x, {attn::zeros({2, 2, 4}), Tensor()}), attn::ShapeError,
                           "LSTM: expected h0 of shape [4, 2, 4] (num_layers * num_directions, B, hidden_size), got [2, 2, 4]");
  CHECK_THROWS_WITH_SUBSTR(lstm(x, {Tensor(), attn::zeros({4, 2, 3})}), attn::ShapeError,
                           "LSTM: expected c0 of shape [4, 2, 4]");
  CHECK_THROWS_WITH_SUBSTR(lstm(x, {}, {5, 6}), attn::ValueError,
                           "LSTM: every length must be in 1..T (T = 5), got lengths[1] = 6");
  CHECK_THROWS_WITH_SUBSTR(lstm(x, {}, {0, 5}), attn::ValueError, "got lengths[0] = 0");
  CHECK_THROWS_WITH_SUBSTR(lstm(x, {}, {5, 4, 3}), attn::ShapeError,
                           "LSTM: expected one length per sequence (B = 2), got 3 lengths");
  CHECK_THROWS_WITH_SUBSTR(lstm(x, {}, attn::Index{-1, 2}), attn::ValueError, "got lengths[0] = -1");
  CHECK_THROWS_WITH_SUBSTR(lstm(x.to(attn::Dtype::Float32)), attn::ValueError,
                           "LSTM: the input is float32 but the parameters are float64");
  CHECK_THROWS_WITH_SUBSTR(attn::nn::RNN(3, 4, options(0, false)), attn::ValueError, "RNN: num_layers must be at least 1");
}

TEST_CASE("an LSTM learns to count the ones of sequences of different lengths") {
  // Each sequence holds 0s and 1s; after its length comes padding (all 1s, to mislead).
  // The target is the number of 1s in the sequence itself, read from the final state.
  attn::manual_seed(3);
  attn::Generator gen(4);
  const std::size_t B = 32, T = 8, H = 12;
  xt::xarray<double> x = xt::ones<double>({T, B, std::size_t{1}}), target = xt::zeros<double>({B, std::size_t{1}});
  std::vector<std::size_t> lengths(B);
  for (std::size_t b = 0; b < B; ++b) {
    lengths[b] = static_cast<std::size_t>(gen.randint(2, T + 1));
    for (std::size_t t = 0; t < lengths[b]; ++t) {
      x(t, b, 0) = static_cast<double>(gen.randint(0, 2));
      target(b, 0) += x(t, b, 0);
    }
  }
  const Tensor inputs(x), targets(target);

  attn::nn::LSTM lstm(1, H);
  attn::nn::Linear head(H, 1);
  std::vector<Tensor> params = lstm.parameters();
  for (const Tensor& p : head.parameters()) params.push_back(p);
  attn::nn::Adam adam(params, /*lr=*/0.03);
  double first_loss = 0.0, loss_value = 0.0;
  for (int step = 1; step <= 200; ++step) {
    LSTMOutput r = lstm(inputs, {}, lengths);
    Tensor loss = attn::nn::mse_loss(head(attn::select(r.h, 0, 0)), targets);  // prediction [B, 1]
    loss_value = loss.item();
    if (step == 1) first_loss = loss_value;
    adam.zero_grad();
    loss.backward();
    adam.step();
  }
  MESSAGE("count task: loss " << first_loss << " -> " << loss_value);
  CHECK(loss_value < 0.1 * first_loss);
}
