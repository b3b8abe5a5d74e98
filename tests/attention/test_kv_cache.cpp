// The pieces of nn::MultiheadAttention that a decoder with a KV cache uses (project_kv,
// forward_cached, forward_step; nn/attention/kv_cache.hpp): the same outputs and weights as
// forward() over the whole prefix, step by step and a block at a time, and bad inputs.
#include "../helpers.hpp"

#include <xtensor/xview.hpp>

using attn::Mask;
using attn::Tensor;
namespace nn = attn::nn;

namespace {

// Biases start at 0 (as PyTorch's): give them values, so that the checks cover them.
void give_biases(nn::MultiheadAttention& mha, std::uint64_t seed) {
  mha.in_proj_bias.data<double>() = test::randn({18}, seed + 1, false).to_array();
  mha.out_proj.bias.data<double>() = test::randn({6}, seed + 2, false).to_array();
}

}  // namespace

TEST_CASE("forward_cached over project_kv equals forward, with masks") {
  attn::Generator gen(1);
  nn::MultiheadAttention mha(6, 3, 0.0, true, gen);
  give_biases(mha, 1);
  Tensor q = test::randn({2, 4, 6}, 10), kv = test::randn({2, 5, 6}, 11);
  const Mask padding = nn::padding_mask(attn::Index{5, 3}, 5);
  auto full = mha(q, kv, kv, padding, true, std::nullopt, false);
  auto cached = mha.forward_cached(q, mha.project_kv(kv, kv), padding, true, std::nullopt, false);
  CHECK(test::allclose(cached.output, full.output, 1e-14));
  CHECK(test::allclose(cached.weights, full.weights, 1e-14));
}

TEST_CASE("forward_step, one position at a time or a block at a time, gives causal forward()'s rows") {
  attn::Generator gen(2);
  nn::MultiheadAttention mha(6, 3, 0.0, true, gen);
  give_biases(mha, 2);
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
  attn::Generator gen(3);
  nn::MultiheadAttention mha(6, 3, 0.0, true, gen);
  give_biases(mha, 3);
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
  attn::Generator gen(4);
  nn::MultiheadAttention mha(6, 3, 0.0, true, gen);
  give_biases(mha, 4);
  nn::KVCache cache;
  mha.forward_step(test::randn({2, 1, 6}, 40, false), cache);
  CHECK_THROWS_WITH_SUBSTR(mha.forward_step(test::randn({3, 1, 6}, 41, false), cache), attn::ShapeError,
                           "the cache holds 2 sequences, x 3");
  CHECK_THROWS_WITH_SUBSTR(mha.forward_step(test::randn({2, 1, 5}, 42, false), cache), attn::ShapeError,
                           "expected x [B, Tn, 6]");
  CHECK_THROWS_WITH_SUBSTR(mha.forward_cached(test::randn({2, 1, 6}, 43, false), nn::KVCache{}), attn::ShapeError,
                           "expected cached keys and values [B, H, Tk, d]");
  CHECK_THROWS_WITH_SUBSTR(mha.project_kv(test::randn({2, 3, 6}, 44, false), test::randn({2, 4, 6}, 45, false)),
                           attn::ShapeError, "expected key and value [B, Tk, 6]");
}
