// nn::ContextAttention (nn/attention/context.hpp): PyTorch's values (tools/reference/han.py),
// gradcheck, the additive score it equals, padding, bad input.
#include "../helpers.hpp"
#include "../reference.hpp"

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace nn = attn::nn;

TEST_CASE("ContextAttention equals the same layer in PyTorch: pooled vector, weights, every gradient") {
  test::Reference ref("han");
  nn::ContextAttention attention(3, 5);
  CHECK(test::parameter_names(attention) == std::vector<std::string>{"context", "proj.weight", "proj.bias"});
  for (auto& [name, p] : attention.state()) *p = ref.tensor("context", name, /*requires_grad=*/true);
  Tensor h = ref.tensor("context", "h", /*requires_grad=*/true);
  auto [pooled, weights] = attention(h, nn::padding_mask(attn::Index{4, 2}, 4));
  CHECK(test::allclose(pooled, ref.tensor("context", "pooled"), 1e-14));
  CHECK(test::allclose(weights, ref.tensor("context", "weights"), 1e-14));
  CHECK(test::allclose(attention.last_weights(), weights, 0.0));
  attn::sum(pooled * ref.tensor("context", "r")).backward();
  CHECK(test::allclose(h.grad(), ref.tensor("context", "grad_h"), 1e-14));
  for (const auto& [name, p] : attention.named_parameters()) {
    INFO("grad of " << name);
    CHECK(test::allclose(p.grad(), ref.tensor("context", "grad_" + name), 1e-14));
  }
}

TEST_CASE("ContextAttention: gradcheck over the states and every parameter, with padding") {
  attn::manual_seed(3);
  nn::ContextAttention attention(4, 3);
  Tensor h = test::randn({3, 5, 4}, 11);
  const attn::Mask padding = nn::padding_mask(attn::Index{5, 1, 3}, 5);
  CHECK_GRADCHECK([&](const Inputs& in) { return attention(in[0], padding).pooled; }, test::with_parameters(attention, {h}));
}

TEST_CASE("ContextAttention is the additive score with a learned query: v = u, W1 s + b") {
  // v^T tanh(W1 s + W2 h_j) with W2 = W, v = u and a query s whose W1 s is b gives the same weights.
  attn::manual_seed(4);
  nn::ContextAttention attention(4, 3);
  nn::Attention additive(std::make_unique<nn::AdditiveScore>(3, 4, 3));
  auto& score = dynamic_cast<nn::AdditiveScore&>(additive.score());
  score.W1 = Tensor(xt::xarray<double>(xt::eye<double>(3)));
  score.W2 = attention.proj.weight.detach();
  score.v = attention.context.detach();
  Tensor query = attn::reshape(attention.proj.bias.detach(), {1, 1, 3}) * attn::ones({2, 1, 3});  // W1 s = b, [B, 1, 3]
  Tensor h = test::randn({2, 6, 4}, 12, false);
  const attn::Mask padding = nn::padding_mask(attn::Index{6, 4}, 6);
  auto [pooled, weights] = attention(h, padding);
  auto out = additive(query, h, h, padding);
  CHECK(test::allclose(weights, attn::reshape(out.weights, {2, 6}), 1e-14));
  CHECK(test::allclose(pooled, attn::reshape(out.context, {2, 4}), 1e-14));
}

TEST_CASE("ContextAttention: a padded step gets weight 0 and changes nothing") {
  attn::manual_seed(5);
  nn::ContextAttention attention(2, 3);
  Tensor h = test::randn({1, 4, 2}, 13, false);
  auto [pooled, weights] = attention(h, nn::padding_mask(attn::Index{2}, 4));
  CHECK(weights.to_array()(0, 2) == 0.0);
  CHECK(weights.to_array()(0, 3) == 0.0);
  auto [short_pooled, short_weights] = attention(attn::narrow(h, 1, 0, 2));
  CHECK(test::allclose(pooled, short_pooled, 1e-15));
}

TEST_CASE("ContextAttention: a sequence with every step masked pools to 0, and no gradient is NaN") {
  attn::manual_seed(6);
  nn::ContextAttention attention(2, 3);
  Tensor h = test::randn({2, 3, 2}, 14);
  auto [pooled, weights] = attention(h, nn::padding_mask(attn::Index{3, 0}, 3));
  CHECK(xt::sum(xt::abs(xt::view(weights.to_array(), 1, xt::all())))() == 0.0);
  CHECK(xt::sum(xt::abs(xt::view(pooled.to_array(), 1, xt::all())))() == 0.0);
  attn::sum(pooled).backward();
  for (const Tensor& g : {h.grad(), attention.context.grad(), attention.proj.weight.grad()})
    CHECK(xt::all(xt::isfinite(g.to_array())));
}

TEST_CASE("ContextAttention: bad shapes name the layer and the shapes") {
  nn::ContextAttention attention(4, 3);
  CHECK_THROWS_WITH_SUBSTR(attention(attn::zeros({2, 5, 3})), attn::ShapeError,
                           "ContextAttention: expected states [B, T, 4], got [2, 5, 3]");
  CHECK_THROWS_WITH_SUBSTR(attention(attn::zeros({2, 5, 4}), nn::padding_mask(attn::Index{5, 5}, 6)), attn::ShapeError,
                           "expected key_padding_mask [2, 5] for states [2, 5, 4], got [2, 6]");
  CHECK_THROWS_WITH_SUBSTR(nn::ContextAttention(0, 3), attn::ValueError, "ContextAttention: input_dim and attention_dim");
  CHECK_THROWS_WITH_SUBSTR(attention(attn::zeros({2, 5, 4}, attn::Dtype::Float32)), attn::ValueError,
                           "ContextAttention: states are float32, the parameters float64");
}
