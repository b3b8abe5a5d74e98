#include "../helpers.hpp"

#include <xtensor/xview.hpp>

#include <cmath>
#include <memory>

using attn::Mask;
using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace nn = attn::nn;

namespace {

using test::with_parameters;

std::vector<std::string> names(const nn::Module& m) { return test::parameter_names(m); }

// Weights [B, Tq, Tk] sum to 1 over keys j < lengths[b] and are 0 beyond.
void check_weights_on_allowed_keys(const Tensor& weights, const std::vector<std::size_t>& lengths) {
  const auto w = weights.to_array();
  for (std::size_t b = 0; b < w.shape()[0]; ++b)
    for (std::size_t i = 0; i < w.shape()[1]; ++i) {
      double total = 0;
      for (std::size_t j = 0; j < w.shape()[2]; ++j) {
        if (j >= lengths[b]) CHECK(w(b, i, j) == 0.0);
        total += w(b, i, j);
      }
      CHECK(total == doctest::Approx(1.0).epsilon(1e-14));
    }
}

std::unique_ptr<nn::Score> make_score(int kind, std::size_t Dq, std::size_t Dk) {
  switch (kind) {
    case 0: return std::make_unique<nn::DotScore>();
    case 1: return std::make_unique<nn::ScaledDotScore>();
    case 2: return std::make_unique<nn::GeneralScore>(Dq, Dk);
    case 3: return std::make_unique<nn::ConcatScore>(Dq, Dk, 3);
    default: return std::make_unique<nn::AdditiveScore>(Dq, Dk, 3);
  }
}

}  // namespace

TEST_CASE("Attention with every score: context = weights x values, masks, gradients") {
  for (int kind = 0; kind < 5; ++kind) {
    attn::manual_seed(100 + kind);
    const std::size_t Dq = 3, Dk = kind < 2 ? 3 : 4;
    nn::Attention attention(make_score(kind, Dq, Dk));
    INFO("score " << attention.score().type_name());
    Tensor s = test::randn({2, 2, Dq}, 1), h = test::randn({2, 4, Dk}, 2), v = test::randn({2, 4, 2}, 3);
    Mask padding = nn::padding_mask(attn::Index{4, 2}, 4);
    auto [context, weights] = attention(s, h, v, padding);
    CHECK(context.shape() == attn::Shape{2, 2, 2});
    CHECK(weights.shape() == attn::Shape{2, 2, 4});
    check_weights_on_allowed_keys(weights, {4, 2});
    // softmax of the score over the valid keys, then the weighted sum, by hand
    Mask blocked = padding;
    blocked.reshape({2, 1, 4});
    Tensor expected_w = attn::softmax(attn::masked_fill(attention.score()(s, h), blocked, -INFINITY), -1);
    CHECK(test::allclose(weights, expected_w, 1e-14));
    CHECK(test::allclose(context, attn::matmul(expected_w, v), 1e-14));
    CHECK(test::allclose(attention.last_weights(), weights, 0.0));
    CHECK_FALSE(attention.last_weights().requires_grad());
    CHECK_GRADCHECK([&](const Inputs& in) { return attention(in[0], in[1], in[2], padding).context; },
                    with_parameters(attention, {s, h, v}));
  }
}

TEST_CASE("Attention: parameter names come from the score; precomputed keys give the same result") {
  attn::manual_seed(5);
  nn::Attention attention(std::make_unique<nn::AdditiveScore>(3, 4, 5));
  CHECK(names(attention) == std::vector<std::string>{"score.W1", "score.W2", "score.v"});
  Tensor s = test::randn({2, 1, 3}, 4), h = test::randn({2, 3, 4}, 5);
  Tensor keys = attention.score().precompute_keys(h);
  auto once = attention.forward_precomputed(s, keys, h);
  auto direct = attention(s, h, h);
  CHECK(test::allclose(once.context, direct.context, 0.0));
  CHECK(test::allclose(once.weights, direct.weights, 0.0));
}

TEST_CASE("Attention: an attn_mask and a sequence with no valid key") {
  nn::Attention attention(std::make_unique<nn::DotScore>());
  Tensor s = test::randn({2, 3, 2}, 6), h = test::randn({2, 3, 2}, 7);
  auto out = attention(s, h, h, nn::padding_mask(attn::Index{3, 0}, 3), nn::causal_mask(3));
  const auto w = out.weights.to_array();
  CHECK(w(0, 0, 0) == 1.0);  // the first query sees only the first key
  CHECK(w(0, 1, 2) == 0.0);
  for (double x : xt::xarray<double>(xt::view(out.context.to_array(), 1))) CHECK(x == 0.0);
  attn::sum(out.context).backward();
  for (double x : s.grad().to_array()) CHECK(std::isfinite(x));
}

TEST_CASE("Attention rejects bad shapes with clear messages") {
  nn::Attention attention(std::make_unique<nn::DotScore>());
  Tensor s = attn::zeros({2, 1, 3}), h = attn::zeros({2, 4, 3});
  CHECK_THROWS_WITH_SUBSTR(attention(s, h, attn::zeros({2, 3, 5})), attn::ShapeError,
                           "Attention: expected values [B, Tk, Dv] with B = 2 and Tk = 4 (from query and keys), got [2, 3, 5]");
  CHECK_THROWS_WITH_SUBSTR(attention(s, attn::zeros({3, 4, 3}), h), attn::ShapeError, "different batch sizes");
  CHECK_THROWS_WITH_SUBSTR(attention(s, attn::zeros({2, 4, 2}), h), attn::ShapeError, "the same size D");
  CHECK_THROWS_WITH_SUBSTR(attention(s, h, h, nn::padding_mask(attn::Index{1, 2}, 3)), attn::ShapeError,
                           "Attention: expected key_padding_mask [B, Tk] = [2, 4], got [2, 3]");
  CHECK_THROWS_WITH_SUBSTR(attention(s, h, h, std::nullopt, nn::causal_mask(4)), attn::ShapeError,
                           "Attention: expected attn_mask [1, 4] or [2, 1, 4]");
  CHECK_THROWS_AS(nn::Attention(nullptr), attn::ValueError);
}

TEST_CASE("scaled_dot_product_attention over [B, H, T, D]") {
  Tensor q = test::randn({2, 3, 2, 4}, 8), k = test::randn({2, 3, 5, 4}, 9), v = test::randn({2, 3, 5, 2}, 10);
  auto out = nn::scaled_dot_product_attention(q, k, v);
  CHECK(out.context.shape() == attn::Shape{2, 3, 2, 2});
  Tensor expected_w = attn::softmax(attn::matmul(q, attn::transpose(k, 2, 3)) / 2.0, -1);
  CHECK(test::allclose(out.weights, expected_w, 1e-14));
  CHECK(test::allclose(out.context, attn::matmul(expected_w, v), 1e-14));
  Mask causal = xt::zeros<bool>({2, 5});
  causal(0, 3) = causal(0, 4) = true;
  CHECK_GRADCHECK([&](const Inputs& in) { return nn::scaled_dot_product_attention(in[0], in[1], in[2], causal).context; },
                  {q, k, v});
  CHECK_THROWS_WITH_SUBSTR(nn::scaled_dot_product_attention(q, v, v), attn::ShapeError,
                           "scaled_dot_product_attention: expected query [..., Tq, D], key [..., Tk, D]");
}

TEST_CASE("QKVAttention: K = X W_K, V = X W_V, scaled dot product with the queries") {
  attn::manual_seed(6);
  nn::QKVAttention layer(3, 4, 2);
  CHECK(names(layer) == std::vector<std::string>{"key_proj.weight", "value_proj.weight"});
  Tensor q = test::randn({2, 2, 3}, 11), x = test::randn({2, 5, 4}, 12);
  Mask padding = nn::padding_mask(attn::Index{5, 3}, 5);
  auto out = layer(q, x, padding);
  Tensor K = attn::matmul(x, attn::transpose(layer.key_proj.weight, 0, 1));  // X W_K: [B, 5, 3]
  Tensor V = attn::matmul(x, attn::transpose(layer.value_proj.weight, 0, 1));
  Mask blocked = padding;
  blocked.reshape({2, 1, 5});
  auto expected = nn::scaled_dot_product_attention(q, K, V, blocked);
  CHECK(test::allclose(out.context, expected.context, 1e-14));
  check_weights_on_allowed_keys(out.weights, {5, 3});
  CHECK(test::allclose(layer.last_weights(), out.weights, 0.0));
  CHECK_GRADCHECK([&](const Inputs& in) { return layer(in[0], in[1], padding).context; },
                  with_parameters(layer, {q, x}));
  nn::QKVAttention with_bias(3, 4, 2, true);
  CHECK(names(with_bias).size() == 4);
  CHECK_THROWS_WITH_SUBSTR(layer(q, attn::zeros({2, 5, 3})), attn::ShapeError,
                           "QKVAttention: expected inputs [B, T, 4], got [2, 5, 3]");
  CHECK_THROWS_WITH_SUBSTR(layer(q, attn::zeros({1, 5, 4})), attn::ShapeError, "different batch sizes");
}

TEST_CASE("SelfAttention: Q, K and V all from X; gradients with masks") {
  attn::manual_seed(7);
  nn::SelfAttention layer(4, 3, 2);
  CHECK(names(layer) == std::vector<std::string>{"query_proj.weight", "key_proj.weight", "value_proj.weight"});
  Tensor x = test::randn({2, 4, 4}, 13);
  Mask padding = nn::padding_mask(attn::Index{4, 3}, 4);
  auto out = layer(x, padding, nn::causal_mask(4));
  CHECK(out.context.shape() == attn::Shape{2, 4, 2});
  CHECK(out.weights.shape() == attn::Shape{2, 4, 4});
  CHECK_GRADCHECK([&](const Inputs& in) { return layer(in[0], padding, nn::causal_mask(4)).context; },
                  with_parameters(layer, {x}));
  CHECK_THROWS_WITH_SUBSTR(layer(attn::zeros({2, 4, 3})), attn::ShapeError,
                           "SelfAttention: expected x [B, T, 4], got [2, 4, 3]");
  CHECK_THROWS_WITH_SUBSTR(layer(x, std::nullopt, nn::causal_mask(3)), attn::ShapeError,
                           "SelfAttention: expected attn_mask [4, 4] or [2, 4, 4]");
}

TEST_CASE("SelfAttention is permutation equivariant: f(s(x)) = s(f(x))") {
  attn::manual_seed(8);
  nn::SelfAttention layer(4, 3, 4);
  Tensor x = test::randn({2, 5, 4}, 14, false);
  const attn::Index perm = {3, 0, 4, 1, 2};
  auto permuted_first = layer(attn::index_select(x, 1, perm));
  auto plain = layer(x);
  CHECK(test::allclose(permuted_first.context, attn::index_select(plain.context, 1, perm), 1e-13));
  // weights: rows (queries) and columns (keys) both permuted
  Tensor w = attn::index_select(attn::index_select(plain.weights, 1, perm), 2, perm);
  CHECK(test::allclose(permuted_first.weights, w, 1e-13));
}

TEST_CASE("causal masking: changing a future token changes no earlier output") {
  attn::manual_seed(9);
  nn::SelfAttention layer(3, 3, 3);
  nn::MultiheadAttention mha(4, 2);
  Tensor x = test::randn({1, 5, 3}, 15, false), y = test::randn({1, 5, 4}, 16, false);
  Tensor x2 = x.detach(), y2 = y.detach();
  x2.data<double>()(0, 3, 1) += 10.0;  // token 3 changes
  y2.data<double>()(0, 3, 2) += 10.0;
  Tensor a = layer(x, std::nullopt, nn::causal_mask(5)).context;
  Tensor b = layer(x2, std::nullopt, nn::causal_mask(5)).context;
  Tensor c = mha(y, y, y, std::nullopt, true, nn::causal_mask(5)).output;
  Tensor d = mha(y2, y2, y2, std::nullopt, true, nn::causal_mask(5)).output;
  CHECK(test::allclose(attn::narrow(a, 1, 0, 3), attn::narrow(b, 1, 0, 3), 0.0));  // tokens 0..2: the same
  CHECK(test::allclose(attn::narrow(c, 1, 0, 3), attn::narrow(d, 1, 0, 3), 0.0));
  CHECK_FALSE(test::allclose(attn::narrow(a, 1, 3, 2), attn::narrow(b, 1, 3, 2), 1e-3));  // tokens 3, 4 differ
  CHECK_FALSE(test::allclose(attn::narrow(c, 1, 3, 2), attn::narrow(d, 1, 3, 2), 1e-3));
}

TEST_CASE("key padding: the content of padded tokens changes no valid output") {
  attn::manual_seed(10);
  nn::SelfAttention layer(3, 3, 3);
  Tensor x = test::randn({1, 4, 3}, 17, false), x2 = x.detach();
  x2.data<double>()(0, 3, 0) += 10.0;  // the padded token
  Mask padding = nn::padding_mask(attn::Index{3}, 4);
  Tensor a = layer(x, padding).context, b = layer(x2, padding).context;
  CHECK(test::allclose(attn::narrow(a, 1, 0, 3), attn::narrow(b, 1, 0, 3), 0.0));
}

TEST_CASE("attention layers in float32") {
  attn::manual_seed(11);
  nn::SelfAttention layer(4, 3, 2);
  Tensor x = test::randn({1, 3, 4}, 18, false);
  Tensor expected = layer(x, std::nullopt, nn::causal_mask(3)).context;
  layer.to(attn::Dtype::Float32);
  Tensor got = layer(x.to(attn::Dtype::Float32), std::nullopt, nn::causal_mask(3)).context;
  CHECK(got.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(got, expected, 1e-5));
}
