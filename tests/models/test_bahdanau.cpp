// Chapter 2's Bahdanau model: gradients end to end, step() against forward(),
// attention weights (a distribution over the real source tokens), float32, bad
// inputs. Learning reversal and alignment: tests/models/test_trainer.cpp.
#include "tiny.hpp"

#include "models/bahdanau.hpp"
#include "models/registry.hpp"
#include "nn/loss.hpp"
#include "reversal.hpp"

#include <xtensor/xview.hpp>

#include <map>

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

// ---- coverage (Tu et al. 2016) ------------------------------------------------

namespace {

BahdanauConfig coverage_config() {
  BahdanauConfig c = tiny_config();
  c.coverage = true;
  return c;
}

// a_j = softmax_j over the first `length` j of v^T tanh(W_1 s + W_2 h_j + extra_j), extra [S, A], by hand.
xt::xarray<double> weights_by_hand(BahdanauSeq2Seq& m, const xt::xarray<double>& s, const xt::xarray<double>& h,
                                   const xt::xarray<double>& extra, std::size_t length) {
  const auto& score = dynamic_cast<const attn::nn::AdditiveScore&>(m.attention.score());
  const xt::xarray<double> w1 = score.W1.to_array(), W2 = score.W2.to_array(), v = score.v.to_array();
  const std::size_t A = v.size(), S = h.shape()[0];
  xt::xarray<double> a = xt::zeros<double>({S});
  double total = 0;
  for (std::size_t j = 0; j < length; ++j) {
    double e = 0;
    for (std::size_t k = 0; k < A; ++k) {
      double z = extra(j, k);
      for (std::size_t i = 0; i < s.size(); ++i) z += w1(k, i) * s(i);
      for (std::size_t i = 0; i < h.shape()[1]; ++i) z += W2(k, i) * h(j, i);
      e += v(k) * std::tanh(z);
    }
    a(j) = std::exp(e);
    total += a(j);
  }
  return a / total;
}

// Steps the model through batch.tgt_in; at each step compares its weights with weights_by_hand(extra(b, a_prev, t)),
// extra giving [S, A] from sentence b, its previous weights a_{t-1} [S] and the step; then calls after(state, a_t).
template <class Extra, class After>
void check_steps_by_hand(BahdanauSeq2Seq& model, const test::TinyBatch& batch, Extra&& extra, After&& after) {
  auto state = model.start(batch.src, batch.src_lengths);
  const xt::xarray<double> memory = state.tensors.at("memory").to_array();  // [B, S, 2 He]
  xt::xarray<double> a_prev = xt::zeros<double>({2, 4});
  for (std::size_t t = 0; t < 3; ++t) {
    const xt::xarray<double> s_prev = state.tensors.at("h").to_array();  // s_{t-1}: [B, Hd]
    attn::Index prefix = attn::Index::from_shape({2, t + 1});
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t j = 0; j <= t; ++j) prefix(b, j) = batch.tgt_in(b, j);
    model.step(state, prefix);
    const xt::xarray<double> a = state.attention.at("attention").to_array();  // [B, S]
    for (std::size_t b = 0; b < 2; ++b) {
      const xt::xarray<double> prev_b = xt::view(a_prev, b, xt::all());
      const xt::xarray<double> hand = weights_by_hand(model, xt::view(s_prev, b, xt::all()),
                                                      xt::view(memory, b, xt::all(), xt::all()), extra(b, prev_b, t),
                                                      batch.src_lengths[b]);
      for (std::size_t j = 0; j < 4; ++j) CHECK(a(b, j) == doctest::Approx(hand(j)).epsilon(1e-12));
    }
    after(state, a);
    a_prev = a;
  }
}

template <class Extra>
void check_steps_by_hand(BahdanauSeq2Seq& model, const test::TinyBatch& batch, Extra&& extra) {
  check_steps_by_hand(model, batch, extra, [](const attn::models::DecoderState&, const xt::xarray<double>&) {});
}
}  // namespace

TEST_CASE("BahdanauSeq2Seq with coverage: one more parameter, none without it") {
  attn::manual_seed(8);
  BahdanauSeq2Seq plain(tiny_config()), covered(coverage_config());
  CHECK(covered.parameters().size() == plain.parameters().size() + 1);
  CHECK(covered.coverage_weight.shape() == attn::Shape{3});
  CHECK_FALSE(plain.coverage_weight.defined());
  CHECK(covered.extra_repr().find("coverage=true") != std::string::npos);
  CHECK(plain.extra_repr().find("coverage") == std::string::npos);
  // Without coverage the random draws are those of before: the same seed, the same model.
  attn::manual_seed(8);
  BahdanauSeq2Seq again(tiny_config());
  test::TinyBatch batch;
  CHECK(test::allclose(again.forward(batch.src, batch.src_lengths, batch.tgt_in),
                       plain.forward(batch.src, batch.src_lengths, batch.tgt_in), 0.0));
}

TEST_CASE("BahdanauSeq2Seq with coverage: C_t = C_{t-1} + a_t enters the score, by hand") {
  attn::manual_seed(9);
  BahdanauSeq2Seq model(coverage_config());
  test::TinyBatch batch;
  CHECK(xt::amax(xt::abs(model.start(batch.src, batch.src_lengths).tensors.at("coverage").to_array()))() == 0.0);  // C_0 = 0
  const xt::xarray<double> V = model.coverage_weight.to_array();
  xt::xarray<double> C = xt::zeros<double>({2, 4});  // C_{t-1} by hand, summed from the weights before step t
  auto extra = [&](std::size_t b, const xt::xarray<double>& a_prev, std::size_t) {
    xt::xarray<double> e = xt::zeros<double>({4, 3});
    for (std::size_t j = 0; j < 4; ++j) {
      C(b, j) += a_prev(j);
      for (std::size_t k = 0; k < 3; ++k) e(j, k) = V(k) * C(b, j);
    }
    return e;
  };
  xt::xarray<double> last;  // C_t after the last step
  auto after = [&](const attn::models::DecoderState& state, const xt::xarray<double>& a) {
    last = C + a;  // C_t = C_{t-1} + a_t
    const xt::xarray<double> coverage = state.tensors.at("coverage").to_array();
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t j = 0; j < 4; ++j) CHECK(coverage(b, j) == doctest::Approx(last(b, j)).epsilon(1e-12));
  };
  check_steps_by_hand(model, batch, extra, after);
  // After 3 steps every valid row of C sums to 3 (each step's weights sum to 1); padding stays at 0.
  CHECK(last(0, 0) + last(0, 1) + last(0, 2) + last(0, 3) == doctest::Approx(3.0).epsilon(1e-12));
  CHECK(last(1, 2) == 0.0);
  CHECK(last(1, 3) == 0.0);
  // The coverage term changes the weights: with V = 0 the model is the plain one.
  const xt::xarray<double> with_coverage = model.forward(batch.src, batch.src_lengths, batch.tgt_in).to_array();
  model.coverage_weight.data<double>() = xt::zeros<double>({3});
  const xt::xarray<double> without = model.forward(batch.src, batch.src_lengths, batch.tgt_in).to_array();
  CHECK(xt::amax(xt::abs(with_coverage - without))() > 1e-6);
}

TEST_CASE("BahdanauSeq2Seq with coverage: gradcheck of the loss, step() against forward()") {
  attn::manual_seed(10);
  BahdanauSeq2Seq model(coverage_config());
  test::TinyBatch batch;
  const attn::Index targets = {3, 4, 2, 4, 2, 2};  // tgt_out of both rows, flattened: [B * T]
  std::vector<Tensor> params = model.parameters();
  auto loss = [&](const std::vector<Tensor>&) {
    Tensor logits = model.forward(batch.src, batch.src_lengths, batch.tgt_in);  // [B, T, V]
    return attn::nn::cross_entropy(attn::reshape(logits, {6, 5}), targets);
  };
  const attn::GradcheckReport report = attn::gradcheck(loss, params);
  INFO(report.str());
  CHECK(report.ok);
  CHECK(test::max_step_forward_difference(model, batch) < 1e-10);
}

TEST_CASE("BahdanauSeq2Seq with coverage: the registry's config field") {
  using nlohmann::json;
  CHECK_FALSE(attn::models::default_model_config("bahdanau").contains("coverage"));  // older configs unchanged
  json config = {{"model", "bahdanau"}, {"embed_dim", 3}, {"encoder_dim", 3}, {"decoder_dim", 4},
                 {"attention_dim", 3}, {"coverage", true}};
  auto model = attn::models::make_model(config, 5, 5);
  CHECK(dynamic_cast<BahdanauSeq2Seq&>(*model).config.coverage);
  config["coverage"] = 1;
  CHECK_THROWS_WITH_SUBSTR(attn::models::make_model(config, 5, 5), attn::ValueError, "'coverage' has the wrong type");
}

// ---- coverage embeddings (Mi et al. 2016) and the Markov condition (Cohn et al. 2016) ----

namespace {


BahdanauConfig embedding_config() {
  BahdanauConfig c = tiny_config();
  c.coverage_embedding = 2;
  return c;
}

BahdanauConfig markov_config() {
  BahdanauConfig c = tiny_config();
  c.markov = true;
  return c;
}

}  // namespace

TEST_CASE("BahdanauSeq2Seq with coverage embeddings: kappa_0j = E_kappa[x_j], kappa_tj = kappa_{t-1,j} - a_tj W_y y_t, U kappa in the score") {
  attn::manual_seed(11);
  BahdanauSeq2Seq model(embedding_config());
  CHECK(model.coverage_embed->weight.shape() == attn::Shape{5, 2});
  CHECK(model.coverage_key->weight.shape() == attn::Shape{3, 2});    // U: K -> A
  CHECK(model.coverage_update->weight.shape() == attn::Shape{2, 3});  // W_y: E -> K
  CHECK(model.extra_repr().find("coverage_embedding=2") != std::string::npos);
  test::TinyBatch batch;
  const xt::xarray<double> E_c = model.coverage_embed->weight.to_array(), U = model.coverage_key->weight.to_array(),
                           W_y = model.coverage_update->weight.to_array(), Y = model.tgt_embed.weight.to_array();
  // kappa [B, S, K] by hand, spent at each step by the word read there (step 0 reads <bos> with no weights before it).
  xt::xarray<double> c = xt::zeros<double>({2, 4, 2});
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t j = 0; j < 4; ++j)
      for (std::size_t k = 0; k < 2; ++k) c(b, j, k) = E_c(std::size_t(batch.src(b, j)), k);
  auto extra = [&](std::size_t b, const xt::xarray<double>& a_prev, std::size_t t) {
    xt::xarray<double> e = xt::zeros<double>({4, 3});
    for (std::size_t j = 0; j < 4; ++j)
      for (std::size_t k = 0; k < 2; ++k) {
        double spent = 0;
        for (std::size_t i = 0; i < 3; ++i) spent += W_y(k, i) * Y(std::size_t(batch.tgt_in(b, t)), i);
        c(b, j, k) -= a_prev(j) * spent;
      }
    for (std::size_t j = 0; j < 4; ++j)
      for (std::size_t m = 0; m < 3; ++m)
        for (std::size_t k = 0; k < 2; ++k) e(j, m) += U(m, k) * c(b, j, k);
    return e;
  };
  check_steps_by_hand(model, batch, extra);
  // After the last step the state holds kappa_{T-2} (the update for the last word waits for a next step).
  auto state = model.start(batch.src, batch.src_lengths);
  for (std::size_t t = 0; t < 3; ++t) {
    attn::Index prefix = attn::Index::from_shape({2, t + 1});
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t j = 0; j <= t; ++j) prefix(b, j) = batch.tgt_in(b, j);
    model.step(state, prefix);
  }
  CHECK(test::allclose(state.tensors.at("coverage_embedding"), Tensor(c), 1e-12));
  // The term matters: setting U = 0 changes the logits.
  const xt::xarray<double> with = model.forward(batch.src, batch.src_lengths, batch.tgt_in).to_array();
  model.coverage_key->weight.data<double>() = xt::zeros<double>({3, 2});
  CHECK(xt::amax(xt::abs(with - model.forward(batch.src, batch.src_lengths, batch.tgt_in).to_array()))() > 1e-6);
}

TEST_CASE("BahdanauSeq2Seq with the Markov condition: W_3 [a_{t-1,j-1}; a_{t-1,j}; a_{t-1,j+1}] in the score") {
  attn::manual_seed(12);
  BahdanauSeq2Seq model(markov_config());
  CHECK(model.markov_weight.shape() == attn::Shape{3, 3});  // [A, 3]
  CHECK(model.extra_repr().find("markov=true") != std::string::npos);
  test::TinyBatch batch;
  const xt::xarray<double> W3 = model.markov_weight.to_array();
  auto extra = [&](std::size_t, const xt::xarray<double>& a_prev, std::size_t) {
    xt::xarray<double> e = xt::zeros<double>({4, 3});
    for (std::size_t j = 0; j < 4; ++j) {
      const double psi[3] = {j > 0 ? a_prev(j - 1) : 0.0, a_prev(j), j + 1 < 4 ? a_prev(j + 1) : 0.0};
      for (std::size_t k = 0; k < 3; ++k)
        for (std::size_t m = 0; m < 3; ++m) e(j, k) += W3(k, m) * psi[m];
    }
    return e;
  };
  check_steps_by_hand(model, batch, extra);
  // The first step has no previous weights: its row is the plain model's.
  const xt::xarray<double> with = model.forward(batch.src, batch.src_lengths, batch.tgt_in).to_array();
  model.markov_weight.data<double>() = xt::zeros<double>({3, 3});
  const xt::xarray<double> without = model.forward(batch.src, batch.src_lengths, batch.tgt_in).to_array();
  CHECK(xt::amax(xt::abs(xt::view(with, xt::all(), 0, xt::all()) - xt::view(without, xt::all(), 0, xt::all())))() == 0.0);
  CHECK(xt::amax(xt::abs(with - without))() > 1e-6);
}

TEST_CASE("BahdanauSeq2Seq with coverage embeddings and the Markov condition: gradcheck, step() against forward(), "
          "random draws of the plain model unchanged") {
  for (const BahdanauConfig& config : {embedding_config(), markov_config()}) {
    attn::manual_seed(13);
    BahdanauSeq2Seq model(config);
    test::TinyBatch batch;
    CHECK(test::gradcheck_parameters(model, batch) == model.parameters().size());
    CHECK(test::max_step_forward_difference(model, batch) < 1e-10);
    model.to(attn::Dtype::Float32);
    CHECK(test::max_step_forward_difference(model, batch) < 1e-5);
  }
  attn::manual_seed(13);
  BahdanauSeq2Seq plain(tiny_config());
  CHECK_FALSE(plain.markov_weight.defined());
  CHECK(plain.coverage_embed == nullptr);
  CHECK(plain.extra_repr().find("markov") == std::string::npos);
  // The options draw their weights after all of the plain model's: the same seed gives the same plain weights.
  for (const BahdanauConfig& config : {embedding_config(), markov_config()}) {
    attn::manual_seed(13);
    BahdanauSeq2Seq with_option(config);
    std::map<std::string, Tensor> theirs;
    for (auto& [name, p] : with_option.named_parameters()) theirs[name] = p;
    for (auto& [name, p] : plain.named_parameters()) {
      CAPTURE(name);
      REQUIRE(theirs.count(name) == 1);
      CHECK(test::allclose(theirs.at(name), p, 0.0));
    }
  }
}

TEST_CASE("BahdanauSeq2Seq: last_attention() stays in the graph, so a loss on the weights trains the model") {
  attn::manual_seed(14);
  BahdanauSeq2Seq model(tiny_config());
  test::TinyBatch batch;
  model.forward(batch.src, batch.src_lengths, batch.tgt_in);
  Tensor a = model.last_attention().at("attention");  // [B, T, S]
  CHECK(a.requires_grad());
  attn::sum(attn::select(attn::select(a, 1, 2), 1, 0)).backward();   // the weight of step 2 on source position 0
  const auto& score = dynamic_cast<const attn::nn::AdditiveScore&>(model.attention.score());
  CHECK(xt::amax(xt::abs(score.v.grad().to_array()))() > 0.0);
}

TEST_CASE("BahdanauSeq2Seq's options in the registry's config") {
  using nlohmann::json;
  const json defaults = attn::models::default_model_config("bahdanau");
  CHECK_FALSE(defaults.contains("coverage_embedding"));  // older configs unchanged
  CHECK_FALSE(defaults.contains("markov"));
  json config = {{"model", "bahdanau"}, {"embed_dim", 3},       {"encoder_dim", 3},        {"decoder_dim", 4},
                 {"attention_dim", 3},  {"markov", true},       {"coverage_embedding", 2}};
  auto model = attn::models::make_model(config, 5, 5);
  auto& m = dynamic_cast<BahdanauSeq2Seq&>(*model);
  CHECK(m.config.markov);
  CHECK(m.config.coverage_embedding == 2);
  config["coverage_embedding"] = -1;
  CHECK_THROWS_WITH_SUBSTR(attn::models::make_model(config, 5, 5), attn::ValueError, "whole number >= 0");
  config["coverage_embedding"] = 2;
  config["markov"] = "yes";
  CHECK_THROWS_WITH_SUBSTR(attn::models::make_model(config, 5, 5), attn::ValueError, "'markov' has the wrong type");
}

// ---- the lexicon bias (Arthur, Neubig & Nakamura 2016) ----

namespace {

BahdanauConfig lexicon_config() {
  BahdanauConfig c = tiny_config();
  c.lexicon_bias = true;
  return c;
}

// A table of distributions over the 5 target ids, drawn from seed.
xt::xarray<double> random_table(std::uint64_t seed) {
  attn::Generator gen(seed);
  xt::xarray<double> t = attn::rand({5, 5}, attn::Dtype::Float64, gen).to_array();
  for (std::size_t f = 0; f < 5; ++f) xt::view(t, f, xt::all()) /= xt::sum(xt::view(t, f, xt::all()))();
  return t;
}

}  // namespace

TEST_CASE("BahdanauSeq2Seq with the lexicon bias: log(sum_j a_tj p_lex(. | x_j) + eps) added to the logits, by hand") {
  test::TinyBatch batch;
  attn::manual_seed(30);
  BahdanauSeq2Seq plain(tiny_config());
  attn::manual_seed(30);
  BahdanauSeq2Seq model(lexicon_config());
  // No parameter and no draw of its own: the same weights as the plain model; the table is a buffer.
  CHECK(test::parameter_names(model) == test::parameter_names(plain));
  REQUIRE(model.named_buffers().size() == 1);
  CHECK(model.named_buffers()[0].first == "lexicon");
  // Until a table is set it is uniform: every logit moves alike, the distribution not at all.
  Tensor p0 = attn::log_softmax(plain.forward(batch.src, batch.src_lengths, batch.tgt_in), -1);
  CHECK(test::allclose(attn::log_softmax(model.forward(batch.src, batch.src_lengths, batch.tgt_in), -1), p0, 1e-12));
  const xt::xarray<double> table = random_table(31);
  model.set_lexicon(table);
  const xt::xarray<double> logits = model.forward(batch.src, batch.src_lengths, batch.tgt_in).to_array();   // [B, T, V]
  const xt::xarray<double> base = plain.forward(batch.src, batch.src_lengths, batch.tgt_in).to_array();
  const xt::xarray<double> a = model.last_attention().at("attention").to_array();                        // [B, T, S]
  double worst = 0;
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t t = 0; t < 3; ++t)
      for (std::size_t e = 0; e < 5; ++e) {
        double lex = 0;
        for (std::size_t j = 0; j < batch.src_lengths[b]; ++j) lex += a(b, t, j) * table(std::size_t(batch.src(b, j)), e);
        worst = std::max(worst, std::abs(logits(b, t, e) - (base(b, t, e) + std::log(lex + 0.001))));
      }
  CHECK(worst < 1e-12);
  // step() gives forward()'s logits, and the gradient reaches every parameter through the bias too.
  CHECK(test::max_step_forward_difference(model, batch) < 1e-10);
  const attn::Index targets = {3, 4, 2, 4, 2, 2};  // tgt_out of both rows, flattened: [B * T]
  auto loss = [&](const std::vector<Tensor>&) {
    return attn::nn::cross_entropy(attn::reshape(model.forward(batch.src, batch.src_lengths, batch.tgt_in), {6, 5}), targets);
  };
  const attn::GradcheckReport report = attn::gradcheck(loss, model.parameters());
  INFO(report.str());
  CHECK(report.ok);
  // float32: the table follows the model's dtype.
  model.to(attn::Dtype::Float32);
  model.set_lexicon(table);
  CHECK(model.lexicon.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(model.forward(batch.src, batch.src_lengths, batch.tgt_in).to(attn::Dtype::Float64),
                       attn::tensor(logits), 1e-5));
}

TEST_CASE("BahdanauSeq2Seq with the lexicon bias: bad tables, and the registry's fields") {
  BahdanauSeq2Seq plain(tiny_config());
  CHECK_THROWS_WITH_SUBSTR(plain.set_lexicon(random_table(1)), attn::ValueError, "built without lexicon_bias");
  BahdanauSeq2Seq model(lexicon_config());
  CHECK_THROWS_WITH_SUBSTR(model.set_lexicon(xt::ones<double>({5, 4})), attn::ShapeError,
                           "expected a table [src_vocab, tgt_vocab] = [5, 5], got [5, 4]");
  xt::xarray<double> bad = random_table(2);
  bad(1, 1) = -0.5;
  CHECK_THROWS_WITH_SUBSTR(model.set_lexicon(bad), attn::ValueError, "must be finite and not negative");
  xt::xarray<double> counts = random_table(3);
  xt::view(counts, 3, xt::all()) *= 2.0;  // row 3 sums to 2: counts, not probabilities
  CHECK_THROWS_WITH_SUBSTR(model.set_lexicon(counts), attn::ValueError, "row 3 sums to 2");
  CHECK(model.extra_repr().find("lexicon_bias=true, lexicon_epsilon=0.001") != std::string::npos);
  BahdanauConfig c = lexicon_config();
  c.lexicon_epsilon = 0;
  CHECK_THROWS_WITH_SUBSTR(BahdanauSeq2Seq{c}, attn::ValueError, "lexicon_epsilon must be positive");
  using nlohmann::json;
  CHECK_FALSE(attn::models::default_model_config("bahdanau").contains("lexicon_bias"));  // older configs unchanged
  json config = {{"model", "bahdanau"}, {"embed_dim", 3}, {"encoder_dim", 3}, {"decoder_dim", 4},
                 {"attention_dim", 3}, {"lexicon_bias", true}, {"lexicon_epsilon", 0.01}};
  auto made = attn::models::make_model(config, 5, 5);
  CHECK(dynamic_cast<BahdanauSeq2Seq&>(*made).config.lexicon_bias);
  CHECK(dynamic_cast<BahdanauSeq2Seq&>(*made).config.lexicon_epsilon == 0.01);
  config.erase("lexicon_bias");  // an epsilon alone would do nothing
  CHECK_THROWS_WITH_SUBSTR(attn::models::make_model(config, 5, 5), attn::ValueError,
                           "'lexicon_epsilon' needs lexicon_bias = true");
}
