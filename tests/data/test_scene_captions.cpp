// Rendered scenes as a captioning data set (data/scene_captions.hpp): three splits that never
// share a scene, one vocabulary, batches whose every entry is checked against the scenes they
// hold, epochs drawn from a generator, and PNG pictures read as a model's input or refused by name.
#include "../helpers.hpp"

#include "data/scene_captions.hpp"
#include "io/png.hpp"

#include <unistd.h>

#include <filesystem>
#include <set>

namespace fs = std::filesystem;
using attn::data::Scene;
using attn::data::SceneCaptionSplit;
using attn::data::Vocab;

namespace {

struct TempDir {
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() / ("attn_test_scene_captions_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  fs::path path;
};

std::uint64_t pixel_hash(const Scene& s) {  // FNV-1a over the pixels
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::uint8_t v : s.pixels) h = (h ^ v) * 0x100000001b3ULL;
  return h;
}

// The first scene of `scenes` with n objects.
std::size_t with_objects(const std::vector<Scene>& scenes, std::size_t n) {
  for (std::size_t i = 0; i < scenes.size(); ++i)
    if (scenes[i].objects.size() == n) return i;
  FAIL("no scene of " << n << " objects");
  return 0;
}

}  // namespace

TEST_CASE("scene captions: train, valid and test never share a scene, and a split does not depend on the others' sizes") {
  const auto set = attn::data::make_scene_captions(200, 200, 200, 11);
  REQUIRE(set.train.size() == 200);
  REQUIRE(set.valid.size() == 200);
  REQUIRE(set.test.size() == 200);
  std::set<std::uint64_t> seeds, pictures;
  for (const auto* split : {&set.train, &set.valid, &set.test})
    for (const Scene& s : *split) {
      seeds.insert(s.seed);
      pictures.insert(pixel_hash(s));
    }
  CHECK(seeds.size() == 600);     // no render seed in two places
  CHECK(pictures.size() == 600);  // and no picture either

  // Scene i of a split is the scene of its index range, whatever the sizes asked for.
  const auto other = attn::data::make_scene_captions(5, 3, 7, 11);
  for (std::size_t i = 0; i < 5; ++i) CHECK(other.train[i].seed == set.train[i].seed);
  for (std::size_t i = 0; i < 3; ++i) CHECK(other.valid[i].seed == set.valid[i].seed);
  for (std::size_t i = 0; i < 7; ++i) CHECK(other.test[i].pixels == set.test[i].pixels);
  CHECK(set.valid[0].seed == attn::data::scene_seed(11, std::size_t(1) << 40));
  CHECK(set.test[0].seed == attn::data::scene_seed(11, std::size_t(2) << 40));
  CHECK(set.test[3].seed == attn::data::scene_caption_seed(11, SceneCaptionSplit::Test, 3));
  // The training split is make_scenes' set of the same seed.
  const auto scenes = attn::data::make_scenes(5, 11);
  for (std::size_t i = 0; i < 5; ++i) CHECK(scenes[i].seed == set.train[i].seed);
  // Another data set seed draws other scenes.
  CHECK(attn::data::make_scene_captions(1, 0, 0, 12).train[0].seed != set.train[0].seed);

  CHECK(std::string(attn::data::split_name(SceneCaptionSplit::Valid)) == "valid");
  CHECK_THROWS_WITH_SUBSTR(attn::data::scene_caption_seed(11, SceneCaptionSplit::Valid, std::size_t(1) << 40),
                           attn::ValueError, "of the valid split is past the split's range");
}

TEST_CASE("scene captions: one vocabulary holds every word of every split, with the specials first") {
  const Vocab vocab = attn::data::scene_vocab();
  CHECK(vocab.token(Vocab::pad_id) == "<pad>");
  CHECK(vocab.token(Vocab::bos_id) == "<bos>");
  CHECK(vocab.token(Vocab::eos_id) == "<eos>");
  CHECK(vocab.token(Vocab::unk_id) == "<unk>");
  CHECK(vocab.size() == 4 + 7 + 2 + 6 + 4);  // specials, a/and/relations, sizes, colours, shapes
  const auto set = attn::data::make_scene_captions(300, 300, 300, 3);
  std::set<std::string> seen;
  for (const auto* split : {&set.train, &set.valid, &set.test})
    for (const Scene& s : *split) {
      CHECK_NOTHROW(vocab.encode(s.caption, /*strict=*/true));
      seen.insert(s.caption.begin(), s.caption.end());
    }
  CHECK(seen.size() == vocab.size() - 4);  // and every word is used somewhere: none is dead weight
}

TEST_CASE("scene captions: a batch holds each scene's pixels in 0..1, its caption shifted and padded, and its gold regions") {
  const auto scenes = attn::data::make_scene_split(SceneCaptionSplit::Train, 60, 5);
  const Vocab vocab = attn::data::scene_vocab();
  const std::size_t shortest = with_objects(scenes, 1), longest = with_objects(scenes, 4);
  const Scene &one = scenes[shortest], &four = scenes[longest];
  REQUIRE(one.caption.size() == 4);  // "a SIZE COLOUR SHAPE"
  const auto batch = attn::data::make_scene_batch(scenes, {shortest, longest}, vocab);

  CHECK(batch.size() == 2);
  CHECK(batch.indices == std::vector<std::size_t>{shortest, longest});
  CHECK(batch.images.shape() == attn::Shape{2, 3, 64, 64});
  CHECK(batch.images.dtype() == attn::Dtype::Float32);
  const auto images = batch.images.to_array();
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t y = 0; y < 64; y += 7)
      for (std::size_t x = 0; x < 64; x += 5) {
        CHECK(images(0, c, y, x) == doctest::Approx(one.pixels(c, y, x) / 255.0).epsilon(1e-7));
        CHECK(images(1, c, y, x) == doctest::Approx(four.pixels(c, y, x) / 255.0).epsilon(1e-7));
      }

  const std::size_t T = four.caption.size() + 1;
  for (const attn::Index* ids : {&batch.tgt_in, &batch.tgt_out, &batch.objects}) {
    REQUIRE(ids->dimension() == 2);
    REQUIRE(ids->shape(0) == 2);
    REQUIRE(ids->shape(1) == T);
  }
  CHECK(batch.tgt_lengths == std::vector<std::size_t>{5, T});
  // Row 0: <bos> a SIZE COLOUR SHAPE <pad>... in, a SIZE COLOUR SHAPE <eos> <pad>... out.
  CHECK(batch.tgt_in(0, 0) == Vocab::bos_id);
  for (std::size_t t = 0; t < 4; ++t) {
    CHECK(batch.tgt_in(0, t + 1) == vocab.id(one.caption[t]));
    CHECK(batch.tgt_out(0, t) == vocab.id(one.caption[t]));
    CHECK(batch.objects(0, t) == one.word_objects[t]);
  }
  CHECK(batch.tgt_out(0, 4) == Vocab::eos_id);
  for (std::size_t t = 5; t < T; ++t) {
    CHECK(batch.tgt_in(0, t) == Vocab::pad_id);
    CHECK(batch.tgt_out(0, t) == Vocab::pad_id);
    CHECK(batch.objects(0, t) == -1);
  }
  CHECK(batch.objects(0, 4) == -1);  // <eos> names nothing
  CHECK(batch.objects(0, 0) == -1);  // "a"
  CHECK(batch.objects(0, 1) == 0);   // the size word names object 0
  // Row 1, the longest caption: no padding, <eos> last.
  CHECK(batch.tgt_out(1, T - 1) == Vocab::eos_id);
  CHECK(batch.tgt_in(1, T - 1) == vocab.id(four.caption.back()));
  for (std::size_t t = 0; t + 1 < T; ++t) CHECK(batch.objects(1, t) == four.word_objects[t]);
  CHECK(batch.captions[1] == four.caption);
  REQUIRE(batch.masks[1].size() == 4);
  for (std::size_t k = 0; k < 4; ++k) CHECK(batch.masks[1][k] == four.masks[k]);

  const auto wide = attn::data::make_scene_batch(scenes, {3}, vocab, attn::Dtype::Float64);
  CHECK(wide.images.dtype() == attn::Dtype::Float64);
  CHECK(wide.images.to_array()(0, 2, 10, 20) == scenes[3].pixels(2, 10, 20) / 255.0);
}

TEST_CASE("scene captions: an epoch's order is drawn from a generator, holds every scene once, and is drawn again from the same state") {
  const auto scenes = attn::data::make_scene_split(SceneCaptionSplit::Train, 50, 9);
  attn::data::BatchOptions o;
  o.batch_size = 8;
  attn::Generator g1(4), g2(4);
  const auto a = attn::data::scene_batch_order(scenes, o, g1), b = attn::data::scene_batch_order(scenes, o, g2);
  CHECK(a == b);
  REQUIRE(a.size() == 7);  // 6 of 8 and one of 2
  CHECK(a.back().size() == 2);
  std::multiset<std::size_t> all;
  for (const auto& batch : a) all.insert(batch.begin(), batch.end());
  CHECK(all.size() == 50);
  CHECK(std::set<std::size_t>(all.begin(), all.end()).size() == 50);
  CHECK(attn::data::scene_batch_order(scenes, o, g1) != a);  // the next epoch: another order

  // Sorted within buckets: a batch holds captions of similar length, so less padding.
  o.sort_buckets = 50;  // one bucket: every batch's lengths follow the sorted order
  attn::Generator g3(4);
  const auto sorted = attn::data::scene_batch_order(scenes, o, g3);
  std::size_t padded = 0, padded_sorted = 0;
  const Vocab vocab = attn::data::scene_vocab();
  for (const auto& idx : a) {
    const auto batch = attn::data::make_scene_batch(scenes, idx, vocab);
    for (std::size_t L : batch.tgt_lengths) padded += batch.tgt_out.shape(1) - L;
  }
  for (const auto& idx : sorted) {
    const auto batch = attn::data::make_scene_batch(scenes, idx, vocab);
    for (std::size_t L : batch.tgt_lengths) padded_sorted += batch.tgt_out.shape(1) - L;
  }
  CHECK(padded_sorted < padded);

  // make_scene_batches is the same epoch made at once.
  attn::Generator g4(4);
  o.sort_buckets = 0;
  const auto batches = attn::data::make_scene_batches(scenes, vocab, o, g4);
  REQUIRE(batches.size() == a.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(batches[i].indices == a[i]);
}

TEST_CASE("scene captions: bad batches are refused by name") {
  const auto scenes = attn::data::make_scene_split(SceneCaptionSplit::Train, 4, 1);
  const Vocab vocab = attn::data::scene_vocab();
  CHECK_THROWS_WITH_SUBSTR(attn::data::make_scene_batch(scenes, {}, vocab), attn::ValueError,
                           "make_scene_batch: expected at least one scene, got none");
  CHECK_THROWS_WITH_SUBSTR(attn::data::make_scene_batch(scenes, {1, 4}, vocab), attn::ValueError,
                           "index 4 is out of range for 4 scenes");
  const Vocab small(attn::data::Tokens{"a", "small", "large"});
  CHECK_THROWS_WITH_SUBSTR(attn::data::make_scene_batch(scenes, {0}, small), attn::ValueError,
                           "(seed " + std::to_string(scenes[0].seed) + ") has a word the vocabulary lacks");
  attn::data::SceneOptions other;
  other.height = 48;
  std::vector<Scene> mixed = scenes;
  mixed.push_back(attn::data::render_scene(1, other));
  CHECK_THROWS_WITH_SUBSTR(attn::data::make_scene_batch(mixed, {0, 4}, vocab), attn::ShapeError,
                           "got [3, 64, 64] for scene 0 and [3, 48, 64] for scene 4");
  std::vector<Scene> none;
  attn::Generator g(1);
  CHECK_THROWS_WITH_SUBSTR(attn::data::scene_batch_order(none, {}, g), attn::ValueError, "expected scenes, got none");
}

TEST_CASE("scene captions: a PNG is read as the model's input, and a missing, grayscale or wrong-sized one is refused by name") {
  TempDir dir;
  const Scene s = attn::data::render_scene(77);
  const std::string good = dir.file("scene.png");
  attn::io::write_png(good, s.pixels);
  const attn::Tensor x = attn::data::read_scene_image(good, 64, 64);
  CHECK(x.shape() == attn::Shape{1, 3, 64, 64});
  CHECK(x.dtype() == attn::Dtype::Float32);
  const auto values = x.to_array();
  const auto expected = attn::data::to_float(s.pixels);
  for (std::size_t i = 0; i < expected.size(); ++i) REQUIRE(values.flat(i) == expected.flat(i));
  CHECK(attn::data::read_scene_pixels(good, 64, 64) == s.pixels);

  const std::string missing = dir.file("nowhere.png");
  CHECK_THROWS_WITH_SUBSTR(attn::data::read_scene_image(missing, 64, 64), attn::IOError, "nowhere.png");
  CHECK_THROWS_WITH_SUBSTR(attn::data::read_scene_image(missing, 64, 64), attn::IOError,
                           "the model takes RGB pictures of 64x64 (width x height)");

  const std::string grey = std::string(ATTN_REFERENCE_DIR) + "/png/python_gray.png";
  CHECK_THROWS_WITH_SUBSTR(attn::data::read_scene_image(grey, 64, 64), attn::IOError,
                           "python_gray.png' is a grayscale picture");
  CHECK_THROWS_WITH_SUBSTR(attn::data::read_scene_image(grey, 64, 64), attn::IOError,
                           "the model takes RGB pictures of 64x64 (width x height)");

  attn::data::SceneOptions wide;
  wide.height = 48;
  wide.width = 80;
  const std::string wrong = dir.file("wide.png");
  attn::io::write_png(wrong, attn::data::render_scene(3, wide).pixels);
  CHECK_THROWS_WITH_SUBSTR(attn::data::read_scene_image(wrong, 64, 64), attn::IOError,
                           "read_scene_pixels: '" + wrong +
                               "' is a picture of 80x48 (width x height); the model takes RGB pictures of 64x64 "
                               "(width x height) (the size it was trained on)");
  CHECK(attn::data::read_scene_pixels(wrong, 48, 80).shape()[2] == 80);  // the size a model of 48 x 80 takes

  CHECK_THROWS_WITH_SUBSTR(attn::data::scene_image_input(xt::xtensor<std::uint8_t, 3>::from_shape({1, 4, 4})),
                           attn::ShapeError, "expected pixels [3, H, W], got [1, 4, 4]");
}
