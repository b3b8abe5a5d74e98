// The pieces of nn::MultiheadAttention that a decoder with a KV cache uses (project_kv,
// forward_cached, forward_step; nn/attention/kv_cache.hpp): the same outputs and weights as
// forward() over the whole prefix, step by step and a block at a time, and bad inputs.
#include "../helpers.hpp"

#include <xtensor/xview.hpp>

using attn::Mask;
using attn::Tensor;
namespace nn = attn::nn;

namespace {

// A layer of E = 6 and 3 heads. Biases start at 0 (as PyTorch's): they get values, so that the checks cover them.
struct Layer {
  attn::Generator gen;
  nn::MultiheadAttention mha;
  explicit Layer(std::uint64_t seed) : gen(seed), mha(6, 3, 0.0, true, gen) {
    mha.in_proj_bias.data<double>() = test::randn({18}, seed + 1, false).to_array();
    mha.out_proj.bias.data<double>() = test::randn({6}, seed + 2, false).to_array();
  }
};

}  // namespace

TEST_CASE("forward_cached over project_kv equals forward, with masks") {
  Layer layer(1);
  nn::MultiheadAttention& mha = layer.mha;
  Tensor q = test::randn({2, 4, 6}, 10), kv = test::randn({2, 5, 6}, 11);
  const Mask padding = nn::padding_mask(attn::Index{5, 3}, 5);
  auto full = mha(q, kv, kv, padding, true, std::nullopt, false);
  const nn::KVCache projected = mha.project_kv(kv, kv);
  auto cached = mha.forward_cached(q, projected, padding, true, std::nullopt, false);
  CHECK(test::allclose(cached.output, full.output, 1e-14));
  CHECK(test::allclose(cached.weights, full.weights, 1e-14));
  // Both against the projections written out: W_k, W_v are rows 6..11 and 12..17 of in_proj.
  auto project = [&](const Tensor& x, std::size_t row) {
    Tensor y = attn::linear(x, attn::narrow(mha.in_proj_weight, 0, row, 6), attn::narrow(mha.in_proj_bias, 0, row, 6));
    return attn::transpose(attn::reshape(y, {2, long(x.size(1)), 3, 2}), 1, 2);  // [2, T, 6] -> [2, T, 3, 2] -> [2, 3, T, 2]
  };
  CHECK(test::allclose(projected.key, project(kv, 6), 1e-14));
  CHECK(test::allclose(projected.value, project(kv, 12), 1e-14));
  Mask blocked = Mask::from_shape({2, 1, 1, 5});  // the padding, broadcast over heads and queries
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t j = 0; j < 5; ++j) blocked(b, 0, 0, j) = padding(b, j);
  auto heads = nn::scaled_dot_product_attention(project(q, 0), project(kv, 6), project(kv, 12), blocked);
  Tensor joined = attn::reshape(attn::transpose(heads.context, 1, 2), {2, 4, 6});  // [2, 3, 4, 2] -> [2, 4, 3, 2] -> [2, 4, 6]
  Tensor by_hand = mha.out_proj(joined);                                            // [2, 4, 6]
  CHECK(test::allclose(full.output, by_hand, 1e-13));
  CHECK(test::allclose(full.weights, heads.weights, 1e-13));  // [2, 3, 4, 5]
}

TEST_CASE("forward_step, one position at a time or a block at a time, gives causal forward()'s rows") {
  Layer layer(2);
  nn::MultiheadAttention& mha = layer.mha;
  const std::size_t T = 6;
  Tensor x = test::randn({2, T, 6}, 20, false);
  auto full = mha(x, x, x, std::nullopt, true, nn::causal_mask(T), false);  // output [2, T, 6], weights [2, 3, T, T]
  const auto out = full.output.to_array(), w = full.weights.to_array();
  nn::KVCache cache;
  for (std::size_t t = 0; t < T; ++t) {
    CAPTURE(t);
    auto step = mha.forward_step(attn::narrow(x, 1, t, 1), cache, true, false);  // [2, 1, 6], [2, 3, 1, t + 1]
    CHECK(cache.length() == t + 1);
    CHECK(cache.key.shape() == attn::Shape{2, 3, t + 1, 2});
    CHECK(xt::allclose(xt::view(step.output.to_array(), xt::all(), 0), xt::view(out, xt::all(), t), 0.0, 1e-13));
    CHECK(xt::allclose(xt::view(step.weights.to_array(), xt::all(), xt::all(), 0),
                       xt::view(w, xt::all(), xt::all(), t, xt::range(0, t + 1)), 0.0, 1e-13));
  }
  // Two positions, then the remaining four as one block (the block's later keys are hidden from its earlier queries).
  nn::KVCache blocks;
  auto first = mha.forward_step(attn::narrow(x, 1, 0, 2), blocks);
  auto rest = mha.forward_step(attn::narrow(x, 1, 2, T - 2), blocks);
  CHECK(blocks.length() == T);
  CHECK(test::allclose(attn::concat({first.output, rest.output}, 1), full.output, 1e-13));
  CHECK(test::allclose(blocks.key, cache.key, 1e-14));
  CHECK(test::allclose(blocks.value, cache.value, 1e-14));
}

TEST_CASE("forward_step: gradients flow to the layer's parameters as through forward") {
  Layer layer(3);
  nn::MultiheadAttention& mha = layer.mha;
  Tensor x = test::randn({1, 3, 6}, 30, false), g = test::randn({1, 3, 6}, 31, false);
  mha.zero_grad();
  mha(x, x, x, std::nullopt, false, nn::causal_mask(3)).output.backward(g);
  std::vector<Tensor> plain;
  for (const Tensor& p : mha.parameters()) plain.push_back(p.grad());
  mha.zero_grad();
  nn::KVCache cache;
  std::vector<Tensor> rows;
  for (std::size_t t = 0; t < 3; ++t) rows.push_back(mha.forward_step(attn::narrow(x, 1, t, 1), cache).output);
  attn::concat(rows, 1).backward(g);
  std::size_t i = 0;
  for (const Tensor& p : mha.parameters()) CHECK(test::allclose(p.grad(), plain[i++], 1e-13));
}

TEST_CASE("the cache's bad inputs are named") {
  Layer layer(4);
  nn::MultiheadAttention& mha = layer.mha;
  nn::KVCache cache;
  mha.forward_step(test::randn({2, 1, 6}, 40, false), cache);
  CHECK_THROWS_WITH_SUBSTR(mha.forward_step(test::randn({3, 1, 6}, 41, false), cache), attn::ShapeError,
                           "the cache holds 2 sequences, x 3");
  CHECK_THROWS_WITH_SUBSTR(mha.forward_step(test::randn({2, 1, 5}, 42, false), cache), attn::ShapeError,
                           "expected x [B, Tn, 6]");
  CHECK_THROWS_WITH_SUBSTR(mha.forward_cached(test::randn({2, 1, 6}, 43, false), nn::KVCache{}), attn::ShapeError,
                           "expected cached keys and values [B, H_kv, Tk, d]");
  CHECK_THROWS_WITH_SUBSTR(mha.project_kv(test::randn({2, 3, 6}, 44, false), test::randn({2, 4, 6}, 45, false)),
                           attn::ShapeError, "expected key and value [B, Tk, 6]");
}

TEST_CASE("grouped-query attention equals multi-head attention with each key-value head repeated") {
  attn::Generator gen(50);
  nn::MultiheadAttention gqa(8, 4, nn::GroupedQuery{2}, 0.0, true, gen);  // d = 2, groups of 2 query heads
  CHECK(gqa.in_proj_weight.shape() == attn::Shape{8 + 2 * 2 * 2, 8});
  gqa.in_proj_bias.data<double>() = test::randn({16}, 51, false).to_array();
  // The same layer as plain multi-head attention: key and value rows of kv head h / 2 for head h.
  nn::MultiheadAttention full(8, 4, 0.0, true, gen);
  auto W = gqa.in_proj_weight.to_array(), b = gqa.in_proj_bias.to_array();
  auto& Wf = full.in_proj_weight.data<double>();
  auto& bf = full.in_proj_bias.data<double>();
  for (std::size_t r = 0; r < 8; ++r) {  // queries: the same rows
    xt::row(Wf, r) = xt::row(W, r);
    bf(r) = b(r);
  }
  for (std::size_t part = 0; part < 2; ++part)  // keys, then values
    for (std::size_t h = 0; h < 4; ++h)
      for (std::size_t c = 0; c < 2; ++c) {
        const std::size_t to = 8 + part * 8 + h * 2 + c, from = 8 + part * 4 + (h / 2) * 2 + c;
        xt::row(Wf, to) = xt::row(W, from);
        bf(to) = b(from);
      }
  full.out_proj.weight.data<double>() = gqa.out_proj.weight.to_array();
  Tensor q = test::randn({2, 3, 8}, 52, false), kv = test::randn({2, 5, 8}, 53, false);
  CHECK(test::allclose(gqa(q, kv, kv, std::nullopt, false).output, full(q, kv, kv, std::nullopt, false).output, 1e-13));
  // The cache holds the key-value heads only: half the size here, a quarter with one (multi-query).
  nn::KVCache cache;
  gqa.forward_step(q, cache);
  CHECK(cache.key.shape() == attn::Shape{2, 2, 3, 2});
  nn::MultiheadAttention mqa(8, 4, nn::GroupedQuery{1}, 0.0, true, gen);
  nn::KVCache one;
  mqa.forward_step(q, one);
  CHECK(one.key.shape() == attn::Shape{2, 1, 3, 2});
  // Gradients, through the repeated heads, against finite differences.
  auto f = [&](const std::vector<Tensor>& in) { return gqa(in[0], in[1], in[1], std::nullopt, false).output; };
  CHECK_GRADCHECK(f, test::with_parameters(gqa, {test::randn({1, 2, 8}, 54), test::randn({1, 3, 8}, 55)}));
  CHECK_THROWS_WITH_SUBSTR(nn::MultiheadAttention(8, 4, nn::GroupedQuery{3}), attn::ValueError,
                           "num_kv_heads (3) must be a positive divisor of num_heads (4)");
}

TEST_CASE("sliding window: forward() equals the windowed mask, and forward_step keeps the last `window` positions") {
  Layer layer(60);
  nn::MultiheadAttention& mha = layer.mha;
  const std::size_t T = 7, W = 3;
  Tensor x = test::randn({2, T, 6}, 61, false);
  Mask windowed = Mask::from_shape({T, T});  // causal, and at most W - 1 positions back
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j < T; ++j) windowed(i, j) = j > i || i - j >= W;
  auto expected = mha(x, x, x, std::nullopt, true, windowed, false);
  mha.window = W;
  auto with_window = mha(x, x, x, std::nullopt, true, nn::causal_mask(T), false);
  CHECK(test::allclose(with_window.output, expected.output, 1e-14));
  nn::KVCache cache;
  for (std::size_t t = 0; t < T; ++t) {
    CAPTURE(t);
    auto step = mha.forward_step(attn::narrow(x, 1, t, 1), cache);
    CHECK(test::allclose(step.output, attn::narrow(expected.output, 1, t, 1), 1e-13));
    CHECK(cache.length() == std::min(t + 1, W));
    CHECK(cache.end() == t + 1);
  }
  // A block of 4 after 2 single steps, against the same rows.
  nn::KVCache mixed;
  mha.forward_step(attn::narrow(x, 1, 0, 1), mixed);
  mha.forward_step(attn::narrow(x, 1, 1, 1), mixed);
  auto block = mha.forward_step(attn::narrow(x, 1, 2, 4), mixed);
  CHECK(test::allclose(block.output, attn::narrow(expected.output, 1, 2, 4), 1e-13));
  CHECK(mixed.start == 6 - W);
}
