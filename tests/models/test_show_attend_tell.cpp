// Show, Attend and Tell on pixels (models/show_attend_tell.hpp): the CNN encoder, the gate
// beta of Xu et al., hard attention's replayed choices; PyTorch's values on fixed weights
// (tools/reference/show_attend_tell.py: soft attention with the gate in training and eval
// mode, hard attention's REINFORCE surrogate over the same cells, argmax decoding),
// gradcheck, bad input refused by name, and chapter 4's GridCaptioner unchanged with the
// gate off.
#include "../helpers.hpp"
#include "../reference.hpp"

#include "decode/grid_decode.hpp"
#include "models/show_attend_tell.hpp"
#include "train/grid_loss.hpp"

#include <xtensor/xview.hpp>

#include <memory>
#include <random>
#include <set>

using attn::Index;
using attn::Tensor;
using attn::models::CaptionerOutput;
using attn::models::CaptionLossOptions;
using attn::models::GridAttention;
using attn::models::GridCaptioner;
using attn::models::GridCaptionerConfig;
using attn::models::ReinforceBaseline;
using attn::models::ShowAttendTell;
using attn::models::ShowAttendTellConfig;

namespace {

constexpr double kTol = 1e-10;  // float64 against PyTorch

// The reference's model: 3 x 8 x 12 images, two blocks of 3 and 4 channels -> a 2 x 3 grid of
// D = 4; vocabulary 7, the gate on.
ShowAttendTellConfig reference_config(GridAttention attention) {
  ShowAttendTellConfig c;
  c.encoder.channels = {3, 4};
  c.captioner.vocab = 7;
  c.captioner.encoder_dim = 3;
  c.captioner.embed_dim = 3;
  c.captioner.decoder_dim = 5;
  c.captioner.attention_dim = 4;
  c.captioner.attention = attention;
  c.captioner.gate = true;
  return c;
}

// Every parameter and buffer from the reference case, by the model's own state() names.
void load(ShowAttendTell& model, const test::Reference& ref, const std::string& name) {
  std::set<std::string> parameters;
  for (const auto& entry : model.named_parameters()) parameters.insert(entry.first);
  for (auto& [key, t] : model.state()) *t = ref.tensor(name, key, parameters.count(key) > 0);
}

bool close(const Tensor& a, const Tensor& b, double tol = kTol) { return test::allclose(a, b, tol); }

// Every parameter's gradient, and the images', against the reference's.
void check_gradients(const ShowAttendTell& model, const Tensor& images, const test::Reference& ref,
                     const std::string& name) {
  for (const auto& [key, p] : model.named_parameters()) {
    INFO("grad of " << key);
    REQUIRE(p.grad().defined());
    CHECK(close(p.grad(), ref.tensor(name, "grad_" + key)));
  }
  CHECK(close(images.grad(), ref.tensor(name, "grad_images")));
}

double max_abs(const xt::xarray<double>& a) { return xt::amax(xt::abs(a))(); }

}  // namespace

TEST_CASE("ShowAttendTell: state keys as PyTorch's (an nn.Sequential encoder), shapes and the grid") {
  test::Reference ref("show_attend_tell");
  ShowAttendTell model(reference_config(GridAttention::Soft));
  const auto state = model.state();
  CHECK(state.size() == static_cast<std::size_t>(ref.array("soft_train", "state_count")()));
  for (const auto& [key, t] : state) CHECK_MESSAGE(ref.has("soft_train", key), key);  // the same names, both ways
  CHECK(state.front().first == "encoder.0.weight");
  CHECK(model.encoder.convs[1]->weight.shape() == attn::Shape{4, 3, 3, 3});
  CHECK_FALSE(model.encoder.convs[0]->bias.defined());  // batch norm's bias replaces it
  CHECK(model.captioner.config.feature_dim == 4);        // from the encoder's last block
  REQUIRE(model.captioner.f_beta);
  CHECK(model.captioner.f_beta->weight.shape() == attn::Shape{1, 5});  // a scalar gate per step

  const attn::Size2 grid = model.grid_size(8, 12);
  CHECK(grid == attn::Size2{2, 3});
  CHECK(model.grid_size(9, 13) == attn::Size2{2, 3});  // the pools floor, as PyTorch's
  Tensor images = test::randn({2, 3, 8, 12}, 1, false);
  CHECK(model.encode(images).shape() == attn::Shape{2, 6, 4});  // [B, rows * cols, D]
  const Index tgt_in = {{1, 3, 4}, {1, 4, 0}};
  CaptionerOutput out = model.forward_all(images, tgt_in);
  CHECK(out.logits.shape() == attn::Shape{2, 3, 7});
  CHECK(out.weights.shape() == attn::Shape{2, 3, 6});
  CHECK(out.gate.shape() == attn::Shape{2, 3});
  CHECK(model.last_attention().shape() == attn::Shape{2, 3, 6});
  const std::string text = model.str();
  CHECK(text.find("channels={3, 4}") != std::string::npos);
  CHECK(text.find("gate=true") != std::string::npos);
}

TEST_CASE("ShowAttendTell equals PyTorch: soft attention with the gate, training mode (batch statistics)") {
  test::Reference ref("show_attend_tell");
  const std::string c = "soft_train";
  ShowAttendTell model(reference_config(GridAttention::Soft));
  load(model, ref, c);
  model.train();
  Tensor images = ref.tensor(c, "images", true);
  CaptionerOutput out = model.forward_all(images, ref.index(c, "tgt_in"));
  CHECK(close(out.logits, ref.tensor(c, "logits")));
  CHECK(close(out.weights, ref.tensor(c, "weights")));
  CHECK(close(out.gate, ref.tensor(c, "gate")));
  CHECK(close(out.entropy, ref.tensor(c, "entropy")));
  CaptionLossOptions options;
  options.doubly_stochastic = ref.array(c, "doubly_stochastic")();
  ReinforceBaseline baseline;
  attn::models::CaptionLoss loss = caption_loss(out, ref.index(c, "tgt_out"), options, baseline);
  CHECK(loss.loss.item() == doctest::Approx(ref.array(c, "loss")()).epsilon(kTol));
  CHECK(loss.nll == doctest::Approx(ref.array(c, "nll")()).epsilon(kTol));
  CHECK(loss.penalty == doctest::Approx(ref.array(c, "penalty")()).epsilon(kTol));
  loss.loss.backward();
  check_gradients(model, images, ref, c);
  // Batch norm moved its running statistics toward the batch's, as PyTorch's did.
  for (const auto& [key, t] : model.named_buffers()) {
    INFO("buffer " << key);
    CHECK(close(t, ref.tensor(c, "after_" + key)));
  }
  CHECK(close(model.encode(images.detach()), ref.tensor(c, "annotations")));  // row-major cells
}

TEST_CASE("ShowAttendTell equals PyTorch: soft attention with the gate, eval mode (running statistics)") {
  test::Reference ref("show_attend_tell");
  const std::string c = "soft_eval";
  ShowAttendTell model(reference_config(GridAttention::Soft));
  load(model, ref, c);
  model.eval();
  Tensor images = ref.tensor(c, "images", true);
  CHECK(close(model.encode(images), ref.tensor(c, "annotations")));
  CaptionerOutput out = model.forward_all(images, ref.index(c, "tgt_in"));
  CHECK(close(out.logits, ref.tensor(c, "logits")));
  CHECK(close(out.weights, ref.tensor(c, "weights")));
  CHECK(close(out.gate, ref.tensor(c, "gate")));
  CaptionLossOptions options;
  options.doubly_stochastic = ref.array(c, "doubly_stochastic")();
  ReinforceBaseline baseline;
  attn::models::CaptionLoss loss = caption_loss(out, ref.index(c, "tgt_out"), options, baseline);
  CHECK(loss.loss.item() == doctest::Approx(ref.array(c, "loss")()).epsilon(kTol));
  loss.loss.backward();
  check_gradients(model, images, ref, c);
  for (const auto& [key, t] : model.named_buffers()) {  // eval mode changes nothing
    INFO("buffer " << key);
    CHECK(close(t, ref.tensor(c, key), 0.0));
  }
}

TEST_CASE("ShowAttendTell equals PyTorch: hard attention's REINFORCE surrogate over the same cells (training)") {
  // The reference sampled the cells from its a_t with its own generator (image 1 read soft, a row
  // of -1) and recorded them; the model replays them. The next test case shows that a replay of the
  // model's own samples is its sampled pass, so this is the sampled pass's surrogate.
  test::Reference ref("show_attend_tell");
  const std::string c = "hard_train";
  ShowAttendTell model(reference_config(GridAttention::Hard));
  load(model, ref, c);
  model.train();
  Tensor images = ref.tensor(c, "images", true);
  const Index cells = ref.index(c, "cells");
  CaptionerOutput out = model.forward_all(images, ref.index(c, "tgt_in"), cells);
  CHECK(close(out.logits, ref.tensor(c, "logits")));
  CHECK(close(out.weights, ref.tensor(c, "weights")));
  CHECK(close(out.used, ref.tensor(c, "used")));
  CHECK(close(out.gate, ref.tensor(c, "gate")));
  CHECK(close(out.entropy, ref.tensor(c, "entropy")));
  REQUIRE(out.choice_log_prob.defined());
  CHECK(close(out.choice_log_prob, ref.tensor(c, "choice_log_prob")));
  CHECK(out.cells == cells);
  CHECK(out.sampled == xt::xarray<bool>{true, false, true});
  CaptionLossOptions options;
  options.doubly_stochastic = ref.array(c, "doubly_stochastic")();
  options.reinforce = ref.array(c, "reinforce")();
  options.entropy = ref.array(c, "entropy_weight")();
  ReinforceBaseline baseline{ref.array(c, "baseline")(), true};
  attn::models::CaptionLoss loss = caption_loss(out, ref.index(c, "tgt_out"), options, baseline);
  CHECK(loss.loss.item() == doctest::Approx(ref.array(c, "loss")()).epsilon(kTol));
  CHECK(loss.reward == doctest::Approx(ref.array(c, "reward")()).epsilon(kTol));
  CHECK(baseline.value == doctest::Approx(ref.array(c, "baseline_after")()).epsilon(kTol));
  loss.loss.backward();
  check_gradients(model, images, ref, c);
}

TEST_CASE("ShowAttendTell equals PyTorch: hard attention in eval mode, argmax cells and greedy captions") {
  test::Reference ref("show_attend_tell");
  const std::string c = "hard_eval";
  ShowAttendTell model(reference_config(GridAttention::Hard));
  load(model, ref, c);
  const Tensor images = ref.tensor(c, "images");
  model.eval();
  CaptionerOutput out = model.forward_all(images, ref.index(c, "tgt_in"));
  CHECK(close(out.logits, ref.tensor(c, "logits")));
  CHECK(close(out.used, ref.tensor(c, "used"), 0.0));  // one-hot at argmax_j a_tj
  CHECK(close(out.gate, ref.tensor(c, "gate")));
  CHECK_FALSE(out.choice_log_prob.defined());

  model.train();  // greedy_caption decodes in eval mode, and restores the mode
  attn::models::DecodeOptions options;
  options.max_len = static_cast<std::size_t>(ref.array(c, "max_len")());
  const auto captions = attn::models::greedy_caption(model, images, options);
  CHECK(model.is_training());
  CHECK(model.encoder.norms[0]->is_training());
  const Index tokens = ref.index(c, "tokens");                                  // [B, max_len], -1 past the end
  const xt::xarray<double> log_prob = ref.array(c, "log_prob");                 // [B]
  const xt::xarray<double> attention = ref.array(c, "attention"), alpha = ref.array(c, "alpha");  // [B, max_len, N]
  const xt::xarray<double> gates = ref.array(c, "gates");                       // [B, max_len]
  REQUIRE(captions.size() == 3);
  std::set<std::vector<std::int64_t>> distinct;
  for (std::size_t b = 0; b < 3; ++b) {
    INFO("image " << b);
    std::vector<std::int64_t> expected;
    for (std::size_t t = 0; t < options.max_len && tokens(b, t) >= 0; ++t) expected.push_back(tokens(b, t));
    const auto& h = captions[b];
    CHECK(h.tokens == expected);
    CHECK(h.finished == (expected.back() == attn::data::Vocab::eos_id));
    CHECK(h.log_prob == doctest::Approx(log_prob(b)).epsilon(kTol));
    for (std::size_t t = 0; t < h.tokens.size(); ++t) {
      CHECK(max_abs(h.attention.at("attention")[t].to_array() - xt::view(attention, b, t)) == 0.0);
      CHECK(max_abs(h.attention.at("alpha")[t].to_array() - xt::view(alpha, b, t)) < kTol);
      CHECK(std::abs(h.attention.at("gate")[t].to_array()(0) - gates(b, t)) < kTol);
    }
    distinct.insert(h.tokens);
  }
  CHECK(distinct.size() > 1);  // the reference's captions depend on the image
  CHECK(attn::models::attention_grid(captions[0], model.grid_size(8, 12)[0]).shape() ==
        attn::Shape{captions[0].tokens.size(), 2, 3});
}

TEST_CASE("GridCaptioner: a replay of its own sampled cells is its sampled pass, bit for bit") {
  for (double soft_probability : {0.0, 0.5}) {
    INFO("soft_probability " << soft_probability);
    ShowAttendTellConfig c = reference_config(GridAttention::Hard);
    c.captioner.soft_probability = soft_probability;
    attn::manual_seed(11);
    ShowAttendTell model(c);
    Tensor images = test::randn({6, 3, 8, 12}, 12, false);
    const Index tgt_in = {{1, 3, 4, 5}, {1, 5, 6, 3}, {1, 4, 0, 0}, {1, 6, 6, 0}, {1, 3, 3, 3}, {1, 5, 4, 0}};
    const Index tgt_out = {{3, 4, 5, 2}, {5, 6, 3, 2}, {4, 2, 0, 0}, {6, 6, 2, 0}, {3, 3, 3, 2}, {5, 4, 2, 0}};
    CaptionLossOptions options;
    options.doubly_stochastic = 0.5;
    auto run = [&](const Index* cells) {
      model.zero_grad();
      CaptionerOutput out = cells ? model.forward_all(images, tgt_in, *cells) : model.forward_all(images, tgt_in);
      ReinforceBaseline baseline{-9.0, true};
      caption_loss(out, tgt_out, options, baseline).loss.backward();
      std::vector<xt::xarray<double>> grads;
      for (const Tensor& p : model.parameters()) grads.push_back(p.grad().to_array());
      return std::make_pair(out, grads);
    };
    attn::manual_seed(13);
    const auto [sampled, sampled_grads] = run(nullptr);
    REQUIRE(sampled.cells.dimension() == 2);
    if (soft_probability > 0) {  // the seed draws both kinds of image
      CHECK(std::count(sampled.sampled.begin(), sampled.sampled.end(), true) > 0);
      CHECK(std::count(sampled.sampled.begin(), sampled.sampled.end(), false) > 0);
    }
    const auto [replayed, replayed_grads] = run(&sampled.cells);
    CHECK(max_abs(replayed.logits.to_array() - sampled.logits.to_array()) == 0.0);
    CHECK(max_abs(replayed.used.to_array() - sampled.used.to_array()) == 0.0);
    CHECK(max_abs(replayed.choice_log_prob.to_array() - sampled.choice_log_prob.to_array()) == 0.0);
    CHECK(replayed.sampled == sampled.sampled);
    CHECK(replayed.cells == sampled.cells);
    for (std::size_t i = 0; i < sampled_grads.size(); ++i) CHECK(max_abs(replayed_grads[i] - sampled_grads[i]) == 0.0);
  }
}

TEST_CASE("ShowAttendTell: gradcheck in float64 over every parameter and the images") {
  ShowAttendTellConfig c = reference_config(GridAttention::Soft);
  c.encoder.channels = {2, 3};
  c.captioner.vocab = 5;
  c.captioner.embed_dim = 2;
  c.captioner.decoder_dim = 3;
  c.captioner.attention_dim = 2;
  c.captioner.encoder_dim = 2;
  Tensor images = test::randn({2, 3, 4, 8}, 21);  // a 1 x 2 grid
  // No <pad> read: its embedding row is held at zero (no gradient), which a finite difference would move.
  const Index tgt_in = {{1, 3, 4}, {1, 4, 3}};
  const Index tgt_out = {{3, 4, 2}, {4, 2, 0}};
  CaptionLossOptions options;
  options.doubly_stochastic = 0.7;
  auto check = [&](ShowAttendTell& model, const std::function<Tensor()>& f) {
    const attn::GradcheckReport report =
        attn::gradcheck([&](const std::vector<Tensor>&) { return f(); }, test::with_parameters(model, {images}));
    INFO(report.str());
    CHECK(report.ok);
  };
  SUBCASE("soft attention with the gate, training mode: the loss with the doubly stochastic penalty") {
    attn::manual_seed(22);
    ShowAttendTell model(c);
    check(model, [&] {
      ReinforceBaseline baseline;
      return caption_loss(model.forward_all(images, tgt_in), tgt_out, options, baseline).loss;
    });
  }
  SUBCASE("soft attention with the gate, eval mode") {
    attn::manual_seed(23);
    ShowAttendTell model(c);
    model.eval();
    check(model, [&] { return model.forward(images, tgt_in); });
  }
  SUBCASE("hard attention over given cells: the logits and log a_{t,k} of the choices") {
    c.captioner.attention = GridAttention::Hard;
    attn::manual_seed(24);
    ShowAttendTell model(c);
    const Index cells = {{1, 0, 1}, {-1, -1, -1}};
    check(model, [&] {
      CaptionerOutput out = model.forward_all(images, tgt_in, cells);
      return attn::concat({attn::reshape(out.logits, {-1}), attn::reshape(out.choice_log_prob, {-1}),
                           attn::reshape(out.entropy, {-1})}, 0);
    });
  }
}

TEST_CASE("ShowAttendTell: bad input refused by name") {
  attn::manual_seed(31);
  ShowAttendTell model(reference_config(GridAttention::Hard));
  const Index tgt_in = {{1, 3}, {1, 4}};
  SUBCASE("images") {
    CHECK_THROWS_WITH_SUBSTR(model.encode(test::randn({3, 8, 12}, 1, false)), attn::ShapeError,
                             "CnnEncoder: expected images [B, 3, H, W] (B > 0 images of 3 channels), got [3, 8, 12]");
    CHECK_THROWS_WITH_SUBSTR(model.encode(test::randn({2, 1, 8, 12}, 1, false)), attn::ShapeError,
                             "3 channels), got [2, 1, 8, 12]");  // a grayscale picture
    CHECK_THROWS_WITH_SUBSTR(model.encode(test::randn({0, 3, 8, 12}, 1, false)), attn::ShapeError, "got [0, 3, 8, 12]");
    CHECK_THROWS_WITH_SUBSTR(model.encode(test::randn({2, 3, 3, 12}, 1, false)), attn::ShapeError,
                             "CnnEncoder: an image of 3x12 is too small for 2 blocks with a max-pool of 2 each: it "
                             "needs at least 4x4");
    CHECK_THROWS_WITH_SUBSTR(model.encode(Tensor()), attn::ValueError, "CnnEncoder: the images are undefined");
    CHECK_THROWS_WITH_SUBSTR(model.grid_size(8, 2), attn::ShapeError, "an image of 8x2 is too small");
    CHECK_THROWS_WITH_SUBSTR(model.forward_all(test::randn({3, 3, 8, 12}, 1, false), tgt_in), attn::ShapeError,
                             "GridCaptioner: expected tgt_in [3, T]");
  }
  SUBCASE("replayed cells") {
    const Tensor images = test::randn({2, 3, 8, 12}, 1, false);
    CHECK_THROWS_WITH_SUBSTR(model.forward_all(images, tgt_in, Index{{0, 1}}), attn::ShapeError,
                             "GridCaptioner: expected cells [2, 2] (as tgt_in), got [1, 2]");
    CHECK_THROWS_WITH_SUBSTR(model.forward_all(images, tgt_in, Index{{0, 6}, {1, 1}}), attn::ValueError,
                             "GridCaptioner: cells(0, 1) = 6 is not a cell of the 6 (nor -1, read soft)");
    CHECK_THROWS_WITH_SUBSTR(model.forward_all(images, tgt_in, Index{{0, 1}, {-1, 2}}), attn::ValueError,
                             "GridCaptioner: row 1 of cells mixes -1 (read soft) and cells");
    ShowAttendTell soft(reference_config(GridAttention::Soft));
    CHECK_THROWS_WITH_SUBSTR(soft.forward_all(images, tgt_in, Index{{0, 1}, {1, 1}}), attn::ValueError,
                             "GridCaptioner: replaying cells needs hard attention, this model's is soft");
  }
  SUBCASE("configurations") {
    ShowAttendTellConfig c = reference_config(GridAttention::Soft);
    c.captioner.feature_dim = 5;
    CHECK_THROWS_WITH_SUBSTR(ShowAttendTell{c}, attn::ValueError,
                             "ShowAttendTell: captioner.feature_dim is 5 but the encoder's last block has 4 channels");
    c = reference_config(GridAttention::Soft);
    c.encoder.channels = {};
    CHECK_THROWS_WITH_SUBSTR(ShowAttendTell{c}, attn::ValueError, "CnnEncoder: channels must name at least one block");
    CHECK_THROWS_WITH_SUBSTR(attn::models::CnnEncoder{c.encoder}, attn::ValueError,
                             "CnnEncoder: channels must name at least one block, got none");
    c.encoder.channels = {3, 0};
    CHECK_THROWS_WITH_SUBSTR(attn::models::CnnEncoder{c.encoder}, attn::ValueError,
                             "CnnEncoder: block 1 has 0 channels");
    c.encoder.channels = {3};
    c.encoder.kernel_size = 4;
    CHECK_THROWS_WITH_SUBSTR(attn::models::CnnEncoder{c.encoder}, attn::ValueError,
                             "CnnEncoder: kernel_size must be odd (padding kernel_size / 2 keeps the size), got 4");
    c.encoder.kernel_size = 3;
    c.encoder.pool = 0;
    CHECK_THROWS_WITH_SUBSTR(attn::models::CnnEncoder{c.encoder}, attn::ValueError,
                             "CnnEncoder: pool must be positive");
  }
}

// ---- the gate off: chapter 4's GridCaptioner as it was ----------------------------------------

namespace {

GridCaptionerConfig chapter4_config(GridAttention attention, double soft_probability, bool gate) {
  GridCaptionerConfig c;
  c.vocab = 5;
  c.feature_dim = 3;
  c.encoder_dim = 2;
  c.embed_dim = 3;
  c.decoder_dim = 4;
  c.attention_dim = 3;
  c.attention = attention;
  c.soft_probability = soft_probability;
  c.gate = gate;
  return c;
}

// sum_i x_i (1 + i / n): every entry, and where it sits, counts.
double weighted(const Tensor& t) {
  const xt::xarray<double> a = t.to_array();
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a.flat(i) * (1.0 + double(i) / double(a.size()));
  return s;
}

// Everything one seeded model computes: its initial weights, a training pass (sampling, for hard
// attention), the loss and every gradient, then three eval-mode steps. Summaries, and the cells.
struct Pass {
  std::vector<double> values;  // weights, logits, weights a_t, entropy, choices, loss, gradients, steps
  std::vector<std::int64_t> cells;  // the cell read at each (b, t), -1 where an image was read soft
  std::vector<xt::xarray<double>> arrays;  // everything, for comparisons to the bit
};

Pass chapter4_pass(GridAttention attention, double soft_probability, std::uint64_t seed, bool gate_at_one = false) {
  attn::manual_seed(seed);
  std::unique_ptr<GridCaptioner> built;
  if (gate_at_one) {
    { GridCaptioner without(chapter4_config(attention, soft_probability, false)); }
    const std::mt19937_64 after_without = attn::default_generator().engine();
    attn::manual_seed(seed);
    built = std::make_unique<GridCaptioner>(chapter4_config(attention, soft_probability, true));
    // The gate's Linear is built last: the other weights are the same. Hard attention's draws then
    // start where they would without the gate's weights drawn.
    attn::default_generator().engine() = after_without;
    // beta_t = sigmoid(40) = 1 exactly in float64: c_t <- 1 * c_t.
    built->f_beta->weight = attn::zeros({1, 4}, attn::Dtype::Float64, true);
    built->f_beta->bias = attn::full({1}, 40.0, attn::Dtype::Float64, true);
  } else {
    built = std::make_unique<GridCaptioner>(chapter4_config(attention, soft_probability, false));
  }
  GridCaptioner& model = *built;
  attn::Generator gen(seed + 100);
  Tensor features = attn::randn({6, 4, 3}, attn::Dtype::Float64, gen);
  features.requires_grad_(true);
  const Index tgt_in = {{1, 3, 4}, {1, 4, 3}, {1, 3, 3}, {1, 4, 4}, {1, 2, 0}, {1, 3, 4}};
  const Index tgt_out = {{3, 4, 2}, {4, 3, 0}, {3, 3, 2}, {4, 4, 2}, {2, 0, 0}, {3, 4, 2}};
  Pass pass;
  auto keep = [&](const Tensor& t) { pass.arrays.push_back(t.to_array()); return weighted(t); };
  double initial = 0, gradients = 0, steps = 0;
  const auto named = model.named_parameters();
  for (const auto& [name, p] : named)
    if (name.rfind("f_beta", 0) != 0) initial += keep(p);
  CaptionerOutput out = model.forward_all(features, tgt_in);
  pass.values = {initial, keep(out.logits), keep(out.weights), keep(out.entropy),
                 out.choice_log_prob.defined() ? keep(out.choice_log_prob) : 0.0};
  const Index k = attn::argmax(out.used, 2);
  for (std::size_t b = 0; b < 6; ++b)
    for (std::size_t t = 0; t < 3; ++t) pass.cells.push_back(out.sampled.size() == 6 && !out.sampled(b) ? -1 : k(b, t));
  CaptionLossOptions options;
  options.doubly_stochastic = 0.7;
  ReinforceBaseline baseline;
  attn::models::CaptionLoss loss = caption_loss(out, tgt_out, options, baseline);
  loss.loss.backward();
  pass.values.push_back(keep(loss.loss));
  for (const auto& [name, p] : named)
    if (name.rfind("f_beta", 0) != 0) gradients += keep(p.grad());
  gradients += keep(features.grad());
  pass.values.push_back(gradients);
  model.eval();
  attn::no_grad guard;
  attn::models::DecoderState state = model.start(features);
  for (std::size_t t = 0; t < 3; ++t) {
    const Index y = xt::view(tgt_in, xt::all(), t);
    steps += keep(model.step(state, y)) + keep(state.attention.at("attention")) + keep(state.attention.at("alpha"));
  }
  pass.values.push_back(steps);
  return pass;
}

struct Pinned {
  const char* name;
  GridAttention attention;
  double soft_probability;
  std::uint64_t seed;
  std::vector<double> values;
  std::vector<std::int64_t> cells;
};

// chapter4_pass's values as the GridCaptioner computed them before the gate existed (recorded with
// that build on x86-64 with AVX-512, where they still match to the bit; another CPU's SIMD kernels,
// core/backend/vecmath.hpp, and BLAS may differ in the last bits, hence the 1e-12).
const std::vector<Pinned>& pinned() {
  static const std::vector<Pinned> p = {
      {"soft", GridAttention::Soft, 0.0, 1,
       {-0x1.67c8cec15da0fp+1, -0x1.0af355bde50f9p+1, 0x1.ae1b78775e1f1p+4, 0x1.24000125ae0e1p+5, 0x0p+0,
        0x1.b7a59ee7faaefp+0, 0x1.fb750ac525b6ep-5, 0x1.a0ba593df5686p+5},
       {2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 3, 1, 1, 1}},
      {"hard", GridAttention::Hard, 0.0, 2,
       {-0x1.4e9fafe702f3cp+2, -0x1.468871e8e9213p+3, 0x1.adbc088093ca2p+4, 0x1.20c9d82d519aep+5,
        -0x1.183f71419a4aep+5, 0x1.5d20e3d346bf3p+0, -0x1.10b23fbd1c537p-1, 0x1.5dce2eee1fa6ep+5},
       {0, 2, 0, 1, 0, 0, 1, 3, 2, 3, 2, 0, 0, 3, 0, 1, 2, 3}},
      {"mixture", GridAttention::Hard, 0.5, 3,
       {-0x1.431aa8869fe09p+3, -0x1.5916366083b3cp+3, 0x1.ae05f3443e60ap+4, 0x1.25d5459c6af12p+5,
        -0x1.134dff71e91d6p+4, 0x1.981500f12a355p+0, -0x1.44aa1a330b0adp+0, 0x1.6e780b774a455p+5},
       {3, 0, 2, -1, -1, -1, 0, 1, 2, -1, -1, -1, 3, 1, 0, -1, -1, -1}},
      {"hard_at_inference", GridAttention::HardAtInference, 0.0, 4,
       {0x1.9451b7195aa45p+3, -0x1.14b2676a7b16cp+4, 0x1.ae09a496ea1d4p+4, 0x1.2567ca4cdf06fp+5, 0x0p+0,
        0x1.954029b7bbc11p+0, -0x1.5a28d28723298p-2, 0x1.2ecd5ddfeec0ap+5},
       {2, 2, 2, 1, 1, 1, 0, 0, 0, 2, 2, 2, 3, 3, 3, 2, 2, 2}},
  };
  return p;
}

}  // namespace

TEST_CASE("GridCaptioner with the gate off computes what it did before the gate existed") {
  for (const Pinned& p : pinned()) {
    INFO(std::string(p.name));
    const Pass pass = chapter4_pass(p.attention, p.soft_probability, p.seed);
    CHECK(pass.cells == p.cells);  // the same draws from the generator, in the same order
    REQUIRE(pass.values.size() == p.values.size());
    for (std::size_t i = 0; i < p.values.size(); ++i) {
      INFO("value " << i << ": " << pass.values[i] << " against " << p.values[i]);
      CHECK(std::abs(pass.values[i] - p.values[i]) <= 1e-12 * std::max(1.0, std::abs(p.values[i])));
    }
  }
}

TEST_CASE("GridCaptioner: the gate held at beta = 1 gives the model without it, bit for bit") {
  // The gate's Linear is built last, so the other weights are the same; sigmoid(40) is 1 in float64.
  // Every value and gradient to the bit: the gate is one product c_t <- beta_t c_t and nothing else.
  for (const Pinned& p : pinned()) {
    INFO(std::string(p.name));
    const Pass off = chapter4_pass(p.attention, p.soft_probability, p.seed);
    const Pass at_one = chapter4_pass(p.attention, p.soft_probability, p.seed, /*gate_at_one=*/true);
    CHECK(at_one.cells == off.cells);
    REQUIRE(at_one.arrays.size() == off.arrays.size());
    for (std::size_t i = 0; i < off.arrays.size(); ++i) {
      INFO("array " << i);
      CHECK(max_abs(at_one.arrays[i] - off.arrays[i]) == 0.0);
    }
  }
}

TEST_CASE("GridCaptioner: the gate scales the context, in forward_all and in step(), soft and hard") {
  for (GridAttention attention : {GridAttention::Soft, GridAttention::Hard}) {
    for (double soft_probability : {0.0, 0.5}) {
      if (attention == GridAttention::Soft && soft_probability > 0) continue;
      INFO("hard " << (attention == GridAttention::Hard) << ", soft_probability " << soft_probability);
      attn::manual_seed(41);
      GridCaptioner model(chapter4_config(attention, soft_probability, true));
      Tensor features = test::randn({4, 4, 3}, 42, false);
      const Index tgt_in = {{1, 3, 4}, {1, 4, 3}, {1, 3, 3}, {1, 2, 0}};
      model.eval();  // step() against forward_all in eval mode (hard: argmax, both)
      CaptionerOutput out = model.forward_all(features, tgt_in);
      REQUIRE(out.gate.defined());
      CHECK(out.gate.shape() == attn::Shape{4, 3});
      const xt::xarray<double> beta = out.gate.to_array();
      CHECK(xt::amin(beta)() > 0.0);
      CHECK(xt::amax(beta)() < 1.0);
      CHECK(max_abs(xt::view(beta, xt::all(), 0) - xt::view(beta, xt::all(), 1)) > 1e-6);  // beta_t follows s_{t-1}
      const xt::xarray<double> logits = out.logits.to_array();
      attn::models::DecoderState state = model.start(features);
      for (std::size_t t = 0; t < 3; ++t) {
        const Index y = xt::view(tgt_in, xt::all(), t);
        const xt::xarray<double> step_logits = model.step(state, y).to_array();
        CHECK(max_abs(step_logits - xt::view(logits, xt::all(), t)) < 1e-12);
        CHECK(max_abs(xt::view(state.attention.at("gate").to_array(), xt::all(), 0) - xt::view(beta, xt::all(), t)) <
              1e-12);
      }
      // beta_t = sigmoid(f_beta(s_{t-1})) at the first step, from s_0 = tanh(init_h(mean_j h_j)).
      attn::models::DecoderState first = model.start(features);
      const Tensor expected = attn::sigmoid((*model.f_beta)(first.tensors.at("h")));  // [B, 1]
      CHECK(max_abs(xt::view(expected.to_array(), xt::all(), 0) - xt::view(beta, xt::all(), 0)) < 1e-12);
      // Training mode too (sampling, and the mixture): the gate is there for every row.
      model.train();
      CaptionerOutput trained = model.forward_all(features, tgt_in);
      CHECK(trained.gate.shape() == attn::Shape{4, 3});
      if (attention == GridAttention::Hard) CHECK(trained.choice_log_prob.defined());
    }
  }
}
