// Every attention layer of nn/attention/ against values computed once by PyTorch in
// float64 (tools/reference/nn_attention_layers.py, tests/reference/nn_attention_layers.json):
// the layer gets the recorded weights, and its outputs and the gradients of every input and
// weight must agree to 1e-10. A gradcheck alone cannot see a layer that computes the wrong
// function consistently (queries and keys swapped, say); these values can.
// Multi-head attention and the positional encodings are compared in test_multihead.cpp and
// test_positional.cpp (nn_attention.json).
#include "../helpers.hpp"
#include "../reference.hpp"

#include <xtensor/xview.hpp>

#include <cmath>
#include <map>
#include <memory>
#include <string>

namespace nn = attn::nn;
using attn::Tensor;
using Tensors = std::map<std::string, Tensor>;

namespace {

const test::Reference& reference() {
  static const test::Reference ref("nn_attention_layers");
  return ref;
}

// The recorded weights into every parameter of m; each parameter must be recorded.
void load_weights(nn::Module& m, const std::string& c) {
  for (auto& [name, p] : m.named_parameters()) {
    INFO(c << ": parameter " << name);
    REQUIRE(reference().has(c, name));
    const xt::xarray<double> value = reference().array(c, name);
    REQUIRE(p.shape() == attn::Shape(value.shape().begin(), value.shape().end()));
    Tensor(p).data<double>() = value;
  }
}

// The source lengths of case c as an Index, and as a key padding mask [B, Tk].
attn::Index lengths(const std::string& c) { return reference().index(c, "lengths"); }
attn::Mask padding(const std::string& c, std::size_t Tk) { return nn::padding_mask(lengths(c), Tk); }

// The inputs of case c, requiring grad.
Tensors inputs(const std::string& c, std::initializer_list<const char*> names) {
  Tensors out;
  for (const char* name : names) out[name] = reference().tensor(c, name, /*requires_grad=*/true);
  return out;
}

// outputs equal PyTorch's; then the gradients of sum(output * grad_output) over every output
// with respect to every input and parameter equal PyTorch's too.
void check_case(const std::string& c, const nn::Module& m, const Tensors& in, const Tensors& outputs,
                double tol = 1e-10) {
  Tensor loss;
  for (const auto& [name, out] : outputs) {
    INFO(c << ": output " << name);
    CHECK(test::allclose(out, reference().tensor(c, name), tol));
    Tensor term = attn::sum(out * reference().tensor(c, "grad_" + name));
    loss = loss.defined() ? loss + term : term;
  }
  loss.backward();
  for (const auto& [name, t] : in) {
    INFO(c << ": gradient of input " << name);
    REQUIRE(t.grad().defined());
    CHECK(test::allclose(t.grad(), reference().tensor(c, "grad_" + name), tol));
  }
  for (const auto& [name, p] : m.named_parameters()) {
    INFO(c << ": gradient of parameter " << name);
    REQUIRE(p.grad().defined());
    CHECK(test::allclose(p.grad(), reference().tensor(c, "grad_" + name), tol));
  }
}

// An nn::Attention with `score`, on case c (query, keys, values, lengths).
void check_score_attention(const std::string& c, std::unique_ptr<nn::Score> score) {
  nn::Attention attention(std::move(score));
  load_weights(attention, c);
  Tensors in = inputs(c, {"query", "keys", "values"});
  auto out = attention(in["query"], in["keys"], in["values"], padding(c, in["keys"].size(1)));
  check_case(c, attention, in, {{"context", out.context}, {"weights", out.weights}});
}

}  // namespace

TEST_CASE("Bahdanau's additive attention equals PyTorch") {
  check_score_attention("additive", std::make_unique<nn::AdditiveScore>(3, 4, 5));
}

TEST_CASE("Luong's dot, general and concat attention equal PyTorch") {
  check_score_attention("luong_dot", std::make_unique<nn::DotScore>());
  check_score_attention("luong_general", std::make_unique<nn::GeneralScore>(3, 4));
  check_score_attention("luong_concat", std::make_unique<nn::ConcatScore>(3, 4, 5));
}

TEST_CASE("SelfAttention equals PyTorch, with key padding and a causal mask") {
  const std::string c = "self_attention";
  nn::SelfAttention layer(4, 3, 5, /*bias=*/true);
  load_weights(layer, c);
  Tensors in = inputs(c, {"x"});
  auto out = layer(in["x"], padding(c, 4), nn::causal_mask(4));
  check_case(c, layer, in, {{"context", out.context}, {"weights", out.weights}});
}

TEST_CASE("SelfAttention's reference tells queries from keys") {
  // Swapping W_Q and W_K transposes Q K^T: a consistent change gradcheck cannot see. The
  // recorded weights are different from the swapped ones.
  const std::string c = "self_attention";
  nn::SelfAttention layer(4, 3, 5, /*bias=*/true);
  load_weights(layer, c);
  std::swap(layer.query_proj.weight.data<double>(), layer.key_proj.weight.data<double>());
  std::swap(layer.query_proj.bias.data<double>(), layer.key_proj.bias.data<double>());
  auto out = layer(reference().tensor(c, "x"), padding(c, 4), nn::causal_mask(4));
  CHECK_FALSE(test::allclose(out.weights, reference().tensor(c, "weights"), 1e-3));
}

TEST_CASE("QKVAttention equals PyTorch") {
  const std::string c = "qkv_attention";
  nn::QKVAttention layer(3, 4, 2);
  load_weights(layer, c);
  Tensors in = inputs(c, {"query", "inputs"});
  auto out = layer(in["query"], in["inputs"], padding(c, 5));
  check_case(c, layer, in, {{"context", out.context}, {"weights", out.weights}});
}

TEST_CASE("local attention equals PyTorch: local-m (general score) and local-p (concat score, Gaussian)") {
  {
    const std::string c = "local_m";
    nn::LocalAttention layer(std::make_unique<nn::GeneralScore>(3, 4), 1, nn::LocalAttention::Mode::Monotonic);
    load_weights(layer, c);
    Tensors in = inputs(c, {"query", "keys", "values"});
    auto out = layer(in["query"], in["keys"], in["values"], lengths(c));
    check_case(c, layer, in, {{"context", out.context}, {"weights", out.weights}});
  }
  {
    const std::string c = "local_p";
    nn::LocalAttention layer(std::make_unique<nn::ConcatScore>(3, 4, 5), 2, nn::LocalAttention::Mode::Predictive, 3,
                             4);
    load_weights(layer, c);
    Tensors in = inputs(c, {"query", "keys", "values"});
    auto out = layer(in["query"], in["keys"], in["values"], lengths(c));
    check_case(c, layer, in, {{"context", out.context}, {"weights", out.weights}});
  }
}

TEST_CASE("convolutional attention with its copy head equals PyTorch, with padding") {
  const std::string c = "convolutional";
  nn::ConvolutionalAttention layer(3, 4, 5, 5, 3, 3, /*copy=*/true);
  load_weights(layer, c);
  Tensors in = inputs(c, {"embedded", "query"});
  const attn::Mask mask = padding(c, 6);
  auto out = layer(in["embedded"], layer.features(in["embedded"], mask), in["query"], mask);
  check_case(c, layer, in,
             {{"context", out.context}, {"weights", out.weights}, {"copy_weights", out.copy_weights},
              {"copy_gate", out.copy_gate}});
}

TEST_CASE("convolutional copy head: padding never decides the gate lambda") {
  // Features all 1 and h all 1 make Lfeat = 1 / sqrt(H) = 1/2 at every real position and
  // 0 at padding; K_lambda = -1 everywhere, no bias. The gate's score at j is then
  // -2 * (real positions in j's window of 3): with lengths 5 and 3 of S = 5,
  //   sentence 0: -4 -6 -6 -6 -4             max sigmoid(-4)
  //   sentence 1: -4 -6 -4 | -2  0 (padding)  max over real positions sigmoid(-4);
  // a gate read at the padding would give sigmoid(0) = 0.5.
  const std::size_t H = 4;
  nn::ConvolutionalAttention layer(3, H, 5, 5, 3, 3, /*copy=*/true);
  layer.copy_gate_conv.weight.data<double>().fill(-1.0);
  layer.copy_gate_conv.bias.data<double>().fill(0.0);
  const attn::Mask mask = nn::padding_mask(attn::Index{5, 3}, 5);
  Tensor e = test::randn({2, 5, 3}, 1, false), feats = attn::ones({2, 5, H}), h = attn::ones({2, 1, H});
  auto out = layer(e, feats, h, mask);
  const double expected = 1.0 / (1.0 + std::exp(4.0));
  const auto gate = out.copy_gate.to_array();  // [B, T, 1]
  CHECK(gate(0, 0, 0) == doctest::Approx(expected).epsilon(1e-12));
  CHECK(gate(1, 0, 0) == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("monotonic attention's expected alignment equals PyTorch, with padding") {
  const std::string c = "monotonic";
  nn::MonotonicAttention layer(3, 4, 5);
  load_weights(layer, c);
  Tensors in = inputs(c, {"query", "keys", "values"});
  auto out = layer(in["query"], in["keys"], in["values"], lengths(c));
  check_case(c, layer, in, {{"context", out.context}, {"weights", out.weights}});
}
