// conv1d against PyTorch, nn::Conv1d, convolutional attention and its copy mixture.
#include "../helpers.hpp"
#include "../reference.hpp"
#include "models/registry.hpp"
#include "decode/decode.hpp"
#include "models/conv_attention.hpp"

#include <xtensor/xview.hpp>

#include <cmath>

using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace nn = attn::nn;

namespace {

using test::with_parameters;

Tensor conv_case(const test::Reference& ref, const std::string& c, const Tensor& x, const Tensor& w, const Tensor& b) {
  if (c == "same_odd" || c == "same_even") return attn::conv1d(x, w, b, "same");
  if (c == "padding_1") return attn::conv1d(x, w, b, 1);
  (void)ref;
  return attn::conv1d(x, w, b);
}

}  // namespace

TEST_CASE("conv1d equals torch.nn.functional.conv1d, values and gradients") {
  const test::Reference ref("core_conv");
  for (const std::string c : {"valid", "padding_1", "same_odd", "same_even", "no_bias"}) {
    CAPTURE(c);
    Tensor x = ref.tensor(c, "x", true), w = ref.tensor(c, "weight", true);
    Tensor b = ref.has(c, "bias") ? ref.tensor(c, "bias", true) : Tensor();
    Tensor y = conv_case(ref, c, x, w, b);
    CHECK(test::allclose(y, ref.tensor(c, "y"), 1e-12));
    attn::sum(attn::mul(y, ref.tensor(c, "grad_y"))).backward();
    CHECK(test::allclose(x.grad(), ref.tensor(c, "grad_x"), 1e-12));
    CHECK(test::allclose(w.grad(), ref.tensor(c, "grad_weight"), 1e-12));
    if (b.defined()) CHECK(test::allclose(b.grad(), ref.tensor(c, "grad_bias"), 1e-12));
  }
}

TEST_CASE("conv1d gradcheck in double, with and without padding") {
  Tensor x = test::randn({2, 3, 6}, 1), w = test::randn({4, 3, 3}, 2), b = test::randn({4}, 3);
  CHECK_GRADCHECK([](const Inputs& in) { return attn::conv1d(in[0], in[1], in[2]); }, {x, w, b});
  CHECK_GRADCHECK([](const Inputs& in) { return attn::conv1d(in[0], in[1], in[2], "same"); }, {x, w, b});
  Tensor w4 = test::randn({2, 3, 4}, 4);
  CHECK_GRADCHECK([](const Inputs& in) { return attn::conv1d(in[0], in[1], Tensor(), "same"); }, {x, w4});
}

TEST_CASE("conv1d and Conv1d refuse bad shapes by name") {
  Tensor x = attn::zeros({2, 3, 5});
  CHECK_THROWS_WITH_SUBSTR(attn::conv1d(attn::zeros({3, 5}), attn::zeros({1, 3, 2})), attn::ShapeError,
                           "conv1d: expected input [N, C_in, L]");
  CHECK_THROWS_WITH_SUBSTR(attn::conv1d(x, attn::zeros({1, 2, 2})), attn::ShapeError, "expected weight [C_out, 3");
  CHECK_THROWS_WITH_SUBSTR(attn::conv1d(x, attn::zeros({1, 3, 2}), attn::zeros({2})), attn::ShapeError,
                           "expected bias [1]");
  CHECK_THROWS_WITH_SUBSTR(attn::conv1d(x, attn::zeros({1, 3, 7})), attn::ShapeError, "shorter than the kernel");
  CHECK_THROWS_WITH_SUBSTR(attn::conv1d(x, attn::zeros({1, 3, 2}), Tensor(), "full"), attn::ValueError,
                           "padding must be");
  nn::Conv1d conv(3, 4, 3, "same");
  CHECK(conv(x).shape() == attn::Shape{2, 4, 5});
  CHECK(nn::Conv1d(3, 4, 3)(x).shape() == attn::Shape{2, 4, 3});
  CHECK(nn::Conv1d(3, 4, 3, 2)(x).shape() == attn::Shape{2, 4, 7});
  CHECK_THROWS_WITH_SUBSTR(conv(attn::zeros({2, 2, 5})), attn::ShapeError, "Conv1d: expected input [N, 3, L]");
  CHECK_THROWS_WITH_SUBSTR(nn::Conv1d(3, 4, 0), attn::ValueError, "kernel_size must be >= 1");
  CHECK_THROWS_WITH_SUBSTR(nn::Conv1d(3, 4, 3, "half"), attn::ValueError, "padding must be");
  // PyTorch's initial bound 1/sqrt(in * K)
  const double bound = 1.0 / std::sqrt(9.0);
  CHECK(xt::amax(xt::abs(conv.weight.to_array()))() <= bound);
}

TEST_CASE("convolutional attention: gradcheck of the layer and the copy head") {
  attn::manual_seed(7);
  nn::ConvolutionalAttention layer(3, 4, 2, 3, 3, 3, /*copy=*/true);
  Tensor e = test::randn({2, 5, 3}, 11), h = test::randn({2, 2, 4}, 12);
  const attn::Mask mask = nn::padding_mask(attn::Index{5, 3}, 5);
  CHECK_GRADCHECK([&](const Inputs& in) { return layer(in[0], layer.features(in[0]), in[1], mask).context; },
                  with_parameters(layer, {e, h}));
  CHECK_GRADCHECK([&](const Inputs& in) { return layer(in[0], layer.features(in[0]), in[1], mask).copy_weights; },
                  with_parameters(layer, {e, h}));
  CHECK_GRADCHECK([&](const Inputs& in) { return layer(in[0], layer.features(in[0]), in[1], mask).copy_gate; },
                  with_parameters(layer, {e, h}));
}

TEST_CASE("convolutional attention: gradcheck through the masked features, with padding") {
  attn::manual_seed(9);
  nn::ConvolutionalAttention layer(3, 4, 2, 3, 3, 3, /*copy=*/true);
  Tensor e = test::randn({3, 6, 3}, 21), h = test::randn({3, 2, 4}, 22);
  const attn::Mask mask = nn::padding_mask(attn::Index{6, 4, 2}, 6);
  const auto run = [&](const Inputs& in) { return layer(in[0], layer.features(in[0], mask), in[1], mask); };
  CHECK_GRADCHECK([&](const Inputs& in) { return run(in).context; }, with_parameters(layer, {e, h}));
  CHECK_GRADCHECK([&](const Inputs& in) { return run(in).copy_weights; }, with_parameters(layer, {e, h}));
  CHECK_GRADCHECK([&](const Inputs& in) { return run(in).copy_gate; }, with_parameters(layer, {e, h}));
  CHECK_THROWS_WITH_SUBSTR(layer.features(e, nn::padding_mask(attn::Index{6, 4}, 6)), attn::ShapeError,
                           "ConvolutionalAttention::features: expected key_padding_mask [3, 6], got [2, 6]");
}

TEST_CASE("convolutional attention: a sentence padded inside a batch gets the weights it gets alone") {
  // conv1's bias makes relu(conv1(E)) non-zero on padding; unmasked, conv2 and the score
  // convolutions at a sentence's last positions would read it. Garbage in the padded
  // embeddings must not matter either.
  attn::manual_seed(13);
  nn::ConvolutionalAttention layer(3, 4, 5, 5, 3, 3, /*copy=*/true);
  Tensor alone = test::randn({1, 3, 3}, 31, false), h = test::randn({1, 2, 4}, 32, false);
  xt::xarray<double> padded = test::randn({2, 6, 3}, 33, false).to_array();  // row 1: the sentence, then garbage
  xt::view(padded, 1, xt::range(0, 3), xt::all()) = xt::view(alone.to_array(), 0, xt::all(), xt::all());
  const Tensor e(padded), hb = attn::concat({test::randn({1, 2, 4}, 34, false), h}, 0);
  const attn::Mask mask = nn::padding_mask(attn::Index{6, 3}, 6);
  auto a1 = layer(alone, layer.features(alone), h);
  auto a2 = layer(e, layer.features(e, mask), hb, mask);
  const auto row = [](const Tensor& t) { return xt::eval(xt::view(t.to_array(), 1, xt::all(), xt::range(0, 3))); };
  CHECK(xt::amax(xt::abs(row(a2.weights) - xt::view(a1.weights.to_array(), 0)))() <= 1e-12);
  CHECK(xt::amax(xt::abs(row(a2.copy_weights) - xt::view(a1.copy_weights.to_array(), 0)))() <= 1e-12);
  CHECK(xt::amax(xt::abs(xt::view(a2.copy_gate.to_array(), 1) - xt::view(a1.copy_gate.to_array(), 0)))() <= 1e-12);
  CHECK(xt::amax(xt::abs(xt::view(a2.context.to_array(), 1) - xt::view(a1.context.to_array(), 0)))() <= 1e-12);
}

TEST_CASE("convolutional attention: weights sum to 1 over the source and are 0 on padding") {
  attn::manual_seed(3);
  nn::ConvolutionalAttention layer(3, 4, 2, 3, 3, 3, true);
  Tensor e = test::randn({2, 5, 3}, 1, false), h = test::randn({2, 3, 4}, 2, false);
  auto out = layer(e, layer.features(e), h, nn::padding_mask(attn::Index{5, 2}, 5));
  const auto a = out.weights.to_array(), k = out.copy_weights.to_array(), g = out.copy_gate.to_array();
  for (std::size_t t = 0; t < 3; ++t) {
    CHECK(xt::sum(xt::view(a, 0, t, xt::all()))() == doctest::Approx(1.0));
    CHECK(xt::sum(xt::view(k, 1, t, xt::all()))() == doctest::Approx(1.0));
    for (std::size_t j = 2; j < 5; ++j) CHECK(a(1, t, j) == 0.0);
    for (std::size_t j = 2; j < 5; ++j) CHECK(k(1, t, j) == 0.0);
    CHECK(g(0, t, 0) > 0.0);
    CHECK(g(0, t, 0) < 1.0);
  }
  // the context is the weighted sum of the embeddings
  CHECK(test::allclose(out.context, attn::matmul(out.weights, e), 1e-12));
  // padding values do not leak into row 1
  Tensor e2 = attn::Tensor(xt::xarray<double>(e.to_array()));
  auto e2a = e.to_array();
  for (std::size_t j = 2; j < 5; ++j)
    for (std::size_t d = 0; d < 3; ++d) e2a(1, j, d) = 0.0;
  Tensor ez = attn::Tensor(e2a);
  auto outz = layer(ez, layer.features(ez), h, nn::padding_mask(attn::Index{5, 2}, 5));
  for (std::size_t j = 2; j < 5; ++j) CHECK(outz.weights.to_array()(1, 0, j) == 0.0);
}

TEST_CASE("convolutional attention refuses bad shapes and masks by name") {
  nn::ConvolutionalAttention layer(3, 4, 2, 3, 3, 3, true);
  Tensor e = attn::zeros({2, 5, 3}), h = attn::zeros({2, 1, 4});
  Tensor f = layer.features(e);
  CHECK(f.shape() == attn::Shape{2, 5, 4});
  CHECK_THROWS_WITH_SUBSTR(layer.features(attn::zeros({2, 5, 2})), attn::ShapeError, "expected embedded input [B, S, 3]");
  CHECK_THROWS_WITH_SUBSTR(layer(e, f, attn::zeros({2, 1, 3})), attn::ShapeError, "expected query [2, T, 4]");
  CHECK_THROWS_WITH_SUBSTR(layer(e, attn::zeros({2, 4, 4}), h), attn::ShapeError, "expected feats [2, 5, 4]");
  CHECK_THROWS_WITH_SUBSTR(layer(e, f, h, nn::padding_mask(attn::Index{4, 4}, 4)), attn::ShapeError,
                           "expected key_padding_mask [2, 5]");
}

TEST_CASE("copy_mixture equals the mixture computed by hand") {
  // V = 3 target ids, source (B = 1) of S = 3 tokens with extended ids {1, 4, 1}: id 4 = V + 1 is source-only.
  Tensor p_gen = attn::tensor({{{0.5, 0.3, 0.2}}});   // [1, 1, 3]
  Tensor kappa = attn::tensor({{{0.1, 0.6, 0.3}}});   // [1, 1, 3]
  Tensor lambda = attn::full({1, 1, 1}, 0.25);        // [1, 1, 1]
  const attn::Index ids = {{1, 4, 1}};
  Tensor p = nn::copy_mixture(p_gen, kappa, lambda, ids, 5);
  // id 0: 0.25*0.5; id 1: 0.25*0.3 + 0.75*(0.1+0.3); id 2: 0.25*0.2; id 3: 0; id 4: 0.75*0.6
  CHECK(test::allclose(p, attn::tensor({{{0.125, 0.075 + 0.3, 0.05, 0.0, 0.45}}}), 1e-15));
  CHECK(attn::sum(p).item() == doctest::Approx(1.0));

  Tensor pg = attn::softmax(test::randn({2, 3, 4}, 1), -1), k = attn::softmax(test::randn({2, 3, 5}, 2), -1);
  Tensor l = attn::sigmoid(test::randn({2, 3, 1}, 3));
  pg = Tensor(pg.to_array(), true), k = Tensor(k.to_array(), true), l = Tensor(l.to_array(), true);  // leaves
  const attn::Index src = {{1, 5, 6, 1, 0}, {2, 3, 4, 7, 0}};
  CHECK_GRADCHECK([&](const Inputs& in) { return nn::copy_mixture(in[0], in[1], in[2], src, 8); }, {pg, k, l});

  CHECK_THROWS_WITH_SUBSTR(nn::copy_mixture(p_gen, kappa, lambda, attn::Index{{1, 5, 1}}, 5), attn::ValueError,
                           "copy id 5 is outside the extended vocabulary 0..4");
  CHECK_THROWS_WITH_SUBSTR(nn::copy_mixture(p_gen, kappa, lambda, ids, 2), attn::ValueError, "extended_vocab (2)");
  CHECK_THROWS_WITH_SUBSTR(nn::copy_mixture(p_gen, kappa, attn::tensor({0.5}), ids, 5), attn::ShapeError,
                           "expected copy_gate [1, 1, 1]");
  CHECK_THROWS_WITH_SUBSTR(nn::copy_mixture(p_gen, kappa, lambda, attn::Index{{1, 4}}, 5), attn::ShapeError,
                           "expected copy_ids [1, 3]");
  CHECK_THROWS_WITH_SUBSTR(nn::copy_mixture(attn::tensor({0.5}), kappa, lambda, ids, 5), attn::ShapeError,
                           "expected p_gen [B, T, V]");
}

TEST_CASE("ConvAttentionSeq2Seq: copy head gives distributions, also over the extended vocabulary") {
  attn::manual_seed(5);
  const attn::data::Vocab tgt({"a", "b"});                  // V = 6
  const attn::data::Vocab src({"a", "b", "zed", "quux"});   // "zed", "quux": source only
  attn::models::ConvAttentionConfig c;
  c.src_vocab = src.size(), c.tgt_vocab = tgt.size(), c.embed_dim = 4, c.hidden_dim = 5, c.conv_channels = 3;
  c.copy = true;
  attn::models::ConvAttentionSeq2Seq model(c);
  model.set_copy_map(src, tgt);
  CHECK(model.copy_map()(src.id("zed")) == attn::data::Vocab::unk_id);
  CHECK(model.copy_map()(src.id("a")) == tgt.id("a"));
  const std::vector<attn::data::Tokens> sources = {{"a", "zed", "b"}, {"quux", "a"}};
  attn::Index ids = xt::zeros<std::int64_t>({std::size_t(2), std::size_t(3)});
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t j = 0; j < sources[b].size(); ++j) ids(b, j) = src.id(sources[b][j]);
  const std::vector<std::size_t> lengths = {3, 2};
  const attn::Index tgt_in = {{1, 4, 3}, {1, 3, 4}};
  Tensor logp = model.forward(ids, lengths, tgt_in);
  CHECK(logp.shape() == attn::Shape{2, 3, 6});
  const auto p = xt::eval(xt::exp(logp.to_array()));
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t t = 0; t < 3; ++t) CHECK(xt::sum(xt::view(p, b, t, xt::all()))() == doctest::Approx(1.0).epsilon(1e-9));

  const auto ext = attn::models::extend_source(sources, tgt);
  CHECK(ext.extra == std::vector<std::string>{"zed", "quux"});
  CHECK(ext.extended_vocab == 8);
  CHECK(ext.encode({"quux", "b", "nope"}, tgt) == std::vector<std::int64_t>{7, tgt.id("b"), attn::data::Vocab::unk_id});
  CHECK(ext.decode({6, 5, 2, 4}, tgt) == attn::data::Tokens{"zed", "b"});
  Tensor le = model.forward_extended(ids, lengths, attn::Index{{1, 6, 5}, {1, 7, 4}}, ext);
  CHECK(le.shape() == attn::Shape{2, 3, 8});
  const auto pe = xt::eval(xt::exp(le.to_array()));
  CHECK(xt::sum(xt::view(pe, 0, 1, xt::all()))() == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(pe(0, 0, 7) < 1e-9);  // "quux" is not in row 0's source: only row 1 may copy it
  CHECK(pe(1, 0, 7) > 1e-6);
  attn::sum(le).backward();
  CHECK(model.attention.copy_conv.weight.grad().defined());

  attn::models::ConvAttentionSeq2Seq plain([&] { auto d = c; d.copy = false; return d; }());
  CHECK_THROWS_WITH_SUBSTR(plain.forward_extended(ids, lengths, tgt_in, ext), attn::ValueError, "needs the copy head");
  CHECK(attn::models::make_model({{"model", "conv-copy"}}, src.size(), tgt.size())->forward(ids, lengths, tgt_in).shape() ==
        attn::Shape{2, 3, 6});
}

TEST_CASE("ConvAttentionSeq2Seq: a sentence's attention and log p do not depend on the rest of its batch") {
  // One 4-token sentence alone, then as row 1 of a batch padded to 8 by its longer neighbours:
  // a, kappa, lambda and log p must agree, so the padding the batch adds is invisible.
  attn::manual_seed(17);
  attn::models::ConvAttentionConfig c;
  c.src_vocab = 12, c.tgt_vocab = 12, c.embed_dim = 6, c.hidden_dim = 7, c.conv_channels = 5;  // windows 5, 3, 3
  c.copy = true;
  attn::models::ConvAttentionSeq2Seq model(c);
  const attn::Index src1 = {{3, 4, 5, 6}}, tgt1 = {{1, 7, 8, 9, 10}};
  const attn::Index src3 = {{4, 9, 8, 7, 6, 5, 4, 3}, {3, 4, 5, 6, 0, 0, 0, 0}, {11, 10, 9, 8, 7, 6, 5, 0}};
  const attn::Index tgt3 = {{1, 4, 4, 5, 6}, {1, 7, 8, 9, 10}, {1, 11, 3, 3, 8}};
  const std::size_t S1 = 4;

  const Tensor logp1 = model.forward(src1, {4}, tgt1);  // [1, T, V]
  const auto att1 = model.last_attention();
  const Tensor gate1 = model.last_copy_gate();
  const Tensor logp3 = model.forward(src3, {8, 4, 7}, tgt3);  // [3, T, V]
  const auto att3 = model.last_attention();
  const Tensor gate3 = model.last_copy_gate();

  const auto diff = [](const xt::xarray<double>& a, const xt::xarray<double>& b) { return xt::amax(xt::abs(a - b))(); };
  {
    const double d = diff(xt::view(logp3.to_array(), 1), xt::view(logp1.to_array(), 0));
    INFO("max |log p(batch) - log p(alone)| = " << d);
    CHECK(d <= 1e-12);
  }
  for (const std::string name : {"attention", "copy"}) {
    CAPTURE(name);
    const auto a1 = att1.at(name).to_array(), a3 = att3.at(name).to_array();  // [1, T, 4], [3, T, 8]
    const double d = diff(xt::view(a3, 1, xt::all(), xt::range(0, S1)), xt::view(a1, 0));
    INFO("max |" << name << " weights (batch) - (alone)| = " << d);
    CHECK(d <= 1e-12);
    CHECK(xt::amax(xt::abs(xt::view(a3, 1, xt::all(), xt::range(S1, 8))))() == 0.0);
  }
  {
    const double d = diff(xt::view(gate3.to_array(), 1), xt::view(gate1.to_array(), 0));
    INFO("max |lambda (batch) - (alone)| = " << d);
    CHECK(d <= 1e-12);
  }

  // step() by step from start() reads the same masked features.
  attn::models::DecoderState s1 = model.start(src1, {4}), s3 = model.start(src3, {8, 4, 7});
  const Tensor y1 = model.step(s1, attn::Index(xt::ones<std::int64_t>({1, 1}))),
               y3 = model.step(s3, attn::Index(xt::ones<std::int64_t>({3, 1})));  // <bos> = 1
  CHECK(diff(xt::view(y3.to_array(), 1), xt::view(y1.to_array(), 0)) <= 1e-12);
  CHECK(diff(xt::view(s3.attention.at("copy").to_array(), 1, xt::range(0, S1)),
             xt::view(s1.attention.at("copy").to_array(), 0)) <= 1e-12);
}

TEST_CASE("ConvAttentionSeq2Seq: greedy decoding keeps each step's copy gate, lambda_t of the teacher-forced output") {
  attn::manual_seed(23);
  attn::models::ConvAttentionConfig c;
  c.src_vocab = 12, c.tgt_vocab = 12, c.embed_dim = 6, c.hidden_dim = 7, c.conv_channels = 5;
  c.copy = true;
  attn::models::ConvAttentionSeq2Seq model(c);
  model.eval();
  const attn::Index src = {{3, 4, 5, 6, 7}};
  attn::models::DecodeOptions opt;
  opt.max_len = 6;
  const attn::models::Hypothesis h = attn::models::greedy_decode(model, src, {5}, opt)[0];
  REQUIRE(h.attention.count("copy_gate"));
  const auto& gates = h.attention.at("copy_gate");
  REQUIRE(gates.size() == h.tokens.size());
  attn::Index tgt_in = xt::zeros<std::int64_t>({std::size_t(1), h.tokens.size()});  // <bos> + the output: [1, T]
  tgt_in(0, 0) = attn::data::Vocab::bos_id;
  for (std::size_t t = 0; t + 1 < h.tokens.size(); ++t) tgt_in(0, t + 1) = h.tokens[t];
  {
    attn::no_grad guard;
    model.forward(src, {5}, tgt_in);
  }
  const xt::xarray<double> lambda = model.last_copy_gate().to_array();  // [1, T, 1]
  for (std::size_t t = 0; t < gates.size(); ++t) {
    CAPTURE(t);
    CHECK(gates[t].shape() == attn::Shape{1});
    CHECK(gates[t].to_array()(0) == doctest::Approx(lambda(0, t, 0)).epsilon(1e-12));
  }
}
