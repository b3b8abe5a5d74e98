// The share of each word's attention inside its object's gold mask (eval/attention_share.hpp),
// on a hand-built scene whose masks are whole cells of the 8 x 8 grid: attention entirely on an
// object's cells gives 1, attention spread evenly gives the mask's coverage exactly, and the
// means are over captions.
#include "../helpers.hpp"

#include "data/scene_captions.hpp"
#include "eval/attention_share.hpp"

#include <xtensor/xview.hpp>

#include <cmath>

using attn::models::AttentionShareMeter;
using attn::models::SceneWordKind;
using attn::models::WordShare;

namespace {

// Cells (row, col) of an 8 x 8 grid over 64 x 64 pixels, as a mask: each cell is 8 x 8 pixels.
xt::xtensor<bool, 2> cells_mask(const std::vector<std::array<std::size_t, 2>>& cells) {
  xt::xtensor<bool, 2> m = xt::xtensor<bool, 2>::from_shape({64, 64});
  m.fill(false);
  for (const auto& c : cells)
    for (std::size_t y = 8 * c[0]; y < 8 * c[0] + 8; ++y)
      for (std::size_t x = 8 * c[1]; x < 8 * c[1] + 8; ++x) m(y, x) = true;
  return m;
}

const std::vector<std::array<std::size_t, 2>> kSquareCells = {{2, 3}, {2, 4}};                  // 128 pixels
const std::vector<std::array<std::size_t, 2>> kCircleCells = {{5, 1}, {5, 2}, {6, 1}, {6, 2}};  // 256 pixels

// "a small red square above a large blue circle": object 0 on two cells, object 1 on four.
attn::data::Scene hand_scene() {
  attn::data::Scene s;
  s.pixels = xt::xtensor<std::uint8_t, 3>::from_shape({3, 64, 64});
  s.pixels.fill(100);
  s.objects.resize(2);
  s.objects[0].size = 0;    // small
  s.objects[0].colour = 0;  // red
  s.objects[0].shape = 0;   // square
  s.objects[1].size = 1;    // large
  s.objects[1].colour = 2;  // blue
  s.objects[1].shape = 1;   // circle
  s.masks = {cells_mask(kSquareCells), cells_mask(kCircleCells)};
  s.caption = {"a", "small", "red", "square", "above", "a", "large", "blue", "circle"};
  s.word_objects = {-1, 0, 0, 0, -1, -1, 1, 1, 1};
  return s;
}

// [T, 8, 8]: row t spread evenly over `on[t]`'s cells, or over the whole grid when it is empty.
xt::xarray<double> hand_attention(const std::vector<std::vector<std::array<std::size_t, 2>>>& on) {
  xt::xarray<double> w = xt::zeros<double>({on.size(), std::size_t(8), std::size_t(8)});
  for (std::size_t t = 0; t < on.size(); ++t) {
    if (on[t].empty()) {
      for (std::size_t r = 0; r < 8; ++r)
        for (std::size_t c = 0; c < 8; ++c) w(t, r, c) = 1.0 / 64;
      continue;
    }
    for (const auto& cell : on[t]) w(t, cell[0], cell[1]) = 1.0 / static_cast<double>(on[t].size());
  }
  return w;
}

}  // namespace

TEST_CASE("attention share: a cell's weight is spread evenly over its pixels, and the total is kept") {
  xt::xarray<double> cells = {{0.1, 0.2}, {0.3, 0.4}};
  const auto px = attn::models::cell_weights_to_pixels(cells, 4, 6);  // cells of 2 x 3 pixels
  CHECK(px(0, 0) == doctest::Approx(0.1 / 6).epsilon(1e-15));
  CHECK(px(1, 2) == doctest::Approx(0.1 / 6).epsilon(1e-15));
  CHECK(px(1, 3) == doctest::Approx(0.2 / 6).epsilon(1e-15));
  CHECK(px(3, 5) == doctest::Approx(0.4 / 6).epsilon(1e-15));
  CHECK(xt::sum(px)() == doctest::Approx(1.0).epsilon(1e-15));
  // Cells that do not divide the picture: rows 0..20, 21..41, 42..63 (21, 21 and 22 pixels).
  xt::xarray<double> column = xt::xarray<double>::from_shape({3, 1});
  column(0, 0) = column(1, 0) = 0.3;
  column(2, 0) = 0.4;
  const auto uneven = attn::models::cell_weights_to_pixels(column, 64, 2);
  CHECK(uneven(20, 0) == doctest::Approx(0.3 / 42).epsilon(1e-15));
  CHECK(uneven(21, 0) == doctest::Approx(0.3 / 42).epsilon(1e-15));
  CHECK(uneven(42, 1) == doctest::Approx(0.4 / 44).epsilon(1e-15));
  CHECK(xt::sum(uneven)() == doctest::Approx(1.0).epsilon(1e-14));
  CHECK_THROWS_WITH_SUBSTR(attn::models::cell_weights_to_pixels(cells, 1, 6), attn::ShapeError,
                           "1 <= rows <= 1 and 1 <= cols <= 6 (the picture's height and width), got [2, 2]");
}

TEST_CASE("attention share: all on the object's cells is 1, spread evenly is the chance level exactly, half a cell is one half") {
  const auto square = cells_mask(kSquareCells);
  CHECK(attn::models::mask_coverage(square) == 128.0 / 4096);
  const auto on_square = hand_attention({kSquareCells});
  CHECK(attn::models::attention_share(xt::xarray<double>(xt::view(on_square, 0)), square) == 1.0);
  const auto uniform = hand_attention({{}});
  CHECK(attn::models::attention_share(xt::xarray<double>(xt::view(uniform, 0)), square) == 128.0 / 4096);
  // A mask covering the left half of cell (0, 0), and all the weight on that cell.
  xt::xtensor<bool, 2> half = xt::zeros<bool>({64, 64});
  for (std::size_t y = 0; y < 8; ++y)
    for (std::size_t x = 0; x < 4; ++x) half(y, x) = true;
  CHECK(attn::models::attention_share(xt::xarray<double>(xt::view(hand_attention({{{0, 0}}}), 0)), half) == 0.5);
  // Not renormalised by the caller: a map summing to 2 has the same share.
  CHECK(attn::models::attention_share(xt::xarray<double>(2.0 * xt::view(on_square, 0)), square) == 1.0);
  // Elsewhere entirely: 0.
  CHECK(attn::models::attention_share(xt::xarray<double>(xt::view(hand_attention({kCircleCells}), 0)), square) == 0.0);

  CHECK_THROWS_WITH_SUBSTR(attn::models::attention_share(xt::zeros<double>({8, 8}), square), attn::ValueError,
                           "sum to 0");
  xt::xarray<double> negative = xt::view(uniform, 0);
  negative(1, 1) = -0.1;
  CHECK_THROWS_WITH_SUBSTR(attn::models::attention_share(negative, square), attn::ValueError,
                           "finite and >= 0, got -0.1");
}

TEST_CASE("attention share: a caption's words, each against its own object, and words naming none against all objects") {
  CHECK(attn::models::scene_word_kind("small") == SceneWordKind::Size);
  CHECK(attn::models::scene_word_kind("cyan") == SceneWordKind::Colour);
  CHECK(attn::models::scene_word_kind("cross") == SceneWordKind::Shape);
  for (const char* w : {"a", "and", "above", "left", "of", "<eos>"})
    CHECK(attn::models::scene_word_kind(w) == SceneWordKind::Other);

  const auto scene = hand_scene();
  // Each object word on its object's cells; "a", "above", "a" and <eos> spread evenly.
  const auto weights = hand_attention({{}, kSquareCells, kSquareCells, kSquareCells, {}, {}, kCircleCells,
                                       kCircleCells, kCircleCells, {}});
  const auto shares = attn::models::caption_word_shares(weights, scene.caption, scene.word_objects, scene.masks);
  REQUIRE(shares.size() == 9);
  for (const WordShare& w : shares) {
    INFO(w.word << " at " << w.position);
    if (w.kind == SceneWordKind::Other) {
      CHECK(w.object == -1);
      CHECK(w.share == 384.0 / 4096);  // spread evenly: the union's coverage
      CHECK(w.chance == 384.0 / 4096);
    } else {
      CHECK(w.share == 1.0);
      CHECK(w.chance == (w.object == 0 ? 128.0 : 256.0) / 4096);
    }
  }
  CHECK(shares[7].word == "blue");
  CHECK(shares[7].kind == SceneWordKind::Colour);
  CHECK(shares[7].object == 1);

  AttentionShareMeter meter;
  meter.add(shares);
  for (SceneWordKind k : {SceneWordKind::Size, SceneWordKind::Colour, SceneWordKind::Shape}) {
    const auto s = meter.kind(k);
    CHECK(s.words == 2);
    CHECK(s.captions == 1);
    CHECK(s.share == 1.0);
    CHECK(s.chance == (128.0 + 256.0) / 2 / 4096);
    CHECK(s.ratio() == doctest::Approx(4096.0 / 192).epsilon(1e-12));
  }
  CHECK(meter.object_words().words == 6);
  CHECK(meter.object_words().share == 1.0);
  CHECK(meter.kind(SceneWordKind::Other).words == 3);
  CHECK(meter.kind(SceneWordKind::Other).ratio() == 1.0);

  CHECK_THROWS_WITH_SUBSTR(attn::models::caption_word_shares(xt::xarray<double>(xt::view(weights, xt::range(0, 5))),
                                                             scene.caption, scene.word_objects, scene.masks),
                           attn::ShapeError, "with T >= 9 (the caption's words), got [5, 8, 8]");
  auto wrong = scene.word_objects;
  wrong[1] = 2;
  CHECK_THROWS_WITH_SUBSTR(attn::models::caption_word_shares(weights, scene.caption, wrong, scene.masks),
                           attn::ValueError, "word 1 ('small') names object 2 of a scene of 2");
}

TEST_CASE("attention share: the means are over captions, each caption counting once, and the ratio is of the means") {
  auto word = [](double share, double chance) {
    WordShare w;
    w.kind = SceneWordKind::Colour;
    w.object = 0;
    w.share = share;
    w.chance = chance;
    return w;
  };
  AttentionShareMeter meter;
  meter.add({word(1.0, 0.1), word(0.0, 0.3)});  // a caption naming two colours: mean share 0.5, chance 0.2
  meter.add({word(1.0, 0.2)});                  // one naming one colour
  const auto colour = meter.kind(SceneWordKind::Colour);
  CHECK(colour.words == 3);
  CHECK(colour.captions == 2);
  CHECK(colour.share == doctest::Approx(0.75).epsilon(1e-15));  // not 2/3, the mean over the words
  CHECK(colour.chance == doctest::Approx(0.2).epsilon(1e-15));
  CHECK(colour.ratio() == doctest::Approx(3.75).epsilon(1e-14));
  CHECK(std::isnan(meter.kind(SceneWordKind::Shape).ratio()));
  CHECK(meter.captions() == 2);
}

TEST_CASE("attention share: a generated phrase names the scene's object it describes, wherever it stands") {
  const auto scene = hand_scene();
  using attn::data::Tokens;
  // The same scene told the other way round: the phrases swap places, each still names its object.
  const Tokens swapped = {"a", "large", "blue", "circle", "below", "a", "small", "red", "square"};
  CHECK(attn::models::generated_word_objects(swapped, scene) == std::vector<std::int64_t>{-1, 1, 1, 1, -1, -1, 0, 0, 0});
  const Tokens wrong_colour = {"a", "small", "green", "square", "above", "a", "large", "blue", "circle"};
  CHECK(attn::models::generated_word_objects(wrong_colour, scene) ==
        std::vector<std::int64_t>{-1, -1, -1, -1, -1, -1, 1, 1, 1});
  CHECK(attn::models::generated_word_objects({"a", "small", "red"}, scene) == std::vector<std::int64_t>{-1, -1, -1});
  // Every word of the phrase must fit: the scene's red square is small, so "a large red square" names nothing.
  CHECK(attn::models::generated_word_objects({"a", "large", "red", "square"}, scene) ==
        std::vector<std::int64_t>{-1, -1, -1, -1});
  CHECK(attn::models::generated_word_objects({"small", "red", "square"}, scene) == std::vector<std::int64_t>{-1, -1, -1});

  // The swapped caption looking at the right objects scores 1; the wrong colour's phrase is left out and counted.
  AttentionShareMeter meter;
  meter.add_generated(scene, swapped,
                      hand_attention({{}, kCircleCells, kCircleCells, kCircleCells, {}, {}, kSquareCells, kSquareCells,
                                      kSquareCells, {}}));
  meter.add_generated(scene, wrong_colour,
                      hand_attention({{}, kSquareCells, kSquareCells, kSquareCells, {}, {}, {}, {}, {}}));
  CHECK(meter.unmatched() == 3);
  CHECK(meter.captions() == 2);
  const auto colour = meter.kind(SceneWordKind::Colour);
  CHECK(colour.words == 3);  // blue and red; then blue, spread evenly (green named nothing)
  CHECK(colour.share == doctest::Approx((1.0 + 256.0 / 4096) / 2).epsilon(1e-12));
}

TEST_CASE("attention share: a teacher-forced batch spread evenly is at the chance level for every kind") {
  const auto scenes = attn::data::make_scene_split(attn::data::SceneCaptionSplit::Valid, 24, 2);
  std::vector<std::size_t> all(scenes.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const auto batch = attn::data::make_scene_batch(scenes, all, attn::data::scene_vocab());
  const std::size_t T = batch.tgt_out.shape(1);
  const xt::xarray<double> uniform = xt::ones<double>({batch.size(), T, std::size_t(64)}) / 64.0;
  AttentionShareMeter meter;
  meter.add_batch(batch, uniform, 8);
  CHECK(meter.captions() == 24);
  for (SceneWordKind k : {SceneWordKind::Size, SceneWordKind::Colour, SceneWordKind::Shape, SceneWordKind::Other}) {
    INFO(attn::models::kind_name(k));
    const auto s = meter.kind(k);
    CHECK(s.captions > 0);
    CHECK(s.chance > 0);
    CHECK(s.share == doctest::Approx(s.chance).epsilon(1e-12));
    CHECK(s.ratio() == doctest::Approx(1.0).epsilon(1e-12));
  }
  std::size_t object_words = 0;
  for (const auto& caption : batch.captions)
    for (const auto& w : caption) object_words += attn::models::scene_word_kind(w) != SceneWordKind::Other;
  CHECK(meter.object_words().words == object_words);

  CHECK_THROWS_WITH_SUBSTR(meter.add_batch(batch, uniform, 7), attn::ShapeError, "rows * cols] with rows = 7");
  CHECK_THROWS_WITH_SUBSTR(meter.add_batch(batch, xt::xarray<double>(xt::view(uniform, xt::range(0, 3))), 8),
                           attn::ShapeError, "expected weights [24, >= ");
}

TEST_CASE("attention share: in a batch, the weights at tgt_out position t are word t's") {
  // The hand-built scene in a batch: each object word's row on its object, the rest spread evenly.
  const std::vector<attn::data::Scene> scenes = {hand_scene()};
  const auto batch = attn::data::make_scene_batch(scenes, {0}, attn::data::scene_vocab());
  const auto maps = hand_attention({{}, kSquareCells, kSquareCells, kSquareCells, {}, {}, kCircleCells, kCircleCells,
                                    kCircleCells, {}});  // [10, 8, 8]: 9 words and <eos>
  xt::xarray<double> weights = maps;
  weights.reshape({1, 10, 64});
  AttentionShareMeter meter;
  meter.add_batch(batch, weights, 8);
  CHECK(meter.object_words().words == 6);
  CHECK(meter.object_words().share == 1.0);
  CHECK(meter.kind(SceneWordKind::Other).share == 384.0 / 4096);
}
