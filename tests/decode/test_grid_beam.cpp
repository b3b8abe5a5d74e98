// Beam search over captions (decode/grid_decode.hpp's beam_caption): width 1 is greedy
// decoding, a wider beam finds a caption greedy decoding misses, scores with length
// normalisation, each word's attention is what the captioner computed for that word,
// the images' version for ShowAttendTell, and bad options refused by name.
#include "../helpers.hpp"

#include "decode/grid_decode.hpp"

#include <xtensor/xview.hpp>

using attn::Index;
using attn::Tensor;
using attn::models::DecodeOptions;
using attn::models::GridAttention;
using attn::models::GridCaptioner;
using attn::models::GridCaptionerConfig;
using attn::models::Hypothesis;
using attn::models::LengthPenalty;

namespace {

GridCaptionerConfig tiny_config(GridAttention attention = GridAttention::Soft, bool gate = false) {
  GridCaptionerConfig c;
  c.vocab = 6;
  c.feature_dim = 3;
  c.encoder_dim = 2;
  c.embed_dim = 3;
  c.decoder_dim = 4;
  c.attention_dim = 3;
  c.attention = attention;
  c.gate = gate;
  return c;
}

// log p(tokens | grid b) by teacher forcing: the sum of log softmax(logits)[token] over the words.
double teacher_forced_log_prob(GridCaptioner& model, const Tensor& features, std::size_t b,
                               const std::vector<std::int64_t>& tokens) {
  attn::no_grad guard;
  attn::models::detail::EvalScope eval(model);
  Index tgt_in = Index::from_shape({1, tokens.size()});  // <bos> + tokens[:-1]
  tgt_in(0, 0) = attn::data::Vocab::bos_id;
  for (std::size_t t = 1; t < tokens.size(); ++t) tgt_in(0, t) = tokens[t - 1];
  const Tensor one = attn::index_select(features, 0, Index{static_cast<std::int64_t>(b)});  // [1, N, D]
  const xt::xarray<double> log_probs = attn::log_softmax(model.forward(one, tgt_in), -1).to_array();  // [1, T, V]
  double total = 0.0;
  for (std::size_t t = 0; t < tokens.size(); ++t) total += log_probs(0, t, static_cast<std::size_t>(tokens[t]));
  return total;
}

double max_abs(const xt::xarray<double>& a) { return xt::amax(xt::abs(a))(); }

}  // namespace

TEST_CASE("beam_caption of width 1 is greedy_caption: words, log-probabilities, each word's attention") {
  for (GridAttention attention : {GridAttention::Soft, GridAttention::Hard}) {
    for (bool gate : {false, true}) {
      INFO("hard " << (attention == GridAttention::Hard) << ", gate " << gate);
      attn::manual_seed(1);
      GridCaptioner model(tiny_config(attention, gate));
      const Tensor features = test::randn({5, 4, 3}, 2, false);
      DecodeOptions options;
      options.max_len = 7;
      options.beam_size = 1;
      options.keep_greedy = false;  // the search alone
      const std::vector<Hypothesis> greedy = attn::models::greedy_caption(model, features, options);
      const std::vector<Hypothesis> beam = attn::models::beam_caption(model, features, options);
      REQUIRE(beam.size() == greedy.size());
      for (std::size_t b = 0; b < greedy.size(); ++b) {
        INFO("grid " << b);
        CHECK(beam[b].tokens == greedy[b].tokens);
        CHECK(beam[b].finished == greedy[b].finished);
        CHECK(beam[b].log_prob == doctest::Approx(greedy[b].log_prob).epsilon(1e-12));
        for (const char* name : {"attention", "alpha"}) {
          INFO(name);
          CHECK(max_abs(attn::models::attention_matrix(beam[b], name).to_array() -
                        attn::models::attention_matrix(greedy[b], name).to_array()) < 1e-12);
        }
        CHECK(beam[b].attention.count("gate") == (gate ? 1u : 0u));
        if (gate)
          CHECK(max_abs(attn::models::attention_matrix(beam[b], "gate").to_array() -
                        attn::models::attention_matrix(greedy[b], "gate").to_array()) < 1e-12);
      }
    }
  }
}

TEST_CASE("beam_caption finds a caption more probable than greedy_caption's, and scores it right") {
  // This untrained model's grid: neither caption ends within 6 words, and greedy decoding's locally
  // best words lead to a less probable caption of the same length than one a beam of 3 keeps.
  attn::manual_seed(12);
  GridCaptioner model(tiny_config());
  const Tensor features = test::randn({1, 4, 3}, 13, false);
  DecodeOptions options;
  options.max_len = 6;
  options.beam_size = 3;
  options.keep_greedy = false;
  const Hypothesis greedy = attn::models::greedy_caption(model, features, options)[0];
  const Hypothesis beam = attn::models::beam_caption(model, features, options)[0];
  INFO("greedy " << greedy.log_prob << ", beam " << beam.log_prob);
  CHECK(beam.tokens != greedy.tokens);
  CHECK(beam.tokens.size() == greedy.tokens.size());
  CHECK(beam.log_prob > greedy.log_prob + 0.5);
  // Both log-probabilities are what teacher forcing gives the same words.
  CHECK(beam.log_prob == doctest::Approx(teacher_forced_log_prob(model, features, 0, beam.tokens)).epsilon(1e-12));
  CHECK(greedy.log_prob == doctest::Approx(teacher_forced_log_prob(model, features, 0, greedy.tokens)).epsilon(1e-12));
  // keep_greedy (the default) changes nothing here: the beam's caption is the better one.
  options.keep_greedy = true;
  CHECK(attn::models::beam_caption(model, features, options)[0].tokens == beam.tokens);
}

TEST_CASE("beam_caption: length normalisation as decode/'s, n-best in score order, attention per word") {
  attn::manual_seed(3);
  GridCaptioner model(tiny_config(GridAttention::Soft, /*gate=*/true));
  const Tensor features = test::randn({2, 4, 3}, 4, false);
  DecodeOptions options;
  options.max_len = 6;
  options.beam_size = 4;
  options.n_best = 3;
  for (LengthPenalty penalty : {LengthPenalty::None, LengthPenalty::Average, LengthPenalty::GNMT}) {
    options.length_penalty = penalty;
    const auto n_best = attn::models::beam_caption_n_best(model, features, options);
    REQUIRE(n_best.size() == 2);
    for (std::size_t b = 0; b < 2; ++b) {
      REQUIRE(!n_best[b].empty());
      CHECK(n_best[b].size() <= 3);
      for (std::size_t i = 0; i < n_best[b].size(); ++i) {
        const Hypothesis& h = n_best[b][i];
        const double n = static_cast<double>(h.tokens.size());
        const double expected = penalty == LengthPenalty::None      ? h.log_prob
                                : penalty == LengthPenalty::Average ? h.log_prob / n
                                                                    : h.log_prob / std::pow((5.0 + n) / 6.0, 0.6);
        CHECK(h.score == doctest::Approx(expected).epsilon(1e-12));
        if (i > 0) CHECK(n_best[b][i - 1].score >= h.score);
        CHECK(h.log_prob == doctest::Approx(teacher_forced_log_prob(model, features, b, h.tokens)).epsilon(1e-12));
      }
    }
  }
  // Each word's weights are the ones step() computes when fed that hypothesis' own words.
  options.length_penalty = LengthPenalty::None;
  const Hypothesis h = attn::models::beam_caption(model, features, options)[1];
  attn::no_grad guard;
  model.eval();
  attn::models::DecoderState state = model.start(attn::index_select(features, 0, Index{1}));
  Index y = {attn::data::Vocab::bos_id};
  for (std::size_t t = 0; t < h.tokens.size(); ++t) {
    model.step(state, y);
    CHECK(max_abs(h.attention.at("attention")[t].to_array() - xt::view(state.attention.at("attention").to_array(), 0)) <
          1e-12);
    CHECK(max_abs(h.attention.at("gate")[t].to_array() - xt::view(state.attention.at("gate").to_array(), 0)) < 1e-12);
    y = {h.tokens[t]};
  }
  CHECK(attn::models::attention_grid(h, 2).shape() == attn::Shape{h.tokens.size(), 2, 2});
}

TEST_CASE("beam_caption from images: ShowAttendTell encoded in eval mode, its mode restored") {
  attn::models::ShowAttendTellConfig c;
  c.encoder.channels = {3, 4};
  c.captioner.vocab = 6;
  c.captioner.embed_dim = 3;
  c.captioner.decoder_dim = 4;
  c.captioner.attention_dim = 3;
  attn::manual_seed(5);
  attn::models::ShowAttendTell model(c);
  const Tensor images = test::randn({2, 3, 8, 8}, 6, false);
  model.train();
  model.forward(images, Index{{1, 3}, {1, 4}});  // moves batch norm's running statistics off their start
  DecodeOptions options;
  options.max_len = 5;
  options.beam_size = 3;
  const auto from_images = attn::models::beam_caption(model, images, options);
  CHECK(model.is_training());
  CHECK(model.encoder.norms[1]->is_training());
  model.eval();
  Tensor features;
  {
    attn::no_grad guard;
    features = model.encode(images);  // [2, 4, 4]: a 2 x 2 grid
  }
  const auto from_features = attn::models::beam_caption(model.captioner, features, options);
  CHECK_FALSE(model.captioner.is_training());  // left in eval mode, as it was
  for (std::size_t b = 0; b < 2; ++b) {
    CHECK(from_images[b].tokens == from_features[b].tokens);
    CHECK(from_images[b].log_prob == from_features[b].log_prob);
  }
  const auto greedy = attn::models::greedy_caption(model, images, options);
  CHECK(greedy.size() == 2);
  CHECK_FALSE(model.is_training());  // restored to eval, as it was
}

TEST_CASE("beam_caption: bad options and features refused by name") {
  attn::manual_seed(9);
  GridCaptioner model(tiny_config());
  const Tensor features = test::randn({1, 4, 3}, 10, false);
  DecodeOptions options;
  options.beam_size = 0;
  CHECK_THROWS_WITH_SUBSTR(attn::models::beam_caption(model, features, options), attn::ValueError,
                           "beam_caption: beam_size must be at least 1, got 0");
  options.beam_size = 2;
  options.max_len = 0;
  CHECK_THROWS_WITH_SUBSTR(attn::models::beam_caption(model, features, options), attn::ValueError,
                           "beam_caption: max_len must be at least 1, got 0");
  options.max_len = 4;
  CHECK_THROWS_WITH_SUBSTR(attn::models::beam_caption(model, test::randn({1, 4, 5}, 10, false), options),
                           attn::ShapeError, "GridCaptioner: expected features [B, N, 3]");
  CHECK(model.is_training());  // the failed calls left the mode alone
}
