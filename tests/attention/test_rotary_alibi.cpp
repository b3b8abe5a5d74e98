// Positions inside attention: rotary embeddings (nn/attention/rotary.hpp) and ALiBi (alibi.hpp)
// against PyTorch (tools/reference/rotary_alibi.py), RoPE's scores depending on the offset only,
// gradients, and both inside nn::MultiheadAttention: forward_step with a cache gives forward()'s rows.
#include "../helpers.hpp"
#include "../reference.hpp"

#include <xtensor/xview.hpp>

using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace nn = attn::nn;

TEST_CASE("rotary_embedding equals PyTorch's rotate_half form, values and gradients") {
  test::Reference ref("rotary_alibi");
  for (const char* name : {"rope", "rope_base"}) {
    CAPTURE(name);
    Tensor x = ref.tensor(name, "x", true);
    const auto start = std::size_t(ref.array(name, "start")(0));
    const double base = ref.array(name, "base")(0);
    Tensor out = nn::rotary_embedding(x, start, base);
    CHECK(test::allclose(out, ref.tensor(name, "output"), 1e-14));
    out.backward(ref.tensor(name, "grad_output"));
    CHECK(test::allclose(x.grad(), ref.tensor(name, "grad_x"), 1e-14));
  }
  Tensor x = test::randn({2, 3, 6}, 7);
  CHECK_GRADCHECK([&](const Inputs& in) { return nn::rotary_embedding(in[0], 2); }, {x});
}

TEST_CASE("rotary_embedding: a query at i and a key at j score by j - i only") {
  Tensor q = test::randn({1, 1, 8}, 1, false), k = test::randn({1, 1, 8}, 2, false);
  auto score = [&](std::size_t i, std::size_t j) {
    return attn::sum(nn::rotary_embedding(q, i) * nn::rotary_embedding(k, j)).item();
  };
  CHECK(score(2, 5) == doctest::Approx(score(10, 13)).epsilon(1e-12));
  CHECK(score(0, 3) == doctest::Approx(score(100, 103)).epsilon(1e-12));
  CHECK(score(7, 7) == doctest::Approx(attn::sum(q * k).item()).epsilon(1e-12));  // offset 0: no turn at all
  CHECK(std::abs(score(2, 5) - score(2, 6)) > 1e-3);                             // another offset, another score
  // Rows are positions start, start + 1, ...: row 1 from start 0 is row 0 from start 1.
  Tensor two = test::randn({2, 8}, 3, false);
  CHECK(test::allclose(attn::narrow(nn::rotary_embedding(two, 0), 0, 1, 1),
                       nn::rotary_embedding(attn::narrow(two, 0, 1, 1), 1), 1e-15));
}

TEST_CASE("alibi_slopes are the paper's, for powers of two and not") {
  test::Reference ref("rotary_alibi");
  for (std::size_t n : {8, 6, 12}) {
    CAPTURE(n);
    const auto expected = ref.array("slopes_" + std::to_string(n), "slopes");
    const std::vector<double> got = nn::alibi_slopes(n);
    REQUIRE(got.size() == n);
    for (std::size_t h = 0; h < n; ++h) CHECK(got[h] == doctest::Approx(expected(h)).epsilon(1e-15));
  }
}

TEST_CASE("scaled_dot_product_attention with ALiBi's bias equals PyTorch, values and gradients") {
  test::Reference ref("rotary_alibi");
  Tensor q = ref.tensor("alibi_causal", "query", true), k = ref.tensor("alibi_causal", "key", true),
         v = ref.tensor("alibi_causal", "value", true);
  const Tensor bias = nn::alibi_bias(4, 6, 0, 6, 0);
  CHECK(test::allclose(bias, ref.tensor("alibi_causal", "bias"), 1e-15));
  Tensor out = nn::scaled_dot_product_attention(q, k, v, bias, nn::causal_mask(6)).context;
  CHECK(test::allclose(out, ref.tensor("alibi_causal", "output"), 1e-13));
  out.backward(ref.tensor("alibi_causal", "grad_output"));
  CHECK(test::allclose(q.grad(), ref.tensor("alibi_causal", "grad_query"), 1e-13));
  CHECK(test::allclose(k.grad(), ref.tensor("alibi_causal", "grad_key"), 1e-13));
  CHECK(test::allclose(v.grad(), ref.tensor("alibi_causal", "grad_value"), 1e-13));
  // Positions from an offset: queries 3..4 against keys 1..5 are rows 3..4, columns 1..5 of the square.
  CHECK(test::allclose(nn::alibi_bias(4, 2, 3, 5, 1),
                       Tensor(xt::eval(xt::view(bias.to_array(), xt::all(), xt::range(3, 5), xt::range(1, 6)))), 1e-15));
}

TEST_CASE("MultiheadAttention with rotary positions or ALiBi: forward_step gives causal forward()'s rows") {
  for (auto position : {nn::AttentionPosition::Rotary, nn::AttentionPosition::ALiBi}) {
    for (std::size_t window : {0, 3}) {
      CAPTURE(int(position));
      CAPTURE(window);
      attn::Generator gen(4);
      nn::MultiheadAttention mha(8, 2, nn::GroupedQuery{1}, 0.0, true, gen);
      attn::nn::init::uniform_(mha.in_proj_bias, -0.5, 0.5, gen);
      mha.position = position;
      mha.window = window;
      const std::size_t T = 7;
      Tensor x = test::randn({2, T, 8}, 5, false);
      Tensor full = mha(x, x, x, std::nullopt, false, std::nullopt, true, /*is_causal=*/true).output;  // [2, T, 8]
      nn::KVCache cache;
      for (std::size_t t = 0; t < T; ++t) {
        CAPTURE(t);
        Tensor step = mha.forward_step(attn::narrow(x, 1, t, 1), cache).output;  // [2, 1, 8]
        CHECK(test::allclose(step, attn::narrow(full, 1, t, 1), 1e-13));
      }
      // The same positions change the result: without them the rows differ.
      mha.position = nn::AttentionPosition::None;
      CHECK_FALSE(test::allclose(mha(x, x, x, std::nullopt, false, std::nullopt, true, true).output, full, 1e-6));
    }
  }
}

TEST_CASE("MultiheadAttention with rotary positions or ALiBi passes gradcheck; rotary through flash attention too") {
  for (auto position : {nn::AttentionPosition::Rotary, nn::AttentionPosition::ALiBi}) {
    CAPTURE(int(position));
    attn::Generator gen(6);
    nn::MultiheadAttention mha(4, 2, 0.0, true, gen);
    attn::nn::init::uniform_(mha.in_proj_bias, -0.5, 0.5, gen);
    mha.position = position;
    Inputs inputs{test::randn({2, 4, 4}, 7)};
    for (const Tensor& p : mha.parameters()) inputs.push_back(p);
    CHECK_GRADCHECK([&](const Inputs& in) { return mha(in[0], in[0], in[0], std::nullopt, false, std::nullopt, true, true).output; },
                    inputs);
  }
  attn::Generator gen(8);
  nn::MultiheadAttention mha(8, 2, 0.0, true, gen);
  mha.position = nn::AttentionPosition::Rotary;
  Tensor x = test::randn({1, 9, 8}, 9, false);
  Tensor plain = mha(x, x, x, std::nullopt, false, std::nullopt, true, true).output;
  mha.use_flash_attention = true;
  CHECK(test::allclose(mha(x, x, x, std::nullopt, false, std::nullopt, true, true).output, plain, 1e-13));
  mha.position = nn::AttentionPosition::ALiBi;
  CHECK_THROWS_WITH_SUBSTR(mha(x, x, x, std::nullopt, false), attn::ValueError, "cannot apply ALiBi");
}

TEST_CASE("rotary_embedding and ALiBi: bad inputs are named") {
  CHECK_THROWS_WITH_SUBSTR(nn::rotary_embedding(test::randn({2, 3, 5}, 1)), attn::ShapeError,
                           "rotary_embedding: expected x [..., T, d] with d even and positive, got [2, 3, 5]");
  CHECK_THROWS_WITH_SUBSTR(nn::rotary_embedding(test::randn({2, 4}, 1), 0, 1.0), attn::ValueError,
                           "base must be greater than 1");
  CHECK_THROWS_WITH_SUBSTR(nn::alibi_slopes(0), attn::ValueError, "num_heads must be positive");
}
