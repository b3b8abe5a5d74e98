// nn::flash_attention (nn/attention/flash_attention.hpp): the fused op and its composed
// teaching version against plain scaled_dot_product_attention, values and gradients, with
// every kind of mask, blocks that do and do not divide the lengths, queries that see no key,
// float32, any number of threads; against finite differences; against PyTorch's
// scaled_dot_product_attention (tools/reference/flash_attention.py); and bad inputs.
#include "../helpers.hpp"
#include "../reference.hpp"

#include "core/backend/parallel.hpp"

#include <array>
#include <optional>

using attn::Mask;
using attn::Shape;
using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace nn = attn::nn;

namespace {

// One problem: q [B, H, Tq, D], k and v [B, H_kv, Tk, D|Dv] (H_kv = H unless grouped), and its masks.
struct Case {
  std::size_t B, H, Tq, Tk, D, Dv;
  std::optional<Mask> key_padding;  // [B, Tk]
  std::optional<Mask> attn_mask;    // [Tq, Tk]
  bool causal = false;
  std::size_t window = 0;           // key j blocked for query i when |i - j| >= window
  std::size_t H_kv = 0;             // 0: H; else H_kv key-value heads, query head h reading h / (H / H_kv)
  std::size_t kv_heads() const { return H_kv ? H_kv : H; }
};

// The same masks as one [B, H, Tq, Tk] mask, for scaled_dot_product_attention.
std::optional<Mask> full_mask(const Case& c) {
  if (!c.key_padding && !c.attn_mask && !c.causal && !c.window) return std::nullopt;
  Mask m = Mask::from_shape({c.B, c.H, c.Tq, c.Tk});
  for (std::size_t b = 0; b < c.B; ++b)
    for (std::size_t h = 0; h < c.H; ++h)
      for (std::size_t i = 0; i < c.Tq; ++i)
        for (std::size_t j = 0; j < c.Tk; ++j)
          m(b, h, i, j) = (c.causal && j > i) || (c.key_padding && (*c.key_padding)(b, j)) ||
                          (c.attn_mask && (*c.attn_mask)(i, j)) ||
                          (c.window && (i >= j ? i - j : j - i) >= c.window);
  return m;
}

Mask padding(const std::vector<std::int64_t>& lengths, std::size_t Tk) {
  attn::Index l = attn::Index::from_shape({lengths.size()});
  for (std::size_t b = 0; b < lengths.size(); ++b) l(b) = lengths[b];
  return nn::padding_mask(l, Tk);
}

// A [Tq, Tk] mask with about a third of the pairs blocked, key 0 never (no empty rows).
Mask scattered(std::size_t Tq, std::size_t Tk, std::uint64_t seed) {
  const auto u = test::uniform({Tq, Tk}, 0.0, 1.0, seed, false).to_array();
  Mask m = Mask::from_shape({Tq, Tk});
  for (std::size_t i = 0; i < Tq; ++i)
    for (std::size_t j = 0; j < Tk; ++j) m(i, j) = j > 0 && u(i, j) < 0.35;
  return m;
}

// The output and the gradients of q, k and v for a fixed dL/doutput.
template <class F>
std::vector<Tensor> run(F attention, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& grad_out) {
  for (Tensor t : {q, k, v}) t.zero_grad();
  Tensor o = attention(q, k, v);
  o.backward(grad_out);
  return {o.detach(), q.grad(), k.grad(), v.grad()};
}

// Grouped key-value heads [B, H_kv, T, d] given to every query head of their group, [B, H, T, d]
// (a copy per head, through autograd: plain attention's reference for grouped heads).
Tensor per_query_head(const Tensor& kv, std::size_t H) {
  const std::size_t B = kv.size(0), G = kv.size(1), T = kv.size(2), d = kv.size(3);
  if (G == H) return kv;
  Tensor copies = attn::expand(attn::unsqueeze(kv, 2), {B, G, H / G, T, d});  // [B, G, H / G, T, d]
  return attn::reshape(copies, {long(B), long(H), long(T), long(d)});       // [B, H, T, d]
}

void check_against_plain(const Case& c, std::size_t block_q, std::size_t block_k, double tol = 1e-13) {
  const std::size_t G = c.kv_heads();
  Tensor q = test::randn({c.B, c.H, c.Tq, c.D}, 1), k = test::randn({c.B, G, c.Tk, c.D}, 2);
  Tensor v = test::randn({c.B, G, c.Tk, c.Dv}, 3), g = test::randn({c.B, c.H, c.Tq, c.Dv}, 4, false);
  const auto mask = full_mask(c);
  const auto plain = run(
      [&](auto& a, auto& b, auto& d) {
        return nn::scaled_dot_product_attention(a, per_query_head(b, c.H), per_query_head(d, c.H), mask).context;
      },
      q, k, v, g);
  auto flash = [&](auto& a, auto& b, auto& d) {
    return nn::flash_attention(a, b, d, c.key_padding, c.attn_mask, c.causal, block_q, block_k, c.window,
                               /*enable_gqa=*/G != c.H);
  };
  const auto fused = run(flash, q, k, v, g);
  std::vector<Tensor> composed;
  {
    attn::FusedOps off(false);
    composed = run(flash, q, k, v, g);
  }
  CHECK(fused[0].shape() == Shape{c.B, c.H, c.Tq, c.Dv});
  for (std::size_t i = 0; i < plain.size(); ++i) {
    CAPTURE(i);  // 0 output, 1 dq, 2 dk, 3 dv
    CHECK(test::allclose(fused[i], plain[i], tol));
    CHECK(test::allclose(composed[i], plain[i], tol));
  }
}

}  // namespace

TEST_CASE("flash_attention equals plain attention, fused and composed, values and gradients") {
  // (B, H, Tq, Tk, D, Dv) with block sizes that divide the lengths, do not, are 1, exceed them
  const std::vector<std::array<std::size_t, 8>> shapes = {
      {2, 3, 8, 8, 4, 4, 4, 4}, {2, 2, 7, 11, 5, 3, 3, 4}, {1, 1, 5, 6, 3, 2, 1, 1}, {3, 1, 4, 9, 2, 5, 64, 64},
      {1, 2, 13, 5, 4, 4, 5, 2}};
  for (const auto& s : shapes) {
    const Case base{s[0], s[1], s[2], s[3], s[4], s[5], std::nullopt, std::nullopt, false};
    const std::size_t bq = s[6], bk = s[7];
    CAPTURE(s[0]);
    CAPTURE(s[2]);
    CAPTURE(s[3]);
    CAPTURE(bq);
    CAPTURE(bk);
    std::vector<std::int64_t> lengths;
    for (std::size_t b = 0; b < base.B; ++b) lengths.push_back(static_cast<std::int64_t>(base.Tk - b % base.Tk));
    SUBCASE("no mask") { check_against_plain(base, bq, bk); }
    SUBCASE("key padding") {
      Case c = base;
      c.key_padding = padding(lengths, c.Tk);
      check_against_plain(c, bq, bk);
    }
    SUBCASE("causal") {
      Case c = base;
      c.causal = true;
      check_against_plain(c, bq, bk);
    }
    SUBCASE("attn_mask and key padding") {
      Case c = base;
      c.attn_mask = scattered(c.Tq, c.Tk, 9);
      c.key_padding = padding(lengths, c.Tk);
      check_against_plain(c, bq, bk);
    }
    SUBCASE("causal and key padding") {
      Case c = base;
      c.causal = true;
      c.key_padding = padding(lengths, c.Tk);
      check_against_plain(c, bq, bk);
    }
    // Windows narrower than a block, as wide as one, and wider than two, so that whole blocks are
    // skipped on both sides of the diagonal (and, with a padded key, some rows see no key).
    for (std::size_t window : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(9)}) {
      CAPTURE(window);
      SUBCASE("window") {
        Case c = base;
        c.window = window;
        check_against_plain(c, bq, bk);
      }
      SUBCASE("window, causal, key padding and attn_mask") {
        Case c = base;
        c.window = window;
        c.causal = true;
        c.key_padding = padding(lengths, c.Tk);
        c.attn_mask = scattered(c.Tq, c.Tk, 10);
        check_against_plain(c, bq, bk);
      }
    }
  }
}

TEST_CASE("flash_attention with grouped key-value heads (enable_gqa) equals plain attention on per-head copies") {
  // (B, H, H_kv, Tq, Tk, D, Dv, block) with 1 < H_kv < H, and multi-query H_kv = 1
  const std::vector<std::array<std::size_t, 8>> shapes = {
      {2, 4, 2, 7, 7, 3, 3, 3}, {1, 6, 3, 9, 5, 4, 2, 4}, {2, 6, 2, 5, 8, 2, 3, 2}, {2, 4, 1, 6, 6, 3, 3, 4}};
  for (const auto& s : shapes) {
    Case base{s[0], s[1], s[3], s[4], s[5], s[6], std::nullopt, std::nullopt, false};
    base.H_kv = s[2];
    CAPTURE(s[1]);
    CAPTURE(s[2]);
    SUBCASE("no mask") { check_against_plain(base, s[7], s[7]); }
    SUBCASE("causal") {
      Case c = base;
      c.causal = true;
      check_against_plain(c, s[7], s[7]);
    }
    SUBCASE("causal, window and key padding") {
      Case c = base;
      c.causal = true;
      c.window = 3;
      c.key_padding = padding(std::vector<std::int64_t>(c.B, static_cast<std::int64_t>(c.Tk - 1)), c.Tk);
      check_against_plain(c, s[7], s[7]);
    }
  }
  SUBCASE("gradients against finite differences, fused and composed") {
    Tensor q = test::randn({1, 4, 5, 3}, 71), k = test::randn({1, 2, 5, 3}, 72), v = test::randn({1, 2, 5, 2}, 73);
    auto f = [](const Inputs& in) {
      return nn::flash_attention(in[0], in[1], in[2], std::nullopt, std::nullopt, true, 2, 2, 3, true);
    };
    CHECK_GRADCHECK(f, {q, k, v});
    attn::FusedOps off(false);
    CHECK_GRADCHECK(f, {q, k, v});
  }
  SUBCASE("fewer key-value heads without enable_gqa, or heads that do not divide, are named") {
    Tensor q = test::randn({1, 4, 5, 3}, 74), k = test::randn({1, 2, 5, 3}, 75), k3 = test::randn({1, 3, 5, 3}, 76);
    CHECK_THROWS_WITH_SUBSTR(nn::flash_attention(q, k, k), attn::ShapeError, "need enable_gqa = true");
    CHECK_THROWS_WITH_SUBSTR(nn::flash_attention(q, k3, k3, std::nullopt, std::nullopt, false, 4, 4, 0, true),
                             attn::ShapeError, "dividing query's");
  }
}

TEST_CASE("flash_attention: a query that sees no key gets output 0 and gradient 0, as masked_softmax") {
  // Sequence 1 has no keys at all; under the causal mask with a padded first key, query 0 of
  // sequence 0 sees none either.
  Case c{2, 2, 5, 6, 3, 3, padding({6, 0}, 6), std::nullopt, false};
  check_against_plain(c, 2, 4);
  Mask first_padded = Mask::from_shape({2, 6});
  for (std::size_t j = 0; j < 6; ++j) first_padded(0, j) = first_padded(1, j) = j == 0;
  Case d{2, 1, 5, 6, 3, 3, first_padded, std::nullopt, true};
  check_against_plain(d, 2, 2);
  Tensor q = test::randn({2, 1, 5, 3}, 5), k = test::randn({2, 1, 6, 3}, 6), v = test::randn({2, 1, 6, 3}, 7);
  Tensor o = nn::flash_attention(q, k, v, first_padded, std::nullopt, true, 2, 2);
  for (std::size_t d2 = 0; d2 < 3; ++d2) CHECK(o.to_array()(0, 0, 0, d2) == 0.0);
}

TEST_CASE("flash_attention: gradients against finite differences, fused and composed") {
  Tensor q = test::randn({2, 5, 3}, 11), k = test::randn({2, 7, 3}, 12), v = test::randn({2, 7, 2}, 13);
  const Mask kpm = padding({7, 4}, 7);
  auto f = [&](const Inputs& in) { return nn::flash_attention(in[0], in[1], in[2], kpm, std::nullopt, false, 2, 3); };
  CHECK_GRADCHECK(f, {q, k, v});
  auto causal = [&](const Inputs& in) {
    return nn::flash_attention(in[0], in[1], in[2], std::nullopt, std::nullopt, true, 3, 2);
  };
  CHECK_GRADCHECK(causal, {q, k, v});
  attn::FusedOps off(false);
  CHECK_GRADCHECK(f, {q, k, v});
  // One tensor as query, key and value: the three gradients add up.
  Tensor x = test::randn({1, 6, 4}, 14);
  auto self = [](const Inputs& in) { return nn::flash_attention(in[0], in[0], in[0], std::nullopt, std::nullopt, true, 4, 4); };
  CHECK_GRADCHECK(self, {x});
}

TEST_CASE("flash_attention: with only some inputs wanting gradients, those get plain attention's") {
  Tensor q = test::randn({1, 4, 3}, 21), k = test::randn({1, 5, 3}, 22, false), v = test::randn({1, 5, 3}, 23, false);
  Tensor g = test::randn({1, 4, 3}, 24, false);
  nn::flash_attention(q, k, v, std::nullopt, std::nullopt, true, 2, 2).backward(g);
  const Tensor dq = q.grad();
  q.zero_grad();
  Mask causal45 = Mask::from_shape({4, 5});  // top-left causal: key j blocked for query i when j > i
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 5; ++j) causal45(i, j) = j > i;
  nn::scaled_dot_product_attention(q, k, v, causal45).context.backward(g);
  CHECK(test::allclose(dq, q.grad(), 1e-13));
  CHECK(!k.grad().defined());
  Tensor q2 = test::randn({1, 4, 3}, 21, false), v2 = test::randn({1, 5, 3}, 23);
  nn::flash_attention(q2, k, v2, std::nullopt, std::nullopt, false, 2, 2).backward(g);
  const Tensor dv = v2.grad();
  v2.zero_grad();
  nn::scaled_dot_product_attention(q2, k, v2).context.backward(g);
  CHECK(test::allclose(dv, v2.grad(), 1e-13));
  CHECK(!q2.grad().defined());
}

TEST_CASE("flash_attention in float32 agrees with float64, and with plain float32 attention") {
  Tensor q = test::randn({2, 2, 33, 8}, 31), k = test::randn({2, 2, 40, 8}, 32), v = test::randn({2, 2, 40, 8}, 33);
  const Mask kpm = padding({40, 17}, 40);
  Tensor o64 = nn::flash_attention(q, k, v, kpm, std::nullopt, true, 16, 16).detach();
  auto f32 = [](const Tensor& t) { return t.detach().to(attn::Dtype::Float32); };
  Tensor o32 = nn::flash_attention(f32(q), f32(k), f32(v), kpm, std::nullopt, true, 16, 16);
  CHECK(o32.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(o32, o64, 1e-5));
  Case c{2, 2, 33, 40, 8, 8, kpm, std::nullopt, true};
  const auto mask = full_mask(c);
  CHECK(test::allclose(o32, nn::scaled_dot_product_attention(f32(q), f32(k), f32(v), mask).context, 1e-5));
  // Gradients, recomputed in float32 from the float32 log-sum-exp, against float64's.
  Tensor g = test::randn({2, 2, 33, 8}, 34, false);
  const auto grads64 = run([&](auto& a, auto& b, auto& c) {
    return nn::flash_attention(a, b, c, kpm, std::nullopt, true, 16, 16);
  }, q, k, v, g);
  Tensor q32 = f32(q).requires_grad_(), k32 = f32(k).requires_grad_(), v32 = f32(v).requires_grad_();
  const auto grads32 = run([&](auto& a, auto& b, auto& c) {
    return nn::flash_attention(a, b, c, kpm, std::nullopt, true, 16, 16);
  }, q32, k32, v32, f32(g));
  for (std::size_t i = 1; i < 4; ++i) {
    CAPTURE(i);
    CHECK(test::allclose(grads32[i], grads64[i], 1e-4));
  }
}

TEST_CASE("flash_attention gives the same bits on 1, 2 and 3 threads") {
  const int before = attn::get_num_threads();
  Tensor q = test::randn({2, 3, 70, 8}, 41), k = test::randn({2, 3, 70, 8}, 42), v = test::randn({2, 3, 70, 8}, 43);
  Tensor g = test::randn({2, 3, 70, 8}, 44, false);
  std::vector<std::vector<Tensor>> results;
  for (int threads : {1, 2, 3}) {
    attn::set_num_threads(threads);
    results.push_back(run([](auto& a, auto& b, auto& c) {
      return nn::flash_attention(a, b, c, std::nullopt, std::nullopt, true, 16, 16);
    }, q, k, v, g));
  }
  attn::set_num_threads(before);
  for (std::size_t t = 1; t < results.size(); ++t)
    for (std::size_t i = 0; i < 4; ++i) CHECK(test::allclose(results[t][i], results[0][i], 0.0));
}

TEST_CASE("flash_attention equals PyTorch's scaled_dot_product_attention") {
  test::Reference ref("flash_attention");
  for (const bool fused : {true, false})
  for (const char* name : {"padded", "causal", "causal_cross", "cross_mask"}) {
    CAPTURE(fused);
    CAPTURE(name);
    attn::FusedOps switch_(fused);
    Tensor q = ref.tensor(name, "query", true), k = ref.tensor(name, "key", true), v = ref.tensor(name, "value", true);
    std::optional<Mask> kpm, am;
    if (ref.has(name, "key_padding_mask")) kpm = ref.mask(name, "key_padding_mask");
    if (ref.has(name, "attn_mask")) am = ref.mask(name, "attn_mask");
    const bool causal = ref.has(name, "is_causal");
    Tensor o = nn::flash_attention(q, k, v, kpm, am, causal, 4, 3);
    CHECK(test::allclose(o, ref.tensor(name, "output"), 1e-13));
    o.backward(ref.tensor(name, "grad_output"));
    CHECK(test::allclose(q.grad(), ref.tensor(name, "grad_query"), 1e-13));
    CHECK(test::allclose(k.grad(), ref.tensor(name, "grad_key"), 1e-13));
    CHECK(test::allclose(v.grad(), ref.tensor(name, "grad_value"), 1e-13));
  }
}

TEST_CASE("flash_attention: bad inputs are named") {
  Tensor q = test::randn({2, 4, 3}, 51), k = test::randn({2, 5, 3}, 52), v = test::randn({2, 5, 2}, 53);
  CHECK_THROWS_WITH_SUBSTR(nn::flash_attention(q, test::randn({2, 5, 4}, 54), v), attn::ShapeError,
                           "expected query [..., Tq, D], key [..., Tk, D]");
  CHECK_THROWS_WITH_SUBSTR(nn::flash_attention(q, k, test::randn({3, 5, 2}, 55)), attn::ShapeError, "value [3, 5, 2]");
  CHECK_THROWS_WITH_SUBSTR(nn::flash_attention(q, k, v, padding({5, 5, 5}, 5)), attn::ShapeError,
                           "expected key_padding_mask [B, Tk]");
  CHECK_THROWS_WITH_SUBSTR(nn::flash_attention(q, k, v, std::nullopt, Mask::from_shape({4, 4})), attn::ShapeError,
                           "expected attn_mask [Tq, Tk] = [4, 5]");
  CHECK_THROWS_WITH_SUBSTR(nn::flash_attention(q, k, v, std::nullopt, std::nullopt, false, 0, 4), attn::ValueError,
                           "block sizes must be positive");
  CHECK_THROWS_WITH_SUBSTR(nn::flash_attention(q, k, v, std::nullopt, std::nullopt, false, 4, 4).defined() &&
                               nn::flash_attention(Tensor(), k, v).defined(),
                           attn::ValueError, "an input is undefined");
}

TEST_CASE("MultiheadAttention with use_flash_attention equals it without, values and gradients") {
  attn::Generator gen(61);
  nn::MultiheadAttention mha(8, 2, /*dropout=*/0.1, true, gen);
  mha.eval();  // no dropout: flash attention drops no weights
  Tensor x = test::randn({2, 6, 8}, 62), memory = test::randn({2, 9, 8}, 63);
  Tensor g = test::randn({2, 6, 8}, 64, false);
  const Mask kpm = padding({9, 5}, 9);
  const Mask causal = nn::causal_mask(6);
  auto grads = [&](bool flash, bool self) {
    mha.use_flash_attention = flash;
    mha.zero_grad();
    for (Tensor t : {x, memory}) t.zero_grad();
    Tensor out = self ? mha(x, x, x, padding({6, 4}, 6), false, causal).output
                      : mha(x, memory, memory, kpm, false).output;
    out.backward(g);
    std::vector<Tensor> r{out.detach(), x.grad()};
    if (!self) r.push_back(memory.grad());
    for (const Tensor& p : mha.parameters()) r.push_back(p.grad());
    return r;
  };
  for (bool self : {true, false}) {
    CAPTURE(self);
    const auto plain = grads(false, self), flash = grads(true, self);
    REQUIRE(plain.size() == flash.size());
    for (std::size_t i = 0; i < plain.size(); ++i) {
      CAPTURE(i);
      CHECK(test::allclose(flash[i], plain[i], 1e-13));
    }
    CHECK(!mha.last_weights().defined());
  }
  // is_causal: the same as the causal attn_mask, on both paths, alone and with key padding.
  for (bool flash : {false, true}) {
    for (bool padded : {false, true}) {
      CAPTURE(flash);
      CAPTURE(padded);
      const std::optional<Mask> kp = padded ? std::optional<Mask>(padding({6, 4}, 6)) : std::nullopt;
      mha.use_flash_attention = flash;
      Tensor with_flag = mha(x, x, x, kp, false, std::nullopt, true, /*is_causal=*/true).output;
      mha.use_flash_attention = false;
      Tensor with_mask = mha(x, x, x, kp, false, causal).output;
      CHECK(test::allclose(with_flag, with_mask, 1e-13));
    }
  }
  mha.use_flash_attention = true;
  CHECK_THROWS_WITH_SUBSTR(mha(x, x, x), attn::ValueError, "need_weights = false");
  CHECK_THROWS_WITH_SUBSTR(mha(x, x, x, std::nullopt, false, Mask::from_shape({4, 6, 6})), attn::ShapeError,
                           "attn_mask must be [Tq, Tk]");
  mha.train();
  CHECK_THROWS_WITH_SUBSTR(mha(x, x, x, std::nullopt, false), attn::ValueError, "drops no weights");
}

TEST_CASE("MultiheadAttention with use_flash_attention equals it without: grouped heads and windows") {
  // 1 < num_kv_heads < num_heads (a head reading the wrong key-value head shows here), and
  // multi-query; with and without a causal mask and a sliding window, values and gradients.
  for (std::size_t kv_heads : {std::size_t(2), std::size_t(1)}) {
    for (bool causal : {false, true}) {
      for (std::size_t window : {std::size_t(0), std::size_t(3)}) {
        CAPTURE(kv_heads);
        CAPTURE(causal);
        CAPTURE(window);
        attn::Generator gen(81);
        nn::MultiheadAttention mha(8, 4, nn::GroupedQuery{kv_heads}, 0.0, true, gen);
        mha.window = window;
        Tensor x = test::randn({2, 7, 8}, 82), g = test::randn({2, 7, 8}, 83, false);
        auto grads = [&](bool flash) {
          mha.use_flash_attention = flash;
          mha.zero_grad();
          x.zero_grad();
          Tensor out = mha(x, x, x, padding({7, 5}, 7), false, std::nullopt, true, causal).output;
          out.backward(g);
          std::vector<Tensor> r{out.detach(), x.grad()};
          for (const Tensor& p : mha.parameters()) r.push_back(p.grad());
          return r;
        };
        const auto plain = grads(false), flash = grads(true);
        REQUIRE(plain.size() == flash.size());
        for (std::size_t i = 0; i < plain.size(); ++i) {
          CAPTURE(i);
          CHECK(test::allclose(flash[i], plain[i], 1e-13));
        }
      }
    }
  }
}
