#include "../helpers.hpp"
#include "../reference.hpp"

#include <cmath>

using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace nn = attn::nn;

TEST_CASE("sinusoidal encoding: PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...)") {
  nn::SinusoidalPositionalEncoding pos(6, 50);
  const auto pe = pos.encoding(50).to_array();
  for (std::size_t p = 0; p < 50; ++p)
    for (std::size_t i = 0; i < 3; ++i) {
      const double angle = p / std::pow(10000.0, 2.0 * i / 6.0);
      CHECK(pe(p, 2 * i) == doctest::Approx(std::sin(angle)).epsilon(1e-15));
      CHECK(pe(p, 2 * i + 1) == doctest::Approx(std::cos(angle)).epsilon(1e-15));
    }
  test::Reference ref("nn_attention");
  CHECK(test::allclose(pos.encoding(50), ref.tensor("sinusoidal_d6", "pe"), 1e-12));
  nn::SinusoidalPositionalEncoding odd(7, 20);  // an odd d_model ends on a sine
  CHECK(test::allclose(odd.encoding(20), ref.tensor("sinusoidal_d7", "pe"), 1e-12));
}

TEST_CASE("sinusoidal encoding: a buffer added to [B, T, D] inputs") {
  nn::SinusoidalPositionalEncoding pos(4, 10);
  CHECK(pos.parameters().empty());
  REQUIRE(pos.named_buffers().size() == 1);
  CHECK(pos.named_buffers()[0].first == "pe");
  CHECK(pos.pe.shape() == attn::Shape{10, 4});
  CHECK_FALSE(pos.pe.requires_grad());
  Tensor x = test::randn({2, 3, 4}, 1);
  Tensor y = pos(x);
  CHECK(test::allclose(attn::select(y, 0, 1) - attn::select(x, 0, 1), pos.encoding(3), 1e-15));
  CHECK_GRADCHECK([&](const Inputs& in) { return pos(in[0]); }, {x});
  pos.to(attn::Dtype::Float32);
  CHECK(pos(x.to(attn::Dtype::Float32)).dtype() == attn::Dtype::Float32);
}

TEST_CASE("learned encoding: one trainable vector per position") {
  attn::manual_seed(2);
  nn::LearnedPositionalEncoding pos(8, 4);
  std::vector<std::string> names;
  for (const auto& entry : pos.named_parameters()) names.push_back(entry.first);
  CHECK(names == std::vector<std::string>{"embedding.weight"});
  Tensor x = test::randn({2, 3, 4}, 3);
  Tensor y = pos(x);
  CHECK(test::allclose(attn::select(y, 0, 0) - attn::select(x, 0, 0), attn::narrow(pos.embedding.weight, 0, 0, 3), 1e-15));
  CHECK_GRADCHECK([&](const Inputs& in) { return pos(in[0]); }, {x, pos.embedding.weight});
  pos.zero_grad();
  attn::sum(pos(x)).backward();
  const auto g = pos.embedding.weight.grad().to_array();
  CHECK(g(2, 0) == 2.0);  // position 2, used by both sequences
  CHECK(g(5, 0) == 0.0);  // position 5, unused
}

TEST_CASE("positional encodings break the permutation equivariance of self-attention") {
  attn::manual_seed(3);
  nn::SelfAttention layer(4, 4, 4);
  nn::SinusoidalPositionalEncoding pos(4);
  Tensor x = test::randn({1, 4, 4}, 4, false);
  const attn::Index perm = {2, 0, 3, 1};
  Tensor a = layer(pos(attn::index_select(x, 1, perm))).context;
  Tensor b = attn::index_select(layer(pos(x)).context, 1, perm);
  CHECK_FALSE(test::allclose(a, b, 1e-6));  // order now matters
}

TEST_CASE("positional encodings reject bad shapes") {
  nn::SinusoidalPositionalEncoding sin_pos(4, 3);
  nn::LearnedPositionalEncoding learned(3, 4);
  CHECK_THROWS_WITH_SUBSTR(sin_pos(attn::zeros({2, 3, 5})), attn::ShapeError,
                           "SinusoidalPositionalEncoding: expected x [B, T, 4], got [2, 3, 5]");
  CHECK_THROWS_WITH_SUBSTR(sin_pos(attn::zeros({2, 4, 4})), attn::ShapeError, "sequence length 4 exceeds max_len 3");
  CHECK_THROWS_WITH_SUBSTR(learned(attn::zeros({3, 4})), attn::ShapeError,
                           "LearnedPositionalEncoding: expected x [B, T, 4], got [3, 4]");
  CHECK_THROWS_WITH_SUBSTR(learned(attn::zeros({1, 5, 4})), attn::ShapeError, "exceeds max_len 3");
  CHECK_THROWS_AS(nn::SinusoidalPositionalEncoding(0), attn::ValueError);
}
