// The explorer's builders (viz/explore.hpp): a Transformer's layers and heads grouped, ordered
// and cut to a sentence; a recurrent model's one map; a hypothesis step by step.
#include "../helpers.hpp"
#include "viz/explore.hpp"

#include "models/transformer_seq2seq.hpp"

#include <xtensor/xview.hpp>

namespace viz = attn::viz;
using attn::Tensor;

namespace {

// Weights [B, H, T, S] whose every entry says where it is: 1000 l + 100 b + 10 h + t + s / 10.
Tensor marked(std::size_t layer, std::size_t B, std::size_t H, std::size_t T, std::size_t S) {
  xt::xarray<double> w = xt::zeros<double>({B, H, T, S});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t s = 0; s < S; ++s) w(b, h, t, s) = 1000.0 * layer + 100.0 * b + 10.0 * h + t + s / 10.0;
  return Tensor(w);
}

}  // namespace

TEST_CASE("explore: a Transformer's every layer and head, by kind, in layer order, cut to the sentence") {
  std::map<std::string, Tensor> attention;
  const std::size_t L = 11;  // "decoder.10" sorts before "decoder.2" as text
  for (std::size_t l = 0; l < L; ++l) {
    attention["encoder." + std::to_string(l) + ".self"] = marked(l, 2, 3, 5, 5);   // [B, H, S', S']
    attention["decoder." + std::to_string(l) + ".self"] = marked(l, 2, 3, 4, 4);   // [B, H, T', T']
    attention["decoder." + std::to_string(l) + ".cross"] = marked(l, 2, 3, 4, 5);  // [B, H, T', S']
  }
  attention["attention"] = Tensor(xt::xarray<double>(xt::zeros<double>({2, 4, 5})));  // the head mean: left out
  const std::vector<std::string> source = {"a", "b", "c"}, target = {"<bos>", "x"};
  const viz::Explorer e = viz::explore(attention, source, target, /*sentence=*/1);
  REQUIRE(e.attentions.size() == 3);
  CHECK(e.attentions[0].name == "encoder self");
  CHECK(e.attentions[1].name == "decoder self");
  CHECK(e.attentions[2].name == "cross");
  CHECK(!e.attentions[0].rows_read);  // the encoder reads the source
  CHECK(e.attentions[1].rows_read);
  CHECK(e.attentions[2].rows_read);
  CHECK(e.attentions[0].rows == source);
  CHECK(e.attentions[0].cols == source);
  CHECK(e.attentions[1].rows == target);
  CHECK(e.attentions[1].cols == target);
  CHECK(e.attentions[2].rows == target);
  CHECK(e.attentions[2].cols == source);
  const auto& cross = e.attentions[2].weights;
  REQUIRE(cross.shape() == std::vector<std::size_t>{L, 3, 2, 3});
  for (std::size_t l = 0; l < L; ++l)
    CHECK(cross(l, 2, 1, 2) == doctest::Approx(1000.0 * l + 100.0 + 20.0 + 1.0 + 0.2));
  CHECK(e.attentions[0].weights.shape() == std::vector<std::size_t>{L, 3, 3, 3});
  CHECK(e.attentions[1].weights.shape() == std::vector<std::size_t>{L, 3, 2, 2});
}

TEST_CASE("explore: a recurrent model's attention [B, T, S] is one layer and one head; a gate is no attention") {
  xt::xarray<double> w = xt::zeros<double>({2, 3, 4});
  w(1, 2, 3) = 0.75;
  std::map<std::string, Tensor> attention = {{"attention", Tensor(w)},
                                             {"copy_gate", Tensor(xt::xarray<double>(xt::zeros<double>({2, 3, 1})))}};
  const viz::Explorer e = viz::explore(attention, {"a", "b", "c", "d"}, {"<bos>", "x", "y"}, 1);
  REQUIRE(e.attentions.size() == 1);
  CHECK(e.attentions[0].name == "attention");
  REQUIRE(e.attentions[0].weights.shape() == std::vector<std::size_t>{1, 1, 3, 4});
  CHECK(e.attentions[0].weights(0, 0, 2, 3) == 0.75);
}

TEST_CASE("explore: from a model's last forward(), and the errors") {
  attn::manual_seed(2);
  attn::models::TransformerConfig c;
  c.src_vocab = c.tgt_vocab = 6;
  c.d_model = 8;
  c.nhead = 2;
  c.num_encoder_layers = c.num_decoder_layers = 2;
  c.dim_feedforward = 16;
  attn::models::TransformerSeq2Seq model(c);
  model.eval();
  attn::Index src = {{3, 4, 5}}, tgt_in = {{1, 3}};
  model.forward(src, {3}, tgt_in);
  const viz::Explorer e = viz::explore(model, {"a", "b", "c"}, {"<bos>", "a"});
  REQUIRE(e.attentions.size() == 3);
  CHECK(e.attentions[2].weights.shape() == std::vector<std::size_t>{2, 2, 2, 3});
  for (std::size_t r = 0; r < 2; ++r)  // each cross row is a distribution over the source
    CHECK(xt::sum(xt::view(e.attentions[2].weights, 1, 0, r))() == doctest::Approx(1.0));
  CHECK(e.title == model.type_name());

  CHECK_THROWS_WITH_SUBSTR(viz::explore(model, {"a", "b", "c", "d"}, {"<bos>", "a"}), attn::ShapeError,
                           "'decoder.0.cross'");  // a fourth source token the weights do not have
  CHECK_THROWS_WITH_SUBSTR(viz::explore(model, {"a"}, {"<bos>"}, 1), attn::ShapeError, "sentence 1 < B");
  attn::models::TransformerSeq2Seq fresh(c);
  CHECK_THROWS_WITH_SUBSTR(viz::explore(fresh, {"a"}, {"<bos>"}), attn::ValueError, "no attention to show");
}

TEST_CASE("explore_decoding: each step's token, row over the source, beam, gate and expected position") {
  attn::models::Hypothesis h;
  h.tokens = {5, 9, 2};  // 9 is past the vocabulary: a copy head's extended id
  h.attention["attention"] = {Tensor(xt::xarray<double>{0.5, 0.5, 0.0, 0.0}),  // [S'] with padding
                              Tensor(xt::xarray<double>{{0.0, 1.0, 0.0, 0.0}, {0.0, 0.0, 1.0, 0.0}}),  // [H, S']
                              Tensor(xt::xarray<double>{0.0, 0.0, 1.0, 0.0})};
  h.attention["copy_gate"] = {Tensor(xt::xarray<double>{0.9}), Tensor(xt::xarray<double>{0.2}),
                              Tensor(xt::xarray<double>{0.7})};
  h.beam = {{{{5}, -0.5}, {{4}, -1.5}}, {{{5, 9}, -1.0}}, {{{5, 9, 2}, -1.25}}};
  const attn::data::Vocab vocab({"le", "chat"});  // after the 4 specials: le = 4, chat = 5
  viz::DecodingView view;
  view.expected_position = true;
  const viz::Explorer e = viz::explore_decoding(h, {"the", "cat", "sat"}, vocab, view);
  REQUIRE(e.steps.size() == 3);
  CHECK(e.source == std::vector<std::string>{"the", "cat", "sat"});
  CHECK(e.steps[0].token == "chat");
  CHECK(e.steps[1].token == "<id 9>");
  CHECK(e.steps[2].token == "<eos>");
  CHECK(e.steps[0].row == std::vector<double>{0.5, 0.5, 0.0});
  CHECK(e.steps[1].row == std::vector<double>{0.0, 0.5, 0.5});  // the heads' mean
  CHECK(*e.steps[0].path == doctest::Approx(0.5));               // 0 * 0.5 + 1 * 0.5
  CHECK(*e.steps[1].path == doctest::Approx(1.5));
  CHECK(*e.steps[2].path == doctest::Approx(2.0));
  CHECK(*e.steps[1].gate == doctest::Approx(0.2));
  REQUIRE(e.steps[0].beam.size() == 2);
  CHECK(e.steps[0].beam[1].first == "le");
  CHECK(e.steps[0].beam[1].second == -1.5);
  CHECK(e.steps[1].beam[0].first == "chat <id 9>");

  view.expected_position = false;
  view.gate = "none";
  const viz::Explorer plain = viz::explore_decoding(h, {"the", "cat", "sat"}, vocab, view);
  CHECK(!plain.steps[0].path);
  CHECK(!plain.steps[0].gate);
  view.attention = "cross";
  CHECK_THROWS_WITH_SUBSTR(viz::explore_decoding(h, {"the"}, vocab, view), attn::ValueError,
                           "no attention named 'cross' (it has: attention, copy_gate)");
  CHECK_THROWS_WITH_SUBSTR(viz::explore_decoding(h, {"a", "b", "c", "d", "e"}, vocab), attn::ShapeError,
                           "S >= 5");
}

TEST_CASE("explore_decoding: the beam entry the output continues, the word's probability, the other words kept") {
  attn::models::Hypothesis h;
  h.tokens = {4, 5};  // "le chat": at step 1 its prefix ranks second of three
  h.attention["attention"] = {Tensor(xt::xarray<double>{1.0, 0.0}), Tensor(xt::xarray<double>{0.0, 1.0})};
  h.attention["decoder.0.cross"] = {Tensor(xt::xarray<double>{{1.0, 0.0}, {1.0, 0.0}}),
                                    Tensor(xt::xarray<double>{{0.0, 1.0}, {0.0, 1.0}})};  // [H = 2, S]
  h.attention["decoder.1.cross"] = h.attention["decoder.0.cross"];
  h.beam = {{{{4}, -0.25}, {{5}, -1.5}},
            {{{5, 4}, -1.75}, {{4, 5}, -0.75}, {{4, 4}, -2.25}}};
  const attn::data::Vocab vocab({"le", "chat"});  // le = 4, chat = 5
  const viz::Explorer e = viz::explore_decoding(h, {"the", "cat"}, vocab);
  REQUIRE(e.steps.size() == 2);
  CHECK(e.steps_label == "cross-attention of the last layer (1), averaged over its 2 heads");
  CHECK(*e.steps[0].continued == 0);
  CHECK(*e.steps[0].probability == doctest::Approx(std::exp(-0.25)));
  REQUIRE(e.steps[0].alternatives.size() == 1);  // after the empty prefix
  CHECK(e.steps[0].alternatives[0].first == "chat");
  CHECK(e.steps[0].alternatives[0].second == doctest::Approx(std::exp(-1.5)));
  CHECK(*e.steps[1].continued == 1);     // not the best-scoring entry (0)
  CHECK(*e.steps[1].probability == doctest::Approx(std::exp(-0.75 + 0.25)));
  REQUIRE(e.steps[1].alternatives.size() == 1);  // "le le"; "chat le" continues another prefix
  CHECK(e.steps[1].alternatives[0].first == "le");
  CHECK(e.steps[1].alternatives[0].second == doctest::Approx(std::exp(-2.25 + 0.25)));
  // A recurrent model's row, and a greedy decoding: no beam, nothing continued, no probability.
  h.beam.clear();
  h.attention.erase("decoder.0.cross");
  h.attention.erase("decoder.1.cross");
  const viz::Explorer greedy = viz::explore_decoding(h, {"the", "cat"}, vocab);
  CHECK(greedy.steps_label == "'attention' weights");
  CHECK(!greedy.steps[1].continued);
  CHECK(!greedy.steps[1].probability);
}
