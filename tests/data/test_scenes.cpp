// Rendered scenes (data/scenes.hpp): the same bytes from the same seed on every machine, masks
// that are what is seen of each object, captions that name the objects drawn, and relations
// that hold on the masks.
#include "../helpers.hpp"

#include "data/scenes.hpp"
#include "io/png.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>

using attn::data::Scene;

namespace {

// FNV-1a, 64 bits, over what a scene is: pixels, masks, caption and the word-object links.
struct Fnv {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  void byte(std::uint8_t b) {
    h ^= b;
    h *= 0x100000001b3ULL;
  }
  void add(const Scene& s) {
    for (std::uint8_t v : s.pixels) byte(v);
    for (const auto& m : s.masks)
      for (bool v : m) byte(v ? 1 : 0);
    for (const auto& w : s.caption) {
      for (char c : w) byte(static_cast<std::uint8_t>(c));
      byte(' ');
    }
    for (std::int64_t k : s.word_objects) byte(static_cast<std::uint8_t>(k + 1));
    byte('\n');
  }
};

struct Centroid {
  double x = 0, y = 0;
  std::size_t n = 0;
};

Centroid centroid(const xt::xtensor<bool, 2>& mask) {
  Centroid c;
  for (std::size_t y = 0; y < mask.shape()[0]; ++y)
    for (std::size_t x = 0; x < mask.shape()[1]; ++x)
      if (mask(y, x)) {
        c.x += static_cast<double>(x);
        c.y += static_cast<double>(y);
        ++c.n;
      }
  c.x /= static_cast<double>(c.n);
  c.y /= static_cast<double>(c.n);
  return c;
}

std::vector<Scene> some_scenes(std::size_t n = 300) { return attn::data::make_scenes(n, 2026); }

}  // namespace

TEST_CASE("scenes: the same seed gives the same bytes, here and on every machine") {
  Fnv fnv;
  for (std::uint64_t seed = 0; seed < 50; ++seed) fnv.add(attn::data::render_scene(seed));
  attn::data::SceneOptions other;
  other.height = 48;
  other.width = 80;
  other.object_noise = 0;
  other.min_objects = other.max_objects = 4;
  for (const Scene& s : attn::data::make_scenes(10, 7, other)) fnv.add(s);
  attn::data::SceneOptions tiny;  // the smallest pictures, where radii are held at kMinShapeRadius
  tiny.height = 16;
  tiny.width = 24;
  for (const Scene& s : attn::data::make_scenes(10, 8, tiny)) fnv.add(s);
  INFO("checksum " << fnv.h);
  CHECK(fnv.h == 16737140069742702022ULL);  // 0xe84644375cf86dc6

  const Scene a = attn::data::render_scene(123), b = attn::data::render_scene(123), c = attn::data::render_scene(124);
  CHECK(a.pixels == b.pixels);
  CHECK(a.caption == b.caption);
  CHECK(a.pixels != c.pixels);
}

TEST_CASE("scenes: every mask is what is seen of its object, in its colour") {
  const auto& palette = attn::data::scene_palette();
  std::size_t overlapping = 0;
  for (const Scene& s : some_scenes()) {
    const std::size_t h = s.pixels.shape()[1], w = s.pixels.shape()[2];
    REQUIRE(s.masks.size() == s.objects.size());
    REQUIRE(s.pixels.shape() == std::array<std::size_t, 3>{3, 64, 64});
    std::vector<std::size_t> seen(s.objects.size(), 0);
    bool covered = false;
    for (std::size_t y = 0; y < h; ++y)
      for (std::size_t x = 0; x < w; ++x) {
        int owner = -1, owners = 0;
        for (std::size_t k = 0; k < s.masks.size(); ++k)
          if (s.masks[k](y, x)) {
            owner = static_cast<int>(k);
            ++owners;
            ++seen[k];
          }
        REQUIRE(owners <= 1);  // masks do not overlap: a pixel shows one object
        int lo = 255, hi = 0;
        for (std::size_t c = 0; c < 3; ++c) {
          lo = std::min(lo, int(s.pixels(c, y, x)));
          hi = std::max(hi, int(s.pixels(c, y, x)));
        }
        if (owner < 0) {  // background: nearly grey
          CHECK(hi - lo <= attn::data::kMaxBackgroundChroma);
          continue;
        }
        const auto& o = s.objects[owner];
        // The pixel lies within the noise of its object's colour, in every channel, in order R, G, B.
        for (std::size_t c = 0; c < 3; ++c)
          REQUIRE(std::abs(int(s.pixels(c, y, x)) - int(palette[o.colour][c])) <= 12);
        // Inside the object's shape; a pixel of an earlier object's box shows the later object.
        REQUIRE(attn::data::scene_shape_contains(o.shape, o.radius, int(x) - o.x, int(y) - o.y));
        REQUIRE(std::abs(int(x) - o.x) <= o.radius);
        REQUIRE(std::abs(int(y) - o.y) <= o.radius);
        for (std::size_t k = 0; k < static_cast<std::size_t>(owner); ++k)
          if (std::abs(int(x) - s.objects[k].x) <= s.objects[k].radius &&
              std::abs(int(y) - s.objects[k].y) <= s.objects[k].radius)
            covered = true;
      }
    for (std::size_t k = 0; k < seen.size(); ++k) CHECK(seen[k] > 0);
    overlapping += covered;
  }
  CHECK(overlapping > 20);  // overlap happens: the checks above saw it
}

TEST_CASE("scenes: the caption names the objects drawn, in the grammar") {
  const auto& sizes = attn::data::scene_sizes();
  const auto& colours = attn::data::scene_colours();
  const auto& shapes = attn::data::scene_shapes();
  std::vector<std::size_t> counts(5, 0), shape_seen(4, 0), colour_seen(6, 0), size_seen(2, 0);
  std::map<std::string, std::size_t> relation_seen;
  const attn::data::Vocab vocab = attn::data::scene_vocab();
  for (const Scene& s : some_scenes()) {
    const auto& words = s.caption;
    REQUIRE(words.size() == s.word_objects.size());
    ++counts[s.objects.size()];
    for (const auto& w : words) CHECK(vocab.contains(w));
    std::size_t i = 0;
    auto phrase = [&](std::size_t k) {  // "a SIZE COLOUR SHAPE" naming object k
      REQUIRE(i + 4 <= words.size());
      const auto& o = s.objects[k];
      CHECK(words[i] == "a");
      CHECK(s.word_objects[i] == -1);
      CHECK(words[i + 1] == sizes[o.size]);
      CHECK(words[i + 2] == colours[o.colour]);
      CHECK(words[i + 3] == shapes[o.shape]);
      for (std::size_t j = 1; j < 4; ++j) CHECK(s.word_objects[i + j] == static_cast<std::int64_t>(k));
      ++shape_seen[o.shape], ++colour_seen[o.colour], ++size_seen[o.size];
      i += 4;
    };
    for (std::size_t k = 0; k < s.objects.size(); k += 2) {
      if (k > 0) {
        CHECK(words[i] == "and");
        CHECK(s.word_objects[i++] == -1);
      }
      phrase(k);
      if (k + 1 == s.objects.size()) break;
      std::string rel = words[i];
      CHECK(s.word_objects[i++] == -1);
      if (rel == "left" || rel == "right") {
        CHECK(words[i] == "of");
        CHECK(s.word_objects[i++] == -1);
      }
      ++relation_seen[rel];
      phrase(k + 1);
    }
    CHECK(i == words.size());
  }
  // 1 to 4 objects, every shape, colour, size and relation, over 300 scenes.
  for (std::size_t n = 1; n <= 4; ++n) CHECK(counts[n] > 30);
  for (std::size_t v : shape_seen) CHECK(v > 30);
  for (std::size_t v : colour_seen) CHECK(v > 30);
  for (std::size_t v : size_seen) CHECK(v > 30);
  CHECK(relation_seen.size() == 4);
  for (const auto& [rel, n] : relation_seen) CHECK_MESSAGE(n > 10, rel);
  // A large object is larger than a small one.
  for (const Scene& s : some_scenes(50))
    for (const auto& o : s.objects) CHECK((o.size == 0 ? o.radius <= 7 : o.radius >= 10));
}

TEST_CASE("scenes: every shape and size can be told apart at every picture size") {
  // Two shapes look the same when their masks are the same pixels. Every shape's mask touches
  // all four sides of its box -r..r (checked below), so masks of different radii differ in
  // extent: comparing the four shapes at each radius drawn covers every pair.
  std::set<int> radii;
  for (std::size_t side = 16; side <= 4096; ++side) {
    const auto r = attn::data::scene_radii(side, side);
    INFO("side " << side);
    CHECK(r[0][0] >= attn::data::kMinShapeRadius);
    REQUIRE(r[0][0] <= r[0][1]);
    REQUIRE(r[1][0] <= r[1][1]);
    CHECK(r[1][0] >= r[0][1] + 2);  // "large" is visibly larger than every "small"
    CHECK(2 * r[1][1] + 1 <= int(side));  // a large object fits in the picture
    CHECK(attn::data::scene_radii(side, 4096) == r);  // the shorter side decides
    CHECK(attn::data::scene_radii(4096, side) == r);
    for (std::size_t size = 0; size < 2; ++size)
      for (int radius = r[size][0]; radius <= r[size][1]; ++radius) radii.insert(radius);
  }
  CHECK(*radii.begin() == attn::data::kMinShapeRadius);
  CHECK(attn::data::scene_radii(64, 64) == std::array<std::array<int, 2>, 2>{{{5, 7}, {10, 13}}});
  const auto& names = attn::data::scene_shapes();
  for (int r : radii) {
    INFO("radius " << r);
    for (std::size_t a = 0; a < names.size(); ++a) {
      bool left = false, right = false, upper = false, lower = false;
      for (int i = -r; i <= r; ++i) {
        left |= attn::data::scene_shape_contains(a, r, -r, i);
        right |= attn::data::scene_shape_contains(a, r, r, i);
        upper |= attn::data::scene_shape_contains(a, r, i, -r);
        lower |= attn::data::scene_shape_contains(a, r, i, r);
      }
      INFO(names[a]);
      CHECK((left && right && upper && lower));
      CHECK(!attn::data::scene_shape_contains(a, r, r + 1, 0));
      CHECK(!attn::data::scene_shape_contains(a, r, 0, r + 1));
      for (std::size_t b = a + 1; b < names.size(); ++b) {
        bool differ = false;  // stops at the first pixel that tells a from b
        for (int dy = -r; dy <= r && !differ; ++dy)
          for (int dx = -r; dx <= r && !differ; ++dx)
            differ = attn::data::scene_shape_contains(a, r, dx, dy) != attn::data::scene_shape_contains(b, r, dx, dy);
        CHECK_MESSAGE(differ, names[a] << " and " << names[b] << " are the same pixels");
      }
    }
  }
}

TEST_CASE("scenes: no two objects look alike, and no two of one colour touch") {
  // Both at the default size and in the smallest, most crowded pictures.
  attn::data::SceneOptions crowded;
  crowded.height = crowded.width = 16;
  crowded.min_objects = crowded.max_objects = 4;
  std::size_t pairs = 0, same_colour = 0, close_same_colour = 0;
  for (const auto& scenes : {some_scenes(), attn::data::make_scenes(300, 5, crowded)})
    for (const Scene& s : scenes) {
      const std::size_t h = s.pixels.shape()[1], w = s.pixels.shape()[2];
      for (std::size_t a = 0; a < s.objects.size(); ++a)
        for (std::size_t b = a + 1; b < s.objects.size(); ++b) {
          const auto &oa = s.objects[a], &ob = s.objects[b];
          INFO(attn::data::caption_text(s) << " (seed " << s.seed << ", objects " << a << " and " << b << ")");
          ++pairs;
          CHECK_FALSE((oa.size == ob.size && oa.colour == ob.colour && oa.shape == ob.shape));
          if (oa.colour != ob.colour) continue;
          ++same_colour;
          // No pixel of a has a pixel of b to its right, left, above or below.
          bool touch = false;
          for (std::size_t y = 0; y < h; ++y)
            for (std::size_t x = 0; x < w; ++x) {
              const bool right = x + 1 < w, down = y + 1 < h;
              touch |= right && ((s.masks[a](y, x) && s.masks[b](y, x + 1)) || (s.masks[b](y, x) && s.masks[a](y, x + 1)));
              touch |= down && ((s.masks[a](y, x) && s.masks[b](y + 1, x)) || (s.masks[b](y, x) && s.masks[a](y + 1, x)));
            }
          CHECK_FALSE(touch);
          // Same-colour objects still come near each other: the check is not vacuous.
          close_same_colour += std::abs(oa.x - ob.x) <= oa.radius + ob.radius + 3 &&
                               std::abs(oa.y - ob.y) <= oa.radius + ob.radius + 3;
        }
    }
  CHECK(pairs > 1000);
  CHECK(same_colour > 100);
  CHECK(close_same_colour > 10);
}

TEST_CASE("scenes: every relation in a caption holds on the masks' centroids") {
  std::size_t checked = 0;
  for (const Scene& s : some_scenes()) {
    for (std::size_t i = 0; i < s.caption.size(); ++i) {
      const std::string& w = s.caption[i];
      if (w != "above" && w != "below" && w != "left" && w != "right") continue;
      // The phrase before names A (its shape word is word i - 1), the phrase after B.
      const std::int64_t a = s.word_objects[i - 1];
      const std::int64_t b = s.word_objects[i + (w == "left" || w == "right" ? 2 : 1) + 1];
      REQUIRE(a >= 0);
      REQUIRE(b >= 0);
      const Centroid ca = centroid(s.masks[a]), cb = centroid(s.masks[b]);
      const double dx = ca.x - cb.x, dy = ca.y - cb.y;
      INFO(attn::data::caption_text(s) << ": dx " << dx << ", dy " << dy);
      if (w == "above") CHECK((dy < 0 && std::abs(dy) >= std::abs(dx)));
      if (w == "below") CHECK((dy > 0 && std::abs(dy) >= std::abs(dx)));
      if (w == "left") CHECK((dx < 0 && std::abs(dx) > std::abs(dy)));
      if (w == "right") CHECK((dx > 0 && std::abs(dx) > std::abs(dy)));
      // Clear: at least 4 pixels apart on its axis, 2 nearer on the other.
      const double major = std::max(std::abs(dx), std::abs(dy)), minor = std::min(std::abs(dx), std::abs(dy));
      CHECK(major >= 4 - 1e-9);
      CHECK(major - minor >= 2 - 1e-9);
      ++checked;
    }
  }
  CHECK(checked > 200);
}

TEST_CASE("scenes: a data set from a seed, split into training and test scenes") {
  const auto split = attn::data::split_scenes(20, 5, 99);
  REQUIRE(split.train.size() == 20);
  REQUIRE(split.test.size() == 5);
  const auto all = attn::data::make_scenes(25, 99);
  for (std::size_t i = 0; i < 25; ++i) {
    const Scene& s = i < 20 ? split.train[i] : split.test[i - 20];
    CHECK(s.seed == attn::data::scene_seed(99, i));
    CHECK(s.pixels == all[i].pixels);
  }
  for (const Scene& t : split.test)
    for (const Scene& r : split.train) CHECK(t.pixels != r.pixels);
  // Scene i does not depend on how many scenes the set holds.
  CHECK(attn::data::make_scenes(3, 99)[2].pixels == all[2].pixels);
}

TEST_CASE("scenes: float pixels, word masks and options out of range") {
  const Scene s = attn::data::render_scene(5);
  const auto f = attn::data::to_float(s.pixels);
  CHECK(f.shape() == s.pixels.shape());
  CHECK(f(1, 10, 20) == doctest::Approx(s.pixels(1, 10, 20) / 255.0));
  CHECK(attn::data::word_mask(s, 1) == s.masks[s.word_objects[1]]);
  CHECK(!xt::any(attn::data::word_mask(s, 0)));  // "a"
  CHECK_THROWS_WITH_SUBSTR(attn::data::word_mask(s, 99), attn::ValueError, "word 99 of a caption of");
  attn::data::SceneOptions o;
  o.max_objects = 5;
  CHECK_THROWS_WITH_SUBSTR(attn::data::render_scene(1, o), attn::ValueError, "max_objects <= 4, got 1 and 5");
  o = {};
  o.width = 8;
  CHECK_THROWS_WITH_SUBSTR(attn::data::render_scene(1, o), attn::ValueError, "height and width must be 16..4096");
  o = {};
  o.min_gap = 60;  // possible in principle (the centroids of objects in opposite corners), never drawn
  o.min_objects = 2;
  CHECK_THROWS_WITH_SUBSTR(attn::data::render_scene(1, o), attn::ValueError, "met the constraints");
  // Options that can never hold are refused at once, naming the option, at any picture size.
  o.min_gap = 64;
  CHECK_THROWS_WITH_SUBSTR(attn::data::render_scene(1, o), attn::ValueError,
                           "min_gap 64 can never hold: two objects' centroids are less than 64 pixels");
  o.height = o.width = 4096;
  o.min_gap = 100000;
  CHECK_THROWS_WITH_SUBSTR(attn::data::render_scene(1, o), attn::ValueError, "min_gap 100000 can never hold");
  o = {};
  o.width = 40;
  o.min_margin = 40;
  CHECK_THROWS_WITH_SUBSTR(attn::data::render_scene(1, o), attn::ValueError,
                           "min_margin 40 can never hold: two objects' centroids are less than 40 pixels");
  o.max_objects = 1;  // no relations, so no gap or margin to keep
  CHECK(attn::data::render_scene(1, o).objects.size() == 1);
  // A scene survives a PNG round trip.
  CHECK(attn::io::decode_png(attn::io::encode_png(s.pixels), "scene") == s.pixels);
}

// Not a check: ATTN_SCENES_DIR=/tmp/x writes scenes 0..7 there as PNGs (4x enlarged) with
// their captions, and times 1000 scenes.
TEST_CASE("scenes: pictures to look at, and the time to draw them") {
  const char* dir = std::getenv("ATTN_SCENES_DIR");
  if (dir == nullptr) return;
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    const Scene s = attn::data::render_scene(seed);
    xt::xtensor<std::uint8_t, 3> big = xt::xtensor<std::uint8_t, 3>::from_shape({3, 256, 256});
    for (std::size_t c = 0; c < 3; ++c)
      for (std::size_t y = 0; y < 256; ++y)
        for (std::size_t x = 0; x < 256; ++x) big(c, y, x) = s.pixels(c, y / 4, x / 4);
    attn::io::write_png(std::string(dir) + "/scene_" + std::to_string(seed) + ".png", big);
    std::cout << "scene_" << seed << ".png: " << attn::data::caption_text(s) << "\n";
  }
  auto t0 = std::chrono::steady_clock::now();
  const auto scenes = attn::data::make_scenes(1000, 1);
  auto t1 = std::chrono::steady_clock::now();
  std::string png;
  for (int r = 0; r < 100; ++r) png = attn::io::encode_png(scenes[r].pixels);
  auto t2 = std::chrono::steady_clock::now();
  for (int r = 0; r < 100; ++r) CHECK(attn::io::decode_png(png, "scene").size() == 3 * 64 * 64);
  auto t3 = std::chrono::steady_clock::now();
  std::cout << "1000 scenes 64x64: " << std::chrono::duration<double>(t1 - t0).count() << " s\n"
            << "encode_png of one: " << std::chrono::duration<double>(t2 - t1).count() / 100 * 1e3 << " ms, "
            << png.size() << " bytes\n"
            << "decode_png of one: " << std::chrono::duration<double>(t3 - t2).count() / 100 * 1e3 << " ms\n";
}
