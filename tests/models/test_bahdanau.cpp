// Chapter 2's Bahdanau model: gradients end to end, step() against forward(),
// attention weights (a distribution over the real source tokens), float32, bad
// inputs. Learning reversal and alignment: tests/models/test_trainer.cpp.
#include "tiny.hpp"

#include "models/bahdanau.hpp"
#include "reversal.hpp"

#include <xtensor/xview.hpp>

using attn::Index;
using attn::Tensor;
using attn::models::BahdanauConfig;
using attn::models::BahdanauSeq2Seq;

namespace {

BahdanauConfig tiny_config() {
  BahdanauConfig c;
  c.src_vocab = c.tgt_vocab = 5;
  c.embed_dim = 3;
  c.encoder_dim = 3;
  c.decoder_dim = 4;
  c.attention_dim = 3;
  return c;
}

}  // namespace

TEST_CASE("BahdanauSeq2Seq: parameters and shapes") {
  attn::manual_seed(1);
  BahdanauSeq2Seq model(tiny_config());
  auto named = model.named_parameters();
  auto has = [&](const std::string& n) {
    return std::any_of(named.begin(), named.end(), [&](const auto& p) { return p.first == n; });
  };
  CHECK(has("encoder.weight_ih_l0_reverse"));  // bidirectional
  CHECK(has("attention.score.W1"));
  CHECK(has("attention.score.W2"));
  CHECK(has("attention.score.v"));
  CHECK(model.decoder.weight_ih.shape() == attn::Shape{16, 3 + 6});  // [y_{t-1}; c_t], c_t of 2 * 3
  CHECK(model.out.weight.shape() == attn::Shape{5, 4 + 6 + 3});      // [s_t; c_t; y_{t-1}]
  test::TinyBatch batch;
  CHECK(model.forward(batch.src, batch.src_lengths, batch.tgt_in).shape() == attn::Shape{2, 3, 5});
  CHECK(model.main_attention() == "attention");
  CHECK(model.last_attention().at("attention").shape() == attn::Shape{2, 3, 4});
}

TEST_CASE("BahdanauSeq2Seq: gradcheck over every parameter") {
  attn::manual_seed(2);
  BahdanauSeq2Seq model(tiny_config());
  CHECK(test::gradcheck_parameters(model, test::TinyBatch()) == model.parameters().size());
}

TEST_CASE("BahdanauSeq2Seq: step() with a teacher-forced prefix gives forward()'s logits") {
  attn::manual_seed(3);
  BahdanauSeq2Seq model(tiny_config());
  test::TinyBatch batch;
  CHECK(test::max_step_forward_difference(model, batch) < 1e-10);
  // The state precomputes W_2 h_j once, and step() exposes each step's weights.
  auto state = model.start(batch.src, batch.src_lengths);
  CHECK(state.tensors.at("keys").shape() == attn::Shape{2, 4, 3});
  model.step(state, xt::ones<std::int64_t>({2, 1}));
  CHECK(state.attention.at("attention").shape() == attn::Shape{2, 4});
}

TEST_CASE("BahdanauSeq2Seq: weights are a distribution over the real source tokens") {
  attn::manual_seed(4);
  BahdanauSeq2Seq model(tiny_config());
  test::TinyBatch batch;
  model.forward(batch.src, batch.src_lengths, batch.tgt_in);
  const xt::xarray<double> a = model.last_attention().at("attention").to_array();  // [B, T, S]
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t t = 0; t < 3; ++t) {
      double total = 0;
      for (std::size_t j = 0; j < 4; ++j) {
        CHECK(a(b, t, j) >= 0.0);
        if (j >= batch.src_lengths[b]) CHECK(a(b, t, j) == 0.0);  // padding never attended
        total += a(b, t, j);
      }
      CHECK(total == doctest::Approx(1.0).epsilon(1e-12));
    }
  // The weights move from step to step: they depend on s_{t-1}.
  CHECK(xt::amax(xt::abs(xt::view(a, 0, 0, xt::all()) - xt::view(a, 0, 1, xt::all())))() > 1e-6);
}

TEST_CASE("BahdanauSeq2Seq: padding of the source changes nothing") {
  attn::manual_seed(5);
  BahdanauSeq2Seq model(tiny_config());
  test::TinyBatch a, b;
  b.src(1, 2) = 3;
  b.src(1, 3) = 4;
  CHECK(test::allclose(model.forward(a.src, a.src_lengths, a.tgt_in), model.forward(b.src, b.src_lengths, b.tgt_in),
                       0.0));
  const Index alone = {{4, 3}};
  const Index alone_tgt = {{1, 4, 2}};
  Tensor logits = model.forward(alone, {2}, alone_tgt);
  CHECK(test::allclose(logits, attn::narrow(model.forward(a.src, a.src_lengths, a.tgt_in), 0, 1, 1), 1e-12));
}

TEST_CASE("BahdanauSeq2Seq: float32") {
  attn::manual_seed(6);
  BahdanauSeq2Seq model(tiny_config());
  test::TinyBatch batch;
  Tensor reference = model.forward(batch.src, batch.src_lengths, batch.tgt_in);
  model.to(attn::Dtype::Float32);
  Tensor logits = model.forward(batch.src, batch.src_lengths, batch.tgt_in);
  CHECK(logits.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(logits, reference, 1e-5));
  CHECK(test::max_step_forward_difference(model, batch) < 1e-5);
}

TEST_CASE("BahdanauSeq2Seq: bad inputs") {
  attn::manual_seed(7);
  BahdanauSeq2Seq model(tiny_config());
  test::TinyBatch batch;
  CHECK_THROWS_WITH_SUBSTR(model.forward(batch.src, {4, 2, 1}, batch.tgt_in), attn::ShapeError, "source lengths");
  CHECK_THROWS_WITH_SUBSTR(model.forward(batch.src, {4, 7}, batch.tgt_in), attn::ValueError, "not in 1..4");
  const Index three_rows = xt::ones<std::int64_t>({3, 2});
  CHECK_THROWS_WITH_SUBSTR(model.forward(batch.src, batch.src_lengths, three_rows), attn::ShapeError, "tgt_in [2, T]");
  BahdanauConfig bad = tiny_config();
  bad.attention_dim = 0;
  CHECK_THROWS_WITH_SUBSTR(BahdanauSeq2Seq{bad}, attn::ValueError, "positive");
}

TEST_CASE("BahdanauSeq2Seq learns reversal, and its attention finds the alignment") {
  attn::manual_seed(1);
  BahdanauConfig c;
  c.src_vocab = c.tgt_vocab = attn::data::task_vocab(10).size();
  c.embed_dim = 16;
  c.encoder_dim = 32;
  c.decoder_dim = 64;
  c.attention_dim = 64;
  BahdanauSeq2Seq model(c);
  const attn::models::Evaluation e = test::learn_reversal(model, "Bahdanau");
  CHECK(e.overall.sentences == 200);
  CHECK(e.overall.exact_match() >= 0.95);
  CHECK(e.alignment.steps > 1000);
  CHECK(e.alignment.hit_rate() > 0.8);
  // Accuracy does not collapse with length: every length of 12 or more is right at least 90% of the time.
  for (const auto& [length, counts] : e.by_length)
    if (length >= 12) CHECK(counts.exact_match() >= 0.9);
}
