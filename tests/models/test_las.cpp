// Listen, Attend and Spell (models/las.hpp): PyTorch's values for the whole model
// (tools/reference/las.py), gradients end to end, step() against forward(), padding,
// the listener's lengths, decoding from a started state, sampled inputs, bad input.
#include "../helpers.hpp"
#include "../reference.hpp"

#include "decode/decode.hpp"
#include "models/las.hpp"
#include "nn/loss.hpp"

#include <xtensor/xview.hpp>

using attn::Index;
using attn::Tensor;
using attn::models::LASConfig;
using attn::models::ListenAttendSpell;

namespace {

// The reference case's sizes: 3 mel bands, 6 characters, two pyramid layers, two speller layers.
LASConfig tiny_config() {
  LASConfig c;
  c.n_mels = 3;
  c.vocab = 6;
  c.listener_dim = 2;
  c.pyramid_layers = 2;
  c.embed_dim = 3;
  c.speller_dim = 4;
  c.speller_layers = 2;
  c.attention_dim = 3;
  return c;
}

struct TinyUtterances {
  Tensor features = test::randn({2, 9, 3}, 40, false);  // [B, T, n_mels]
  std::vector<std::size_t> lengths = {9, 5};
  Index tgt_in = {{1, 3, 4, 5}, {1, 5, 3, 2}};          // [B, L]
};

// Logits of step() fed the teacher-forced prefixes against forward()'s.
double max_step_forward_difference(ListenAttendSpell& model, const TinyUtterances& u) {
  const xt::xarray<double> full = model.forward(u.features, u.lengths, u.tgt_in).to_array();  // [B, L, V]
  attn::models::DecoderState state = model.start(u.features, u.lengths);
  double worst = 0.0;
  for (std::size_t t = 0; t < u.tgt_in.shape()[1]; ++t) {
    Index prefix = xt::view(u.tgt_in, xt::all(), xt::range(0, t + 1));  // [B, t + 1]
    const xt::xarray<double> logits = model.step(state, prefix).to_array();  // [B, V]
    worst = std::max(worst, xt::amax(xt::abs(logits - xt::view(full, xt::all(), t, xt::all())))());
  }
  return worst;
}

}  // namespace

TEST_CASE("ListenAttendSpell equals the same model written in PyTorch: logits, attention, every gradient") {
  test::Reference ref("las");
  ListenAttendSpell model(tiny_config());
  for (auto& [name, p] : model.state()) *p = ref.tensor("las", name, /*requires_grad=*/true);
  Tensor features = ref.tensor("las", "features", true);
  const Index lengths_index = ref.index("las", "lengths");
  const std::vector<std::size_t> lengths(lengths_index.begin(), lengths_index.end());
  Tensor logits = model.forward(features, lengths, ref.index("las", "tgt_in"));
  CHECK(test::allclose(logits, ref.tensor("las", "logits"), 1e-12));
  CHECK(test::allclose(model.last_attention().at("attention"), ref.tensor("las", "attention"), 1e-12));
  attn::sum(logits * ref.tensor("las", "r")).backward();
  CHECK(test::allclose(features.grad(), ref.tensor("las", "grad_features"), 1e-12));
  for (const auto& [name, p] : model.named_parameters()) {
    INFO("grad of " << name);
    CHECK(test::allclose(p.grad(), ref.tensor("las", "grad_" + name), 1e-12));
  }
}

TEST_CASE("ListenAttendSpell: each pyramid layer halves the steps; attention covers only real states") {
  attn::manual_seed(1);
  ListenAttendSpell model(tiny_config());
  TinyUtterances u;
  attn::models::Listened heard = model.listen(u.features, u.lengths);
  CHECK(heard.memory.shape() == attn::Shape{2, 3, 4});  // 9 frames -> 5 -> 3 states of 2 * 2
  CHECK(heard.lengths == std::vector<std::size_t>{3, 2});
  CHECK(heard.layer_lengths == std::vector<std::vector<std::size_t>>{{9, 5}, {5, 3}, {3, 2}});
  CHECK(model.forward(u.features, u.lengths, u.tgt_in).shape() == attn::Shape{2, 4, 6});
  const xt::xarray<double> a = model.last_attention().at("attention").to_array();  // [B, L, U]
  CHECK(a.shape() == std::vector<std::size_t>{2, 4, 3});
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(a(0, i, 0) + a(0, i, 1) + a(0, i, 2) == doctest::Approx(1.0).epsilon(1e-14));
    CHECK(a(1, i, 2) == 0.0);  // the second utterance has 2 states
  }
  CHECK(model.main_attention() == "attention");
}

TEST_CASE("ListenAttendSpell: gradcheck of the loss over every parameter and the features") {
  attn::manual_seed(2);
  ListenAttendSpell model(tiny_config());
  TinyUtterances u;
  Tensor features = u.features.detach().requires_grad_(true);
  const Index targets = {3, 4, 5, 2, 5, 3, 2, 2};  // tgt_out of both rows, flattened: [B * L]
  std::vector<Tensor> inputs = test::with_parameters(model, {features});
  CHECK_GRADCHECK(
      [&](const std::vector<Tensor>& in) {
        Tensor logits = model.forward(in[0], u.lengths, u.tgt_in);  // [B, L, V]
        return attn::nn::cross_entropy(attn::reshape(logits, {8, 6}), targets);
      },
      inputs);
}

TEST_CASE("ListenAttendSpell: step() one character at a time gives forward()'s logits") {
  attn::manual_seed(3);
  ListenAttendSpell model(tiny_config());
  CHECK(max_step_forward_difference(model, TinyUtterances{}) < 1e-12);
  LASConfig one = tiny_config();
  one.speller_layers = 1;
  one.pyramid_layers = 0;  // no pyramid: the speller attends over every frame
  ListenAttendSpell flat(one);
  CHECK(max_step_forward_difference(flat, TinyUtterances{}) < 1e-12);
}

TEST_CASE("ListenAttendSpell: an utterance transcribes the same alone and padded in a batch") {
  attn::manual_seed(4);
  ListenAttendSpell model(tiny_config());
  TinyUtterances u;
  Tensor logits = model.forward(u.features, u.lengths, u.tgt_in);  // [2, 4, V]
  Tensor alone = attn::narrow(attn::narrow(u.features, 0, 1, 1), 1, 0, 5);  // [1, 5, 3]
  Index tgt = xt::view(u.tgt_in, xt::range(1, 2), xt::all());
  Tensor single = model.forward(alone, {5}, tgt);
  CHECK(test::allclose(attn::narrow(logits, 0, 1, 1), single, 1e-13));
}

TEST_CASE("ListenAttendSpell: greedy and beam decoding from a started state") {
  attn::manual_seed(5);
  ListenAttendSpell model(tiny_config());
  TinyUtterances u;
  attn::models::DecodeOptions opt;
  opt.max_len = 6;
  auto greedy = attn::models::greedy_decode(model, model.start(u.features, u.lengths), opt);
  REQUIRE(greedy.size() == 2);
  // Greedy's log-probability is the sum of forward()'s log-softmax over its own tokens.
  for (std::size_t b = 0; b < 2; ++b) {
    Index prefix = Index::from_shape({1, greedy[b].tokens.size()});
    prefix(0, 0) = 1;
    for (std::size_t t = 0; t + 1 < greedy[b].tokens.size(); ++t) prefix(0, t + 1) = greedy[b].tokens[t];
    Tensor one = attn::narrow(attn::narrow(u.features, 0, b, 1), 1, 0, u.lengths[b]);
    const xt::xarray<double> lp = attn::log_softmax(model.forward(one, {u.lengths[b]}, prefix), -1).to_array();
    double total = 0.0;
    for (std::size_t t = 0; t < greedy[b].tokens.size(); ++t) total += lp(0, t, greedy[b].tokens[t]);
    CHECK(greedy[b].log_prob == doctest::Approx(total).epsilon(1e-12));
    CHECK(greedy[b].attention.at("attention").size() == greedy[b].tokens.size());
  }
  opt.beam_size = 3;
  auto beam = attn::models::beam_search(model, model.start(u.features, u.lengths), opt);
  REQUIRE(beam.size() == 2);
  for (std::size_t b = 0; b < 2; ++b) CHECK(beam[b].log_prob >= greedy[b].log_prob - 1e-12);
  CHECK_THROWS_WITH_SUBSTR(attn::models::greedy_decode(model, attn::models::DecoderState{}, opt), attn::ValueError,
                           "the decoder state has no rows");
}

TEST_CASE("ListenAttendSpell: sampled inputs in training only, reproducible from the seed") {
  LASConfig c = tiny_config();
  c.sampling_probability = 1.0;  // every step after the first reads a sampled character
  attn::manual_seed(6);
  ListenAttendSpell model(c);
  TinyUtterances u;
  model.eval();
  const xt::xarray<double> teacher = model.forward(u.features, u.lengths, u.tgt_in).to_array();
  model.train();
  attn::manual_seed(7);
  const xt::xarray<double> sampled = model.forward(u.features, u.lengths, u.tgt_in).to_array();
  attn::manual_seed(7);
  const xt::xarray<double> again = model.forward(u.features, u.lengths, u.tgt_in).to_array();
  CHECK(sampled == again);
  // The first step reads <bos> either way; a later one differs unless every draw hit the gold character.
  CHECK(xt::amax(xt::abs(xt::view(sampled, xt::all(), 0) - xt::view(teacher, xt::all(), 0)))() < 1e-14);
  CHECK(xt::amax(xt::abs(sampled - teacher))() > 1e-6);
  c.sampling_probability = 0.0;
  attn::manual_seed(6);
  ListenAttendSpell plain(c);
  CHECK(xt::amax(xt::abs(plain.forward(u.features, u.lengths, u.tgt_in).to_array() - teacher))() < 1e-14);
}

TEST_CASE("ListenAttendSpell: bad input is named") {
  ListenAttendSpell model(tiny_config());
  TinyUtterances u;
  CHECK_THROWS_WITH_SUBSTR(model.forward(attn::zeros({2, 9, 4}), u.lengths, u.tgt_in), attn::ShapeError,
                           "expected features [B, T, 3]");
  CHECK_THROWS_WITH_SUBSTR(model.forward(u.features, {9}, u.tgt_in), attn::ValueError, "2 utterances but 1 lengths");
  CHECK_THROWS_WITH_SUBSTR(model.forward(u.features, {9, 10}, u.tgt_in), attn::ValueError, "lengths[1] = 10");
  CHECK_THROWS_WITH_SUBSTR(model.forward(u.features, u.lengths, Index{{1, 2}}), attn::ShapeError, "expected tgt_in [2, L]");
  LASConfig bad = tiny_config();
  bad.vocab = 0;
  CHECK_THROWS_WITH_SUBSTR(ListenAttendSpell{bad}, attn::ValueError, "every size in the config must be positive");
  bad = tiny_config();
  bad.sampling_probability = 1.5;
  CHECK_THROWS_WITH_SUBSTR(ListenAttendSpell{bad}, attn::ValueError, "sampling_probability must be in [0, 1]");
}
