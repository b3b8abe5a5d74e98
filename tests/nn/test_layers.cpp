// nn layers: initialization, gradients (float64 gradcheck over inputs and
// parameters), equality with PyTorch (tools/reference/nn_layers.py), bad
// inputs, printouts and reproducibility under manual_seed.
#include "../helpers.hpp"
#include "../reference.hpp"

#include <xtensor/xview.hpp>

#include <cmath>

using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace nn = attn::nn;

namespace {

// Copies a recorded PyTorch weight into a parameter, keeping the parameter's node.
void load(Tensor& param, const test::Reference& ref, const std::string& case_name, const std::string& name) {
  const xt::xarray<double> values = ref.array(case_name, name);
  REQUIRE(param.shape() == attn::Shape(values.shape().begin(), values.shape().end()));
  param.data<double>() = values;
}

// y.backward(gy) with the recorded upstream gradient, then every gradient compared.
void check_grad(const Tensor& t, const test::Reference& ref, const std::string& case_name, const std::string& name) {
  INFO(case_name << ": " << name);
  REQUIRE(t.grad().defined());
  CHECK(test::allclose(t.grad(), ref.tensor(case_name, name), 1e-10));
}

}  // namespace

// ---- init ------------------------------------------------------------------------

TEST_CASE("init: fan in and fan out, gains") {
  CHECK(nn::init::calculate_fan_in_and_fan_out(attn::zeros({5, 4})) == std::make_pair<std::size_t, std::size_t>(4, 5));
  CHECK(nn::init::calculate_fan_in_and_fan_out(attn::zeros({2, 3, 4, 5})) ==
        std::make_pair<std::size_t, std::size_t>(60, 40));
  CHECK_THROWS_WITH_SUBSTR(nn::init::calculate_fan_in_and_fan_out(attn::zeros({5})), attn::ValueError,
                           "at least 2 dims, got shape [5]");
  CHECK(nn::init::calculate_gain("linear") == 1.0);
  CHECK(nn::init::calculate_gain("tanh") == doctest::Approx(5.0 / 3));
  CHECK(nn::init::calculate_gain("relu") == doctest::Approx(std::sqrt(2.0)));
  CHECK(nn::init::calculate_gain("leaky_relu") == doctest::Approx(std::sqrt(2.0 / (1 + 0.01 * 0.01))));
  CHECK(nn::init::calculate_gain("leaky_relu", std::sqrt(5.0)) == doctest::Approx(std::sqrt(1.0 / 3)));
  CHECK_THROWS_WITH_SUBSTR(nn::init::calculate_gain("swish"), attn::ValueError, "unsupported nonlinearity");
}

TEST_CASE("init: values in the documented ranges, with the right spread") {
  attn::Generator gen(7);
  Tensor t = attn::zeros({200, 300});
  auto stats = [&] {
    const auto a = t.to_array();
    const double mean = xt::mean(a)(), std = std::sqrt(xt::variance(a)());
    return std::make_tuple(mean, std, xt::amin(a)(), xt::amax(a)());
  };
  SUBCASE("uniform_") {
    nn::init::uniform_(t, -2.0, 3.0, gen);
    auto [mean, std, lo, hi] = stats();
    CHECK(lo >= -2.0);
    CHECK(hi < 3.0);
    CHECK(mean == doctest::Approx(0.5).epsilon(0.02));
  }
  SUBCASE("normal_") {
    nn::init::normal_(t, 1.0, 2.0, gen);
    auto [mean, std, lo, hi] = stats();
    CHECK(mean == doctest::Approx(1.0).epsilon(0.02));
    CHECK(std == doctest::Approx(2.0).epsilon(0.02));
  }
  SUBCASE("xavier_uniform_ and xavier_normal_") {
    const double std_expected = std::sqrt(2.0 / 500);
    nn::init::xavier_uniform_(t, 1.0, gen);
    auto [m1, s1, lo, hi] = stats();
    CHECK(hi <= std::sqrt(3.0) * std_expected);
    CHECK(lo >= -std::sqrt(3.0) * std_expected);
    CHECK(s1 == doctest::Approx(std_expected).epsilon(0.02));
    nn::init::xavier_normal_(t, 2.0, gen);
    auto [m2, s2, lo2, hi2] = stats();
    CHECK(s2 == doctest::Approx(2 * std_expected).epsilon(0.02));
  }
  SUBCASE("kaiming_uniform_ with a = sqrt(5) is uniform in +-1/sqrt(fan_in)") {
    nn::init::kaiming_uniform_(t, std::sqrt(5.0), "fan_in", "leaky_relu", gen);
    auto [mean, std, lo, hi] = stats();
    CHECK(hi <= 1 / std::sqrt(300.0));
    CHECK(hi > 0.99 / std::sqrt(300.0));
    CHECK(lo >= -1 / std::sqrt(300.0));
    nn::init::kaiming_normal_(t, 0.0, "fan_out", "relu", gen);
    auto [m2, s2, lo2, hi2] = stats();
    CHECK(s2 == doctest::Approx(std::sqrt(2.0 / 200)).epsilon(0.02));
    CHECK_THROWS_WITH_SUBSTR(nn::init::kaiming_uniform_(t, 0.0, "fan_middle"), attn::ValueError, "mode");
  }
  SUBCASE("constants") {
    nn::init::ones_(t);
    CHECK(xt::all(xt::equal(t.to_array(), 1.0)));
    nn::init::zeros_(t);
    CHECK(xt::all(xt::equal(t.to_array(), 0.0)));
    nn::init::constant_(t, -0.5);
    CHECK(xt::all(xt::equal(t.to_array(), -0.5)));
  }
}

TEST_CASE("init: in place, without a graph, float32 too") {
  Tensor w = attn::zeros({3, 4}, attn::Dtype::Float32, /*requires_grad=*/true);
  Tensor& same = nn::init::xavier_uniform_(w);
  CHECK(&same == &w);
  CHECK(w.is_leaf());
  CHECK(w.dtype() == attn::Dtype::Float32);
  CHECK(xt::any(xt::not_equal(w.to_array(), 0.0)));
  CHECK_THROWS_AS(nn::init::normal_(w, 0.0, -1.0), attn::ValueError);
}

TEST_CASE("manual_seed makes initial weights reproducible bit for bit") {
  attn::manual_seed(42);
  nn::MLP a({3, 8, 2}, "tanh");
  nn::Embedding ea(5, 4);
  attn::manual_seed(42);
  nn::MLP b({3, 8, 2}, "tanh");
  nn::Embedding eb(5, 4);
  const auto pa = a.parameters(), pb = b.parameters();
  for (std::size_t i = 0; i < pa.size(); ++i) CHECK(xt::all(xt::equal(pa[i].data<double>(), pb[i].data<double>())));
  CHECK(xt::all(xt::equal(ea.weight.data<double>(), eb.weight.data<double>())));
  nn::MLP c({3, 8, 2}, "tanh");  // the generator has moved on: different weights
  CHECK_FALSE(xt::all(xt::equal(a.parameters()[0].data<double>(), c.parameters()[0].data<double>())));
}

// ---- Linear ------------------------------------------------------------------------

TEST_CASE("Linear: PyTorch's initialization range, forward and gradients") {
  attn::manual_seed(1);
  nn::Linear fc(16, 3);
  CHECK(fc.weight.shape() == attn::Shape{3, 16});
  CHECK(fc.bias.shape() == attn::Shape{3});
  CHECK(xt::amax(xt::abs(fc.weight.data<double>()))() <= 0.25);
  CHECK(xt::amax(xt::abs(fc.bias.data<double>()))() <= 0.25);
  CHECK(fc.weight.requires_grad());

  nn::Linear small(4, 3);
  Tensor x = test::randn({2, 5, 4}, 3);
  CHECK(small(x).shape() == attn::Shape{2, 5, 3});
  CHECK_GRADCHECK([&](const Inputs& in) { return small(in[0]); }, {x, small.weight, small.bias});
  nn::Linear nobias(4, 2, false);
  CHECK_FALSE(nobias.bias.defined());
  CHECK(nobias.named_parameters().size() == 1);
  CHECK_GRADCHECK([&](const Inputs& in) { return nobias(in[0]); }, {x, nobias.weight});
}

TEST_CASE("Linear equals torch.nn.Linear, outputs and every gradient") {
  test::Reference ref("nn_layers");
  for (const std::string name : {"linear", "linear_nobias"}) {
    const bool bias = name == "linear";
    nn::Linear fc(4, 5, bias);
    load(fc.weight, ref, name, "weight");
    if (bias) load(fc.bias, ref, name, "bias");
    Tensor x = ref.tensor(name, "x", true);
    Tensor y = fc(x);
    CHECK(test::allclose(y, ref.tensor(name, "y"), 1e-10));
    y.backward(ref.tensor(name, "gy"));
    check_grad(x, ref, name, "grad_x");
    check_grad(fc.weight, ref, name, "grad_weight");
    if (bias) check_grad(fc.bias, ref, name, "grad_bias");
  }
}

TEST_CASE("Linear: bad inputs, printout, float32") {
  nn::Linear fc(4, 3);
  CHECK_THROWS_WITH_SUBSTR(fc(attn::zeros({2, 5})), attn::ShapeError, "Linear: expected input [..., 4], got [2, 5]");
  CHECK_THROWS_WITH_SUBSTR(fc(attn::zeros({})), attn::ShapeError, "Linear");
  CHECK_THROWS_AS(fc(Tensor()), attn::ValueError);
  CHECK(fc.str() == "Linear(in_features=4, out_features=3, bias=true)\n  weight [3, 4]\n  bias [3]\n15 parameters");
  fc.to(attn::Dtype::Float32);
  Tensor y = fc(attn::ones({2, 4}, attn::Dtype::Float32));
  CHECK(y.dtype() == attn::Dtype::Float32);
  attn::sum(y).backward();
  CHECK(fc.weight.grad().dtype() == attn::Dtype::Float32);
  CHECK(fc.bias.grad().to_array()(0) == doctest::Approx(2.0));
}

// ---- Embedding -----------------------------------------------------------------------

TEST_CASE("Embedding: lookup, normal initialization, gradients") {
  attn::manual_seed(2);
  nn::Embedding emb(50, 40);
  const auto w = emb.weight.to_array();
  CHECK(std::abs(xt::mean(w)()) < 0.05);
  CHECK(std::sqrt(xt::variance(w)()) == doctest::Approx(1.0).epsilon(0.05));

  nn::Embedding small(6, 3);
  attn::Index ids = {{1, 2, 1}, {5, 0, 2}};
  Tensor e = small(ids);
  CHECK(e.shape() == attn::Shape{2, 3, 3});
  CHECK(xt::all(xt::equal(xt::view(e.data<double>(), 1, 0), xt::row(small.weight.data<double>(), 5))));
  CHECK_GRADCHECK([&](const Inputs&) { return small(ids); }, {small.weight});
  CHECK(small.str().find("Embedding(6, 3)") == 0);
}

TEST_CASE("Embedding with padding_idx: the row starts at zero and gets no gradient") {
  attn::manual_seed(3);
  nn::Embedding emb(6, 3, /*padding_idx=*/-1);  // counted from the end: row 5
  REQUIRE(emb.padding_idx.has_value());
  CHECK(*emb.padding_idx == 5);
  CHECK(xt::all(xt::equal(xt::row(emb.weight.data<double>(), 5), 0.0)));
  CHECK(emb.extra_repr() == "6, 3, padding_idx=5");
  attn::Index ids = {{5, 1, 5}, {0, 5, 1}};
  attn::sum(emb(ids) * 2.0).backward();
  const auto g = emb.weight.grad().to_array();
  CHECK(xt::all(xt::equal(xt::row(g, 5), 0.0)));
  CHECK(xt::all(xt::equal(xt::row(g, 1), 4.0)));  // used twice, times 2
  CHECK(xt::all(xt::equal(xt::row(g, 2), 0.0)));

  CHECK_THROWS_WITH_SUBSTR(nn::Embedding(6, 3, 6), attn::ValueError, "padding_idx must be within num_embeddings (6), got 6");
  CHECK_THROWS_AS(nn::Embedding(6, 3, -7), attn::ValueError);
  CHECK_THROWS(emb(attn::Index{0, 6}));  // id out of range (reported by attn::embedding)
}

TEST_CASE("Embedding(padding_idx) equals torch.nn.Embedding") {
  test::Reference ref("nn_layers");
  const std::string name = "embedding_padding";
  nn::Embedding emb(6, 3, 1);
  load(emb.weight, ref, name, "weight");  // the padding row is not zero here: its value is still used
  Tensor y = emb(ref.index(name, "ids"));
  CHECK(test::allclose(y, ref.tensor(name, "y"), 1e-10));
  y.backward(ref.tensor(name, "gy"));
  check_grad(emb.weight, ref, name, "grad_weight");
}

// ---- activations, Softmax, Dropout ----------------------------------------------------

TEST_CASE("activation modules call the ops; Softmax and LogSoftmax along a dim") {
  Tensor x = test::randn({3, 4}, 5);
  CHECK(test::allclose(nn::Tanh()(x), attn::tanh(x), 0.0));
  CHECK(test::allclose(nn::ReLU()(x), attn::relu(x), 0.0));
  CHECK(test::allclose(nn::GELU()(x), attn::gelu(x), 0.0));
  CHECK(test::allclose(nn::Sigmoid()(x), attn::sigmoid(x), 0.0));
  nn::Softmax softmax(0);
  nn::LogSoftmax log_softmax(-1);
  CHECK(test::allclose(attn::sum(softmax(x), {0}), attn::ones({4})));
  CHECK(test::allclose(attn::exp(log_softmax(x)), attn::softmax(x, 1)));
  CHECK_GRADCHECK([&](const Inputs& in) { return softmax(in[0]); }, {x});
  CHECK_GRADCHECK([&](const Inputs& in) { return log_softmax(in[0]); }, {x});
  CHECK(softmax.str().find("Softmax(dim=0)") == 0);
  CHECK(log_softmax.extra_repr() == "dim=-1");
  CHECK(nn::GELU().str().find("GELU()") == 0);
  CHECK(nn::activation_from_name("gelu") == nn::Activation::GELU);
  CHECK(nn::activation_name(nn::Activation::Tanh) == "tanh");
  CHECK_THROWS_WITH_SUBSTR(nn::activation_from_name("swish"), attn::ValueError, "unknown activation \"swish\"");
}

TEST_CASE("Dropout: identity in eval mode (as PyTorch), scaled random zeros in training") {
  test::Reference ref("nn_layers");
  nn::Dropout drop(0.3);
  drop.eval();
  Tensor x = ref.tensor("dropout_eval", "x", true);
  Tensor y = drop(x);
  CHECK(test::allclose(y, ref.tensor("dropout_eval", "y"), 1e-10));
  y.backward(ref.tensor("dropout_eval", "gy"));
  check_grad(x, ref, "dropout_eval", "grad_x");

  drop.train();
  Tensor big = attn::ones({100, 100});
  attn::manual_seed(9);
  const auto a = drop(big).to_array();
  attn::manual_seed(9);
  const auto b = drop(big).to_array();
  CHECK(xt::all(xt::equal(a, b)));  // reproducible
  const double zeros = static_cast<double>(xt::sum(xt::equal(a, 0.0))());
  CHECK(zeros / 10000 == doctest::Approx(0.3).epsilon(0.1));
  CHECK(xt::all(xt::equal(a, 0.0) || xt::isclose(a, 1 / 0.7)));
  CHECK(drop.extra_repr() == "p=0.3");
  CHECK_THROWS_WITH_SUBSTR(nn::Dropout(1.5), attn::ValueError, "between 0 and 1");
}

// ---- LayerNorm ------------------------------------------------------------------------

TEST_CASE("LayerNorm: zero mean, unit variance, gradients over input and parameters") {
  nn::LayerNorm norm(5);
  Tensor x = test::randn({2, 3, 5}, 6);
  const auto y = norm(x).to_array();
  const xt::xarray<double> mean = xt::mean(y, {2}), var = xt::variance(y, {2});
  CHECK(xt::allclose(mean, 0.0, 1e-12, 1e-12));
  CHECK(xt::allclose(var, 1.0, 1e-3));  // eps keeps it just below 1
  // Non-trivial weight and bias, so their gradients are checked where they matter.
  norm.weight.data<double>() = test::randn({5}, 7, false).data<double>();
  norm.bias.data<double>() = test::randn({5}, 8, false).data<double>();
  CHECK_GRADCHECK([&](const Inputs& in) { return norm(in[0]); }, {x, norm.weight, norm.bias});
  nn::LayerNorm plain(attn::Shape{3, 5}, 1e-6, false);
  CHECK(plain.parameters().empty());
  CHECK_GRADCHECK([&](const Inputs& in) { return plain(in[0]); }, {x});
  CHECK(plain.extra_repr() == "[3, 5], eps=1e-06, elementwise_affine=false");
  CHECK(norm.str().find("LayerNorm([5], eps=1e-05, elementwise_affine=true)") == 0);
}

TEST_CASE("LayerNorm equals torch.nn.LayerNorm over one and two dims") {
  test::Reference ref("nn_layers");
  for (const std::string name : {"layer_norm", "layer_norm_2d"}) {
    const xt::xarray<double> w = ref.array(name, "weight");
    nn::LayerNorm norm(attn::Shape(w.shape().begin(), w.shape().end()));
    load(norm.weight, ref, name, "weight");
    load(norm.bias, ref, name, "bias");
    Tensor x = ref.tensor(name, "x", true);
    Tensor y = norm(x);
    CHECK(test::allclose(y, ref.tensor(name, "y"), 1e-10));
    y.backward(ref.tensor(name, "gy"));
    check_grad(x, ref, name, "grad_x");
    check_grad(norm.weight, ref, name, "grad_weight");
    check_grad(norm.bias, ref, name, "grad_bias");
  }
}

TEST_CASE("LayerNorm: bad shapes, float32") {
  nn::LayerNorm norm(attn::Shape{3, 4});
  CHECK_THROWS_WITH_SUBSTR(norm(attn::zeros({2, 4, 3})), attn::ShapeError,
                           "LayerNorm: expected input [..., 3, 4], got [2, 4, 3]");
  CHECK_THROWS_AS(norm(attn::zeros({4})), attn::ShapeError);
  CHECK_THROWS_AS(nn::LayerNorm(attn::Shape{}), attn::ValueError);
  norm.to(attn::Dtype::Float32);
  Tensor y = norm(test::randn({2, 3, 4}, 1, false).to(attn::Dtype::Float32));
  CHECK(y.dtype() == attn::Dtype::Float32);
  CHECK(std::abs(attn::mean(y).item()) < 1e-5);
}

// ---- Residual, ModuleList, MLP -------------------------------------------------------------

TEST_CASE("Residual: x + f(x), with a module registered as a child") {
  nn::Linear fc(4, 4);
  nn::Residual block(fc);
  CHECK(block.named_parameters()[0].first == "fn.weight");
  Tensor x = test::randn({3, 4}, 9);
  CHECK(test::allclose(block(x), x + fc(x), 0.0));
  CHECK_GRADCHECK([&](const Inputs& in) { return block(in[0]); }, {x, fc.weight, fc.bias});

  nn::Residual act([](const Tensor& t) { return attn::tanh(t); });
  CHECK(act.parameters().empty());
  CHECK_GRADCHECK([&](const Inputs& in) { return act(in[0]); }, {x});
  nn::Linear narrow(4, 2);
  nn::Residual bad(narrow);
  CHECK_THROWS_WITH_SUBSTR(bad(x), attn::ShapeError, "Residual: f(x) must keep the shape of x, got x [3, 4] and f(x) [3, 2]");
}

TEST_CASE("ModuleList numbers its children") {
  nn::ModuleList<nn::Linear> list;
  list.emplace_back(2, 3);
  list.emplace_back(3, 1, false);
  CHECK(list.size() == 2);
  CHECK(list[1].out_features == 1);
  std::size_t n = 0;
  for (const nn::Linear& layer : list) n += layer.in_features;
  CHECK(n == 5);
  const auto named = list.named_parameters();
  REQUIRE(named.size() == 3);
  CHECK(named[0].first == "0.weight");
  CHECK(named[2].first == "1.weight");
}

TEST_CASE("MLP: PyTorch-like names, printout, gradients, dropout only in training") {
  nn::MLP mlp({3, 6, 4, 2}, "tanh");
  std::vector<std::string> names;
  for (const auto& [name, p] : mlp.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias",
                                          "layers.2.weight", "layers.2.bias"});
  const std::string s = mlp.str();
  CHECK(s.find("MLP(sizes=[3, 6, 4, 2], activation=tanh, dropout=0)") == 0);
  CHECK(s.find("  (layers): ModuleList()\n    (0): Linear(in_features=3, out_features=6, bias=true)") != std::string::npos);
  CHECK(s.find("62 parameters") != std::string::npos);

  Tensor x = test::randn({5, 3}, 10);
  CHECK(mlp(x).shape() == attn::Shape{5, 2});
  Inputs inputs{x};
  for (const Tensor& p : mlp.parameters()) inputs.push_back(p);
  CHECK_GRADCHECK([&](const Inputs& in) { return mlp(in[0]); }, inputs);

  nn::MLP last({3, 4}, nn::Activation::Sigmoid, 0.0, /*activate_last=*/true);
  const auto y = last(x).to_array();
  CHECK(xt::all(y > 0.0 && y < 1.0));

  nn::MLP dropped({3, 50, 2}, nn::Activation::ReLU, 0.5);
  dropped.eval();
  CHECK(test::allclose(dropped(x), dropped(x), 0.0));
  dropped.train();
  CHECK_FALSE(test::allclose(dropped(x), dropped(x), 1e-12));

  CHECK_THROWS_WITH_SUBSTR(nn::MLP({3}), attn::ValueError, "sizes needs at least an input and an output size");
  CHECK_THROWS_AS(nn::MLP({3, 2}, "swish"), attn::ValueError);
  CHECK_THROWS_AS(nn::MLP({3, 2}, nn::Activation::ReLU, -0.1), attn::ValueError);
  CHECK_THROWS_WITH_SUBSTR(mlp(attn::zeros({5, 4})), attn::ShapeError, "Linear: expected input [..., 3]");
}

TEST_CASE("MLP equals a torch.nn.Sequential of Linear and activations") {
  test::Reference ref("nn_layers");
  for (const auto& [name, act] : {std::make_pair(std::string("mlp_tanh"), nn::Activation::Tanh),
                                  std::make_pair(std::string("mlp_gelu"), nn::Activation::GELU)}) {
    nn::MLP mlp({3, 5, 4, 2}, act);
    for (std::size_t i = 0; i < 3; ++i) {
      load(mlp.layers[i].weight, ref, name, "layers_" + std::to_string(i) + "_weight");
      load(mlp.layers[i].bias, ref, name, "layers_" + std::to_string(i) + "_bias");
    }
    Tensor x = ref.tensor(name, "x", true);
    Tensor y = mlp(x);
    CHECK(test::allclose(y, ref.tensor(name, "y"), 1e-10));
    y.backward(ref.tensor(name, "gy"));
    check_grad(x, ref, name, "grad_x");
    for (std::size_t i = 0; i < 3; ++i) {
      check_grad(mlp.layers[i].weight, ref, name, "grad_layers_" + std::to_string(i) + "_weight");
      check_grad(mlp.layers[i].bias, ref, name, "grad_layers_" + std::to_string(i) + "_bias");
    }
  }
}
