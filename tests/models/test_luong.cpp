// Chapter 3's Luong model with each score (dot, general, concat), global and
// local (local-m, local-p) attention, with and without input feeding: gradients
// end to end, step() against forward(), weights, float32, bad inputs.
// Learning reversal and alignment: tests/models/test_trainer.cpp.
#include "tiny.hpp"

#include "models/luong.hpp"
#include "reversal.hpp"

using attn::Index;
using attn::Tensor;
using attn::models::LuongAttention;
using attn::models::LuongConfig;
using attn::models::LuongScore;
using attn::models::LuongSeq2Seq;

namespace {

LuongConfig tiny_config(LuongScore score, LuongAttention attention = LuongAttention::Global) {
  LuongConfig c;
  c.src_vocab = c.tgt_vocab = 5;
  c.embed_dim = 3;
  c.hidden_dim = 4;
  c.attention_dim = 3;
  c.score = score;
  c.attention = attention;
  c.window = 1;
  return c;
}

}  // namespace

TEST_CASE("LuongSeq2Seq: parameters and shapes") {
  attn::manual_seed(1);
  LuongSeq2Seq model(tiny_config(LuongScore::General));
  auto named = model.named_parameters();
  auto has = [&](const std::string& n) {
    return std::any_of(named.begin(), named.end(), [&](const auto& p) { return p.first == n; });
  };
  CHECK(has("attention.score.W"));
  CHECK(has("combine.weight"));
  CHECK_FALSE(has("combine.bias"));
  CHECK_FALSE(has("encoder.weight_ih_l0_reverse"));                 // unidirectional
  CHECK(model.decoder.weight_ih.shape() == attn::Shape{16, 3 + 4});  // input feeding: [y_{t-1}; ~s_{t-1}]
  test::TinyBatch batch;
  CHECK(model.forward(batch.src, batch.src_lengths, batch.tgt_in).shape() == attn::Shape{2, 3, 5});
  CHECK(model.last_attention().at("attention").shape() == attn::Shape{2, 3, 4});

  LuongConfig no_feed = tiny_config(LuongScore::Dot);
  no_feed.input_feeding = false;
  LuongSeq2Seq plain(no_feed);
  CHECK(plain.decoder.weight_ih.shape() == attn::Shape{16, 3});
  CHECK(attn::models::luong_score_from_name("concat") == LuongScore::Concat);
  CHECK(attn::models::luong_attention_from_name("local-p") == LuongAttention::LocalP);
  CHECK_THROWS_WITH_SUBSTR(attn::models::luong_score_from_name("bilinear"), attn::ValueError, "dot, general, concat");
}

TEST_CASE("LuongSeq2Seq: gradcheck over every parameter, every score and attention") {
  struct Case {
    LuongScore score;
    LuongAttention attention;
    bool input_feeding;
  };
  for (Case c : {Case{LuongScore::Dot, LuongAttention::Global, true}, Case{LuongScore::General, LuongAttention::Global, true},
                 Case{LuongScore::Concat, LuongAttention::Global, true},
                 Case{LuongScore::General, LuongAttention::Global, false},
                 Case{LuongScore::General, LuongAttention::LocalM, true},
                 Case{LuongScore::Concat, LuongAttention::LocalP, true}}) {
    CAPTURE(luong_score_name(c.score));
    CAPTURE(luong_attention_name(c.attention));
    CAPTURE(c.input_feeding);
    attn::manual_seed(2);
    LuongConfig config = tiny_config(c.score, c.attention);
    config.input_feeding = c.input_feeding;
    LuongSeq2Seq model(config);
    CHECK(test::gradcheck_parameters(model, test::TinyBatch()) == model.parameters().size());
  }
}

TEST_CASE("LuongSeq2Seq: step() with a teacher-forced prefix gives forward()'s logits") {
  for (LuongAttention a : {LuongAttention::Global, LuongAttention::LocalM, LuongAttention::LocalP})
    for (LuongScore s : {LuongScore::Dot, LuongScore::General, LuongScore::Concat}) {
      CAPTURE(luong_score_name(s));
      CAPTURE(luong_attention_name(a));
      attn::manual_seed(3);
      LuongSeq2Seq model(tiny_config(s, a));
      CHECK(test::max_step_forward_difference(model, test::TinyBatch()) < 1e-10);
    }
}

TEST_CASE("LuongSeq2Seq: global weights sum to 1 over the real tokens; local ones stay in the window") {
  test::TinyBatch batch;
  attn::manual_seed(4);
  LuongSeq2Seq global(tiny_config(LuongScore::General));
  global.forward(batch.src, batch.src_lengths, batch.tgt_in);
  const xt::xarray<double> a = global.last_attention().at("attention").to_array();  // [B, T, S]
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t t = 0; t < 3; ++t) {
      double total = 0;
      for (std::size_t j = 0; j < 4; ++j) {
        if (j >= batch.src_lengths[b]) CHECK(a(b, t, j) == 0.0);
        total += a(b, t, j);
      }
      CHECK(total == doctest::Approx(1.0).epsilon(1e-12));
    }

  // local-m with D = 1: step t sees only positions t - 1 .. t + 1 of the real source.
  LuongSeq2Seq local(tiny_config(LuongScore::Dot, LuongAttention::LocalM));
  local.forward(batch.src, batch.src_lengths, batch.tgt_in);
  const xt::xarray<double> w = local.last_attention().at("attention").to_array();
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t t = 0; t < 3; ++t)
      for (std::size_t j = 0; j < 4; ++j) {
        const bool inside = j + 1 >= t && j <= t + 1 && j < batch.src_lengths[b];
        if (!inside) CHECK(w(b, t, j) == 0.0);
        else CHECK(w(b, t, j) > 0.0);
      }
}

TEST_CASE("LuongSeq2Seq: padding of the source changes nothing") {
  attn::manual_seed(5);
  LuongSeq2Seq model(tiny_config(LuongScore::Concat));
  test::TinyBatch a, b;
  b.src(1, 2) = 3;
  b.src(1, 3) = 4;
  CHECK(test::allclose(model.forward(a.src, a.src_lengths, a.tgt_in), model.forward(b.src, b.src_lengths, b.tgt_in),
                       0.0));
}

TEST_CASE("LuongSeq2Seq: float32") {
  attn::manual_seed(6);
  LuongSeq2Seq model(tiny_config(LuongScore::General, LuongAttention::LocalP));
  test::TinyBatch batch;
  Tensor reference = model.forward(batch.src, batch.src_lengths, batch.tgt_in);
  model.to(attn::Dtype::Float32);
  Tensor logits = model.forward(batch.src, batch.src_lengths, batch.tgt_in);
  CHECK(logits.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(logits, reference, 1e-5));
  CHECK(test::max_step_forward_difference(model, batch) < 1e-5);
}

TEST_CASE("LuongSeq2Seq: bad inputs and configs") {
  attn::manual_seed(7);
  LuongSeq2Seq model(tiny_config(LuongScore::Dot));
  test::TinyBatch batch;
  CHECK_THROWS_WITH_SUBSTR(model.forward(batch.src, {4}, batch.tgt_in), attn::ShapeError, "source lengths");
  LuongConfig bad = tiny_config(LuongScore::Dot, LuongAttention::LocalM);
  bad.window = 0;
  CHECK_THROWS_WITH_SUBSTR(LuongSeq2Seq{bad}, attn::ValueError, "window");
}

TEST_CASE("LuongSeq2Seq (general score, global) learns reversal, and its attention finds the alignment") {
  attn::manual_seed(1);
  LuongConfig c;
  c.src_vocab = c.tgt_vocab = attn::data::task_vocab(10).size();
  c.embed_dim = 16;
  c.hidden_dim = 64;
  c.score = LuongScore::General;
  LuongSeq2Seq model(c);
  const attn::models::Evaluation e = test::learn_reversal(model, "Luong (general)");
  CHECK(e.overall.sentences == 200);
  CHECK(e.overall.exact_match() >= 0.95);
  CHECK(e.alignment.steps > 1000);
  CHECK(e.alignment.hit_rate() > 0.8);
}
