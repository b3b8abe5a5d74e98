// Chapter 4's grid captioner: gradients end to end, step() against forward(),
// attention as a distribution over the cells, hard attention (one cell per
// word), the losses (doubly stochastic, REINFORCE), float32, bad inputs, and
// learning the captions of synthetic grids with the attention on the right cell.
#include "grids.hpp"

#include "train/grid_loss.hpp"

#include <xtensor/xview.hpp>

using attn::Index;
using attn::Tensor;
using attn::models::GridAttention;
using attn::models::GridCaptioner;
using attn::models::GridCaptionerConfig;

namespace {

// Two grids of 4 cells of 3 features; captions of 3 steps over a vocabulary of 5.
struct TinyGrids {
  Tensor features = test::randn({2, 4, 3}, 11, false);
  Index tgt_in = {{1, 3, 4}, {1, 4, 3}};   // <bos> + caption
  Index tgt_out = {{3, 4, 2}, {4, 3, 0}};  // caption + <eos>, padded
};

GridCaptionerConfig tiny_config(GridAttention attention = GridAttention::Soft, std::size_t encoder_dim = 2) {
  GridCaptionerConfig c;
  c.vocab = 5;
  c.feature_dim = 3;
  c.encoder_dim = encoder_dim;
  c.embed_dim = 3;
  c.decoder_dim = 4;
  c.attention_dim = 3;
  c.attention = attention;
  return c;
}

// gradcheck of f over every parameter of the model (and the features).
void gradcheck_model(GridCaptioner& model, const std::function<Tensor()>& f, Tensor features) {
  std::vector<Tensor> inputs = model.parameters();
  features.requires_grad_(true);
  inputs.push_back(features);
  const attn::GradcheckReport report = attn::gradcheck([&](const std::vector<Tensor>&) { return f(); }, inputs);
  INFO(report.str());
  CHECK(report.ok);
}

double max_abs(const xt::xarray<double>& a) { return xt::amax(xt::abs(a))(); }

}  // namespace

TEST_CASE("GridCaptioner: parameters and shapes") {
  attn::manual_seed(1);
  GridCaptioner model(tiny_config());
  auto named = model.named_parameters();
  auto has = [&](const std::string& n) {
    return std::any_of(named.begin(), named.end(), [&](const auto& p) { return p.first == n; });
  };
  for (const char* name : {"project.weight", "init_h.weight", "init_c.weight", "embed.weight", "attention.W1",
                           "attention.W2", "attention.v", "decoder.weight_ih", "out_state.weight",
                           "out_context.weight", "out.weight"})
    CHECK_MESSAGE(has(name), name);
  CHECK(model.decoder.weight_ih.shape() == attn::Shape{16, 3 + 2});  // [y_{t-1}; c_t], c_t of encoder_dim 2
  TinyGrids g;
  CHECK(model.forward(g.features, g.tgt_in).shape() == attn::Shape{2, 3, 5});
  CHECK(model.last_attention().shape() == attn::Shape{2, 3, 4});
  CHECK_FALSE(model.last_attention().requires_grad());

  GridCaptioner plain(tiny_config(GridAttention::Soft, 0));  // h_j = the cells themselves
  CHECK_FALSE(plain.project);
  CHECK(plain.decoder.weight_ih.shape() == attn::Shape{16, 3 + 3});
  CHECK(plain.forward(g.features, g.tgt_in).shape() == attn::Shape{2, 3, 5});
}

TEST_CASE("GridCaptioner: gradcheck over every parameter and the features (soft attention)") {
  attn::manual_seed(2);
  TinyGrids g;
  for (std::size_t encoder_dim : {0, 2}) {
    GridCaptioner model(tiny_config(GridAttention::Soft, encoder_dim));
    gradcheck_model(model, [&] { return model.forward(g.features, g.tgt_in); }, g.features);
  }
}

TEST_CASE("GridCaptioner: gradcheck of the loss with the doubly stochastic penalty") {
  attn::manual_seed(3);
  GridCaptioner model(tiny_config());
  TinyGrids g;
  attn::models::CaptionLossOptions options;
  options.doubly_stochastic = 0.7;
  attn::models::ReinforceBaseline baseline;
  gradcheck_model(
      model,
      [&] { return caption_loss(model.forward_all(g.features, g.tgt_in), g.tgt_out, options, baseline).loss; },
      g.features);
}

TEST_CASE("GridCaptioner: gradcheck with hard attention at inference (one cell, chosen by argmax)") {
  attn::manual_seed(4);
  GridCaptioner model(tiny_config(GridAttention::Hard));
  model.eval();
  TinyGrids g;
  gradcheck_model(model, [&] { return model.forward(g.features, g.tgt_in); }, g.features);
}

TEST_CASE("GridCaptioner: soft weights are a distribution over the cells that moves from word to word") {
  attn::manual_seed(5);
  GridCaptioner model(tiny_config());
  TinyGrids g;
  attn::models::CaptionerOutput out = model.forward_all(g.features, g.tgt_in);
  const xt::xarray<double> a = out.weights.to_array();  // [B, T, N]
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t t = 0; t < 3; ++t) {
      double total = 0;
      for (std::size_t j = 0; j < 4; ++j) {
        CHECK(a(b, t, j) > 0.0);
        total += a(b, t, j);
      }
      CHECK(total == doctest::Approx(1.0).epsilon(1e-12));
    }
  CHECK(max_abs(a - model.last_attention().to_array()) == 0.0);  // soft: c_t is made from a_t itself
  CHECK(max_abs(xt::view(a, 0, 0) - xt::view(a, 0, 1)) > 1e-6);   // a_t depends on s_{t-1}
  CHECK_FALSE(out.choice_log_prob.defined());                       // no samples: nothing for REINFORCE
  // The entropy of each step, -sum_j a_tj log a_tj, between 0 and log N.
  const xt::xarray<double> h = out.entropy.to_array();
  CHECK(max_abs(h - (-xt::sum(a * xt::log(a), {2}))) < 1e-12);
}

TEST_CASE("GridCaptioner: step() fed the gold words gives forward()'s logits and weights") {
  attn::manual_seed(6);
  GridCaptioner model(tiny_config());
  TinyGrids g;
  const xt::xarray<double> full = model.forward(g.features, g.tgt_in).to_array();  // [B, T, V]
  const xt::xarray<double> weights = model.last_attention().to_array();            // [B, T, N]
  attn::models::DecoderState state = model.start(g.features);
  CHECK(state.tensors.at("keys").shape() == attn::Shape{2, 4, 3});  // W_2 h_j, once per grid
  for (std::size_t t = 0; t < 3; ++t) {
    const Index y = xt::view(g.tgt_in, xt::all(), t);
    const xt::xarray<double> logits = model.step(state, y).to_array();  // [B, V]
    CHECK(max_abs(logits - xt::view(full, xt::all(), t)) < 1e-12);
    CHECK(max_abs(state.attention.at("attention").to_array() - xt::view(weights, xt::all(), t)) < 1e-12);
  }
}

TEST_CASE("GridCaptioner: hard attention looks at exactly one cell per word") {
  attn::manual_seed(7);
  GridCaptioner model(tiny_config(GridAttention::Hard));
  TinyGrids g;
  auto one_hot_rows = [](const xt::xarray<double>& w) {
    for (std::size_t b = 0; b < w.shape()[0]; ++b)
      for (std::size_t t = 0; t < w.shape()[1]; ++t) {
        std::size_t ones = 0, zeros = 0;
        for (std::size_t j = 0; j < w.shape()[2]; ++j) {
          if (w(b, t, j) == 1.0) ++ones;
          if (w(b, t, j) == 0.0) ++zeros;
        }
        if (ones != 1 || zeros != w.shape()[2] - 1) return false;
      }
    return true;
  };

  SUBCASE("inference: the peak of a_t") {
    model.eval();
    attn::models::CaptionerOutput out = model.forward_all(g.features, g.tgt_in);
    const xt::xarray<double> used = model.last_attention().to_array();
    CHECK(one_hot_rows(used));
    CHECK(attn::argmax(model.last_attention(), 2) == attn::argmax(out.weights, 2));  // k = argmax_j a_tj
    CHECK_FALSE(out.choice_log_prob.defined());
  }
  SUBCASE("training: a sample from a_t, with its log-probability for REINFORCE") {
    model.train();
    attn::models::CaptionerOutput out = model.forward_all(g.features, g.tgt_in);
    const xt::xarray<double> used = out.used.to_array(), a = out.weights.to_array();
    CHECK(one_hot_rows(used));
    REQUIRE(out.choice_log_prob.defined());
    CHECK(out.choice_log_prob.shape() == attn::Shape{2, 3});
    CHECK(max_abs(out.choice_log_prob.to_array() - xt::log(xt::sum(used * a, {2}))) < 1e-12);
    // The samples follow a_t: over many draws, each cell is picked about a_tj of the time.
    GridCaptioner one_step(tiny_config(GridAttention::Hard));
    xt::xarray<double> counts = xt::zeros<double>({2, 4}), probs;
    const Index bos = xt::ones<std::int64_t>({2, 1});
    for (int i = 0; i < 4000; ++i) {
      attn::models::CaptionerOutput o = one_step.forward_all(g.features, bos);
      counts += xt::view(o.used.to_array(), xt::all(), 0);
      probs = xt::view(o.weights.to_array(), xt::all(), 0);
    }
    CHECK(max_abs(counts / 4000.0 - probs) < 0.03);
  }
  SUBCASE("soft_probability = 1: every training pass uses the expected context (the paper mixes in half)") {
    GridCaptionerConfig c = tiny_config(GridAttention::Hard);
    c.soft_probability = 1.0;
    GridCaptioner mixed(c);
    attn::models::CaptionerOutput out = mixed.forward_all(g.features, g.tgt_in);
    CHECK_FALSE(out.choice_log_prob.defined());
    CHECK(max_abs(out.used.to_array() - out.weights.to_array()) == 0.0);
    mixed.eval();
    mixed.forward(g.features, g.tgt_in);
    CHECK(one_hot_rows(mixed.last_attention().to_array()));  // inference stays hard
  }
  SUBCASE("soft_probability = 0.5: drawn per image, so one batch mixes soft and sampled rows (Xu et al. 4.1)") {
    GridCaptionerConfig c = tiny_config(GridAttention::Hard);
    c.soft_probability = 0.5;
    GridCaptioner mixed(c);
    const std::size_t B = 64;
    Tensor features = test::randn({B, 4, 3}, 13, false);
    const Index tgt_in = xt::ones<std::int64_t>({B, std::size_t{3}});
    attn::models::CaptionerOutput out = mixed.forward_all(features, tgt_in);
    const xt::xarray<double> used = out.used.to_array(), a = out.weights.to_array();  // [B, T, N]
    REQUIRE(out.choice_log_prob.defined());
    const xt::xarray<double> log_prob = out.choice_log_prob.to_array();  // [B, T]
    std::size_t soft_rows = 0, hard_rows = 0, soft_row = 0;
    for (std::size_t b = 0; b < B; ++b) {
      const xt::xarray<double> u = xt::view(used, b), w = xt::view(a, b), lp = xt::view(log_prob, b);
      if (max_abs(u - w) == 0.0) {  // soft for the whole caption: c_t from a_t, no choice made
        ++soft_rows;
        soft_row = b;
        CHECK(max_abs(lp) == 0.0);
      } else {  // sampled at every step: one cell, with its log-probability
        ++hard_rows;
        CHECK(one_hot_rows(xt::xarray<double>(xt::view(used, xt::range(b, b + 1)))));
        CHECK(max_abs(lp - xt::log(xt::sum(u * w, {1}))) < 1e-12);
      }
    }
    CHECK(soft_rows + hard_rows == B);
    CHECK(soft_rows >= 16);  // about half of 64 (a binomial's SD is 4)
    CHECK(hard_rows >= 16);
    // The baseline and the reward are the sampled images' mean: a soft image's reward does not enter.
    REQUIRE(out.sampled.size() == B);
    attn::models::ReinforceBaseline baseline;
    const attn::models::CaptionLoss l = caption_loss(out, tgt_in, {}, baseline);
    const xt::xarray<double> reward =
        -xt::sum(attn::nn::cross_entropy(out.logits, tgt_in, 0, 0.0, attn::nn::Reduction::None).to_array(), {1});
    double sampled_sum = 0;
    std::size_t sampled_count = 0;
    for (std::size_t b = 0; b < B; ++b) {
      CHECK(out.sampled(b) == (max_abs(xt::xarray<double>(xt::view(used, b) - xt::view(a, b))) != 0.0));
      if (out.sampled(b)) sampled_sum += reward(b), ++sampled_count;
    }
    CHECK(l.reward == doctest::Approx(sampled_sum / double(sampled_count)).epsilon(1e-12));
    CHECK(baseline.value == doctest::Approx(sampled_sum / double(sampled_count)).epsilon(1e-12));
    // A soft row's words depend on a_t through c_t: the gradient reaches the attention MLP directly.
    attn::sum(attn::select(out.logits, 0, static_cast<long>(soft_row))).backward();
    CHECK(max_abs(mixed.attention.v.grad().to_array()) > 0.0);
  }
  SUBCASE("HardAtInference: soft in training, one cell in eval mode") {
    GridCaptioner mixed(tiny_config(GridAttention::HardAtInference));
    mixed.forward(g.features, g.tgt_in);
    CHECK_FALSE(one_hot_rows(mixed.last_attention().to_array()));
    mixed.eval();
    mixed.forward(g.features, g.tgt_in);
    CHECK(one_hot_rows(mixed.last_attention().to_array()));
  }
}

TEST_CASE("caption_loss: the cross-entropy, the doubly stochastic penalty and the REINFORCE surrogate by hand") {
  attn::manual_seed(8);
  TinyGrids g;
  const xt::xarray<double> real = {{1, 1, 1}, {1, 1, 0}};  // the last step of caption 1 is padding
  const double tokens = 5;

  SUBCASE("soft") {
    GridCaptioner model(tiny_config());
    attn::models::CaptionerOutput out = model.forward_all(g.features, g.tgt_in);
    attn::models::CaptionLossOptions options;
    options.doubly_stochastic = 0.5;
    attn::models::ReinforceBaseline baseline;
    attn::models::CaptionLoss l = caption_loss(out, g.tgt_out, options, baseline);
    const double nll = attn::nn::cross_entropy(out.logits, g.tgt_out, 0).item();
    CHECK(l.nll == doctest::Approx(nll).epsilon(1e-12));
    const xt::xarray<double> a = out.weights.to_array();  // [B, T, N]
    const xt::xarray<double> attended = xt::sum(a * xt::view(real, xt::all(), xt::all(), xt::newaxis()), {1});
    const double penalty = xt::sum(xt::square(1.0 - attended))();
    CHECK(l.penalty == doctest::Approx(penalty / 2).epsilon(1e-12));
    CHECK(l.loss.item() == doctest::Approx(nll + 0.5 * penalty / tokens).epsilon(1e-12));
    CHECK_FALSE(baseline.started);  // nothing sampled, no baseline
  }
  SUBCASE("hard: REINFORCE with a moving-average baseline, and the entropy bonus") {
    GridCaptioner model(tiny_config(GridAttention::Hard));
    attn::models::CaptionLossOptions options;
    options.reinforce = 0.8;
    options.entropy = 0.3;
    attn::models::ReinforceBaseline baseline;
    attn::models::CaptionerOutput out = model.forward_all(g.features, g.tgt_in);
    attn::models::CaptionLoss l = caption_loss(out, g.tgt_out, options, baseline);
    const xt::xarray<double> nll =
        attn::nn::cross_entropy(out.logits, g.tgt_out, 0, 0.0, attn::nn::Reduction::None).to_array();  // [B, T]
    const xt::xarray<double> reward = -xt::sum(nll, {1});                                              // [B]
    const double mean_reward = xt::mean(reward)();
    CHECK(l.reward == doctest::Approx(mean_reward).epsilon(1e-12));
    CHECK(baseline.started);
    CHECK(baseline.value == doctest::Approx(mean_reward).epsilon(1e-12));  // the first batch starts the average
    const xt::xarray<double> choices = xt::sum(out.choice_log_prob.to_array() * real, {1});  // log p(k | grid)
    const double surrogate = xt::sum(nll)() - 0.8 * xt::sum((reward - mean_reward) * choices)() -
                             0.3 * xt::sum(out.entropy.to_array() * real)();
    CHECK(l.loss.item() == doctest::Approx(surrogate / tokens).epsilon(1e-12));

    // The second batch is compared with the average so far, which then moves.
    attn::models::CaptionLoss l2 = caption_loss(model.forward_all(g.features, g.tgt_in), g.tgt_out, options, baseline);
    CHECK(baseline.value == doctest::Approx(0.9 * mean_reward + 0.1 * l2.reward).epsilon(1e-12));

    // Only the REINFORCE and entropy terms reach the attention MLP: the sampled cell has no gradient.
    l.loss.backward();
    CHECK(max_abs(model.attention.v.grad().to_array()) > 0.0);
    model.zero_grad();
    options.reinforce = options.entropy = 0.0;
    caption_loss(model.forward_all(g.features, g.tgt_in), g.tgt_out, options, baseline).loss.backward();
    CHECK((!model.attention.v.grad().defined() || max_abs(model.attention.v.grad().to_array()) == 0.0));
    CHECK(max_abs(model.decoder.weight_ih.grad().to_array()) > 0.0);
  }
}

TEST_CASE("GridCaptioner: float32") {
  attn::manual_seed(9);
  GridCaptioner model(tiny_config());
  TinyGrids g;
  Tensor reference = model.forward(g.features, g.tgt_in);
  model.to(attn::Dtype::Float32);
  Tensor logits = model.forward(g.features.to(attn::Dtype::Float32), g.tgt_in);
  CHECK(logits.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(logits, reference, 1e-5));
  attn::models::ReinforceBaseline baseline;
  attn::models::CaptionLoss l = caption_loss(model.forward_all(g.features.to(attn::Dtype::Float32), g.tgt_in),
                                             g.tgt_out, {}, baseline);
  CHECK(l.loss.dtype() == attn::Dtype::Float32);
}

TEST_CASE("GridCaptioner: bad inputs") {
  attn::manual_seed(10);
  GridCaptioner model(tiny_config());
  TinyGrids g;
  CHECK_THROWS_WITH_SUBSTR(model.forward(test::randn({4, 3}, 1, false), g.tgt_in), attn::ShapeError,
                           "expected features [B, N, 3]");
  CHECK_THROWS_WITH_SUBSTR(model.forward(test::randn({2, 4, 5}, 1, false), g.tgt_in), attn::ShapeError,
                           "got [2, 4, 5]");
  CHECK_THROWS_WITH_SUBSTR(model.forward(test::randn({2, 0, 3}, 1, false), g.tgt_in), attn::ShapeError, "N > 0");
  const Index three_rows = xt::ones<std::int64_t>({3, 2});
  CHECK_THROWS_WITH_SUBSTR(model.forward(g.features, three_rows), attn::ShapeError, "expected tgt_in [2, T]");
  attn::models::DecoderState state = model.start(g.features);
  CHECK_THROWS_WITH_SUBSTR(model.step(state, Index{{1, 1}}), attn::ShapeError, "expected y_prev [2]");
  attn::models::ReinforceBaseline baseline;
  CHECK_THROWS_WITH_SUBSTR(caption_loss(model.forward_all(g.features, g.tgt_in), Index{{3, 2}}, {}, baseline),
                           attn::ShapeError, "tgt_out [B, T]");
  CHECK_THROWS_WITH_SUBSTR(caption_loss(model.forward_all(g.features, g.tgt_in), xt::zeros<std::int64_t>({2, 3}), {},
                                        baseline),
                           attn::ValueError, "every target is <pad>");
  GridCaptionerConfig bad = tiny_config();
  bad.feature_dim = 0;
  CHECK_THROWS_WITH_SUBSTR(GridCaptioner{bad}, attn::ValueError, "must be positive");
  bad = tiny_config(GridAttention::Hard);
  bad.soft_probability = 1.5;
  CHECK_THROWS_WITH_SUBSTR(GridCaptioner{bad}, attn::ValueError, "soft_probability must be in [0, 1], got 1.5");
}

TEST_CASE("greedy_caption: one word at a time, with a 3x3 map of the attention for each word") {
  attn::manual_seed(11);
  GridCaptionerConfig c = tiny_config(GridAttention::Hard, 0);
  GridCaptioner model(c);
  Tensor grids = test::randn({3, 9, 3}, 12, false);
  attn::models::DecodeOptions options;
  options.max_len = 6;
  const auto captions = attn::models::greedy_caption(model, grids, options);
  REQUIRE(captions.size() == 3);
  CHECK(model.is_training());  // the mode is restored
  for (const auto& h : captions) {
    REQUIRE(!h.tokens.empty());
    CHECK(h.tokens.size() <= 6);
    CHECK((h.finished || h.tokens.size() == 6));
    const Tensor maps = attn::models::attention_grid(h);
    CHECK(maps.shape() == attn::Shape{h.tokens.size(), 3, 3});
    const xt::xarray<double> m = maps.to_array();
    for (std::size_t t = 0; t < h.tokens.size(); ++t) {  // hard: one cell per word, the peak of a_t
      CHECK(xt::sum(xt::view(m, t))() == 1.0);
      CHECK(xt::amax(xt::view(m, t))() == 1.0);
    }
    CHECK(attn::models::attention_matrix(h, "alpha").shape() == attn::Shape{h.tokens.size(), 9});
  }
  // The words are the argmax of teacher-forced forward() along the greedy caption.
  Index tgt_in = Index::from_shape({1, captions[0].tokens.size()});
  tgt_in(0, 0) = attn::data::Vocab::bos_id;
  for (std::size_t t = 1; t < captions[0].tokens.size(); ++t) tgt_in(0, t) = captions[0].tokens[t - 1];
  model.eval();
  const Index best = attn::argmax(model.forward(attn::narrow(grids, 0, 0, 1), tgt_in), -1);  // [1, T]
  for (std::size_t t = 0; t < captions[0].tokens.size(); ++t) CHECK(best(0, t) == captions[0].tokens[t]);
  CHECK_THROWS_WITH_SUBSTR(attn::models::attention_grid(captions[0], 2), attn::ShapeError, "9 cells");
}

TEST_CASE("GridCaptioner with soft attention learns to caption grids, looking at the cell each word describes") {
  const test::Learned r = test::learn_grids(GridAttention::Soft, 600);
  const auto& e = r.eval;
  MESSAGE("soft attention, 600 steps: exact match " << e.overall.exact_match() << ", token accuracy "
          << e.overall.token_accuracy() << ", attention peak on the gold cell " << e.alignment.hit_rate()
          << " (teacher forced), " << e.decoded_alignment.hit_rate() << " (greedy), mean weight on it "
          << e.alignment.mean_gold_weight() << ", " << r.seconds << " s");
  CHECK(e.overall.sentences == 200);
  CHECK(e.overall.exact_match() >= 0.9);
  CHECK(e.overall.token_accuracy() >= 0.95);
  CHECK(e.alignment.steps > 1400);  // every caption word but ","
  CHECK(e.alignment.hit_rate() > 0.8);
  CHECK(e.decoded_alignment.hit_rate() > 0.8);
}
