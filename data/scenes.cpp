#include "scenes.hpp"

#include "../core/errors.hpp"
#include "../core/random.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace attn::data {

namespace {

constexpr std::size_t kMaxTries = 10000;

// Ranges drawn from std::mt19937_64's raw output (fixed by the standard), by rejection so
// every value is equally likely; std::uniform_int_distribution's mapping is implementation-
// defined, so libstdc++ and libc++ would draw different scenes.
class Draw {
 public:
  explicit Draw(std::uint64_t seed) : gen_(seed) {}
  std::uint64_t below(std::uint64_t n) {  // 0 .. n-1
    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t limit = max - max % n;  // a multiple of n
    std::uint64_t x;
    do x = gen_.engine()();
    while (x >= limit);
    return x % n;
  }
  int between(int low, int high) {  // low .. high, both included
    return low + static_cast<int>(below(static_cast<std::uint64_t>(high - low) + 1));
  }

 private:
  Generator gen_;
};

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

int clamp_byte(int v) { return std::min(255, std::max(0, v)); }

// Where object a stands relative to object b, from their masks' pixel sums and counts, in
// integers (the centroid difference times count_a * count_b): the relation's index in
// scene_relations(), or -1 when it is not clear.
int relation(std::int64_t sxa, std::int64_t sya, std::int64_t na, std::int64_t sxb, std::int64_t syb,
             std::int64_t nb, const SceneOptions& options) {
  const std::int64_t dx = sxa * nb - sxb * na, dy = sya * nb - syb * na, scale = na * nb;
  const std::int64_t adx = dx < 0 ? -dx : dx, ady = dy < 0 ? -dy : dy;
  const bool vertical = ady >= adx;
  const std::int64_t major = vertical ? ady : adx, minor = vertical ? adx : ady;
  if (major < options.min_gap * scale || major - minor < options.min_margin * scale) return -1;
  if (vertical) return dy < 0 ? 0 : 1;  // above, below
  return dx < 0 ? 2 : 3;                // left of, right of
}

// No two objects share size, colour and shape: a caption word then names one object, and its
// link to a mask is not a coin toss between look-alikes.
bool distinct_descriptions(const std::vector<SceneObject>& objects) {
  for (std::size_t a = 0; a < objects.size(); ++a)
    for (std::size_t b = a + 1; b < objects.size(); ++b)
      if (objects[a].shape == objects[b].shape && objects[a].colour == objects[b].colour &&
          objects[a].size == objects[b].size)
        return false;
  return true;
}

// Whether each pair's relation can still be clear, from the objects' boxes alone (a seen
// centroid lies inside its object's box): rejects a draw before drawing it, which keeps strict
// min_gap values from costing a picture's worth of pixels per draw. The same draws are rejected
// as by the centroids; only sooner.
bool relations_possible(const std::vector<SceneObject>& objects, const SceneOptions& options) {
  for (std::size_t k = 0; k + 1 < objects.size(); k += 2) {
    const SceneObject &a = objects[k], &b = objects[k + 1];
    const int reach = a.radius + b.radius;
    if (std::max(std::abs(a.x - b.x), std::abs(a.y - b.y)) + reach < options.min_gap) return false;
  }
  return true;
}

void check_options(const SceneOptions& o) {
  auto fail = [](const std::string& what) { throw ValueError("render_scene: " + what); };
  if (o.height < 16 || o.width < 16 || o.height > 4096 || o.width > 4096)
    fail("height and width must be 16..4096, got " + std::to_string(o.height) + " and " + std::to_string(o.width));
  if (o.min_objects < 1 || o.min_objects > o.max_objects || o.max_objects > 4)
    fail("expected 1 <= min_objects <= max_objects <= 4, got " + std::to_string(o.min_objects) + " and " +
         std::to_string(o.max_objects));
  if (o.object_noise < 0 || o.object_noise > 20) fail("object_noise must be 0..20, got " + std::to_string(o.object_noise));
  if (!(o.min_visible > 0 && o.min_visible <= 1)) fail("min_visible must be in (0, 1], got " + std::to_string(o.min_visible));
  if (o.min_gap < 0 || o.min_margin < 0)
    fail("min_gap and min_margin must be >= 0, got " + std::to_string(o.min_gap) + " and " + std::to_string(o.min_margin));
  // Refused here rather than after kMaxTries draws: two centroids inside the picture are less than
  // its shorter side apart on that axis, and each relation must be able to hold on both axes (a
  // caption uses above/below as well as left of/right of). Only scenes of two or more objects
  // have relations.
  const std::size_t side = std::min(o.height, o.width);
  if (o.max_objects >= 2 && static_cast<std::size_t>(o.min_gap) >= side)
    fail("min_gap " + std::to_string(o.min_gap) + " can never hold: two objects' centroids are less than " +
         std::to_string(side) + " pixels (the picture's shorter side) apart");
  if (o.max_objects >= 2 && static_cast<std::size_t>(o.min_margin) >= side)
    fail("min_margin " + std::to_string(o.min_margin) + " can never hold: two objects' centroids are less than " +
         std::to_string(side) + " pixels (the picture's shorter side) apart");
}

}  // namespace

const Tokens& scene_shapes() {
  static const Tokens names = {"square", "circle", "triangle", "cross"};
  return names;
}
const Tokens& scene_colours() {
  static const Tokens names = {"red", "green", "blue", "yellow", "purple", "cyan"};
  return names;
}
const Tokens& scene_sizes() {
  static const Tokens names = {"small", "large"};
  return names;
}
const std::vector<std::array<std::uint8_t, 3>>& scene_palette() {
  // Saturated (largest minus smallest channel >= 130) and far apart, so noise never blurs two.
  static const std::vector<std::array<std::uint8_t, 3>> rgb = {
      {220, 40, 40}, {40, 170, 60}, {40, 80, 220}, {225, 205, 30}, {150, 50, 200}, {30, 190, 200}};
  return rgb;
}
const Tokens& scene_relations() {
  static const Tokens names = {"above", "below", "left of", "right of"};
  return names;
}

bool scene_shape_contains(std::size_t shape, int radius, int dx, int dy) {
  const int adx = std::abs(dx), ady = std::abs(dy), r = radius;
  switch (shape) {
    case 0: return adx <= r && ady <= r;                  // square
    case 1: return adx * adx + dy * dy <= r * r + r;      // circle (+ r: rounder at the axes)
    case 2: return ady <= r && 2 * adx <= dy + r;         // triangle, apex up, base at dy = r
    default: {                                            // cross: two bars of width 2t + 1
      const int t = std::max(1, r / 3);
      return (adx <= t && ady <= r) || (ady <= t && adx <= r);
    }
  }
}

std::array<std::array<int, 2>, 2> scene_radii(std::size_t height, std::size_t width) {
  // Small 5..7 and large 10..13 pixels at 64x64, scaled with the picture's shorter side. Below
  // radius 3 the shapes merge (at 1 square, circle and cross are one 3x3 block, at 2 circle and
  // cross are the same 21 pixels), so a caption would name a shape the picture cannot show: a
  // radius is at least kMinShapeRadius, from which the four masks differ (the tests check every
  // radius). A large object stays at least 2 pixels wider in radius than any small one, so
  // "small" and "large" stay apart in pictures too small for the scaled ranges (below 39 pixels).
  const int m = static_cast<int>(std::min(height, width));
  const int small_low = std::max(kMinShapeRadius, m * 5 / 64), small_high = std::max(small_low, m * 7 / 64);
  const int large_low = std::max(small_high + 2, m * 10 / 64), large_high = std::max(large_low, m * 13 / 64);
  return {{{small_low, small_high}, {large_low, large_high}}};
}

Vocab scene_vocab() {
  Vocab v(Tokens{"a", "and", "above", "below", "left", "right", "of"});
  for (const auto* list : {&scene_sizes(), &scene_colours(), &scene_shapes()})
    for (const auto& w : *list) v.add(w);
  return v;
}

Scene render_scene(std::uint64_t seed, const SceneOptions& options) {
  check_options(options);
  const int h = static_cast<int>(options.height), w = static_cast<int>(options.width);
  const auto radius_range = scene_radii(options.height, options.width);
  Draw draw(seed);

  Scene scene;
  scene.seed = seed;
  // The object seen at each pixel, -1 for none. A draw writes and reads only its objects' boxes
  // (and clears them when it fails), so a draw costs the objects' area, not the picture's.
  std::vector<int> top(static_cast<std::size_t>(h * w), -1);
  auto at = [&](int x, int y) -> int& { return top[static_cast<std::size_t>(y * w + x)]; };
  std::vector<std::int64_t> sx, sy, seen;  // per object: sums of x and y, pixels seen
  std::vector<int> relations;              // per clause of two objects
  bool found = false;
  for (std::size_t attempt = 0; attempt < kMaxTries && !found; ++attempt) {
    for (const SceneObject& o : scene.objects)  // the previous draw's pixels
      for (int y = o.y - o.radius; y <= o.y + o.radius; ++y)
        std::fill(&at(o.x - o.radius, y), &at(o.x + o.radius, y) + 1, -1);
    const std::size_t n = static_cast<std::size_t>(
        draw.between(static_cast<int>(options.min_objects), static_cast<int>(options.max_objects)));
    scene.objects.assign(n, SceneObject{});
    for (SceneObject& o : scene.objects) {
      o.shape = draw.below(scene_shapes().size());
      o.colour = draw.below(scene_colours().size());
      o.size = draw.below(scene_sizes().size());
      o.radius = draw.between(radius_range[o.size][0], radius_range[o.size][1]);
      o.x = draw.between(o.radius, w - 1 - o.radius);
      o.y = draw.between(o.radius, h - 1 - o.radius);
    }
    if (!distinct_descriptions(scene.objects) || !relations_possible(scene.objects, options)) continue;
    std::vector<std::int64_t> area(n, 0);
    for (std::size_t k = 0; k < n; ++k) {  // in order: a later object covers an earlier one
      const SceneObject& o = scene.objects[k];
      for (int y = o.y - o.radius; y <= o.y + o.radius; ++y)
        for (int x = o.x - o.radius; x <= o.x + o.radius; ++x)
          if (scene_shape_contains(o.shape, o.radius, x - o.x, y - o.y)) {
            at(x, y) = static_cast<int>(k);
            ++area[k];
          }
    }
    sx.assign(n, 0);
    sy.assign(n, 0);
    seen.assign(n, 0);
    bool touching = false;  // two objects of one colour share an edge: no boundary shows between them
    for (std::size_t k = 0; k < n; ++k) {  // every pixel object k shows lies in its box
      const SceneObject& o = scene.objects[k];
      for (int y = o.y - o.radius; y <= o.y + o.radius; ++y)
        for (int x = o.x - o.radius; x <= o.x + o.radius; ++x) {
          if (at(x, y) != static_cast<int>(k)) continue;
          sx[k] += x;
          sy[k] += y;
          ++seen[k];
          // Right and lower neighbours suffice: the other object's scan sees the other two sides.
          for (const int j : {x + 1 < w ? at(x + 1, y) : -1, y + 1 < h ? at(x, y + 1) : -1})
            if (j >= 0 && j != static_cast<int>(k) && scene.objects[j].colour == o.colour) touching = true;
        }
    }
    found = !touching;
    for (std::size_t k = 0; k < n; ++k)
      if (static_cast<double>(seen[k]) < options.min_visible * static_cast<double>(area[k])) found = false;
    relations.clear();
    for (std::size_t k = 0; found && k + 1 < n; k += 2) {
      relations.push_back(relation(sx[k], sy[k], seen[k], sx[k + 1], sy[k + 1], seen[k + 1], options));
      if (relations.back() < 0) found = false;
    }
  }
  if (!found)
    throw ValueError("render_scene: no scene of seed " + std::to_string(seed) + " met the constraints in " +
                     std::to_string(kMaxTries) + " draws (min_visible, min_gap or min_margin too strict for " +
                     std::to_string(h) + "x" + std::to_string(w) + ")");

  // The background's texture: a grey level, a slight tint, and a pattern of two levels.
  const int grey = draw.between(70, 150), contrast = draw.between(15, 35), period = draw.between(4, 12);
  const int grain = draw.between(3, 10);  // pixel noise, the same on every channel
  int tint[3];
  for (int& t : tint) t = draw.between(-8, 8);
  const int pattern = draw.between(0, 3), orientation = draw.between(0, 2);
  auto texture = [&](int x, int y) {
    switch (pattern) {
      case 0: return 0;  // noise only
      case 1: {          // stripes: horizontal, vertical or diagonal bands
        const int along = orientation == 0 ? y : orientation == 1 ? x : x + y;
        return (along / period) % 2 ? contrast : 0;
      }
      case 2: return ((x / period) + (y / period)) % 2 ? contrast : 0;  // checkerboard
      default: return orientation == 0 ? contrast * x / w : contrast * y / h;  // gradient
    }
  };

  const std::size_t hs = options.height, ws = options.width;
  scene.pixels = xt::xtensor<std::uint8_t, 3>::from_shape({3, hs, ws});
  scene.masks.assign(scene.objects.size(), xt::xtensor<bool, 2>::from_shape({hs, ws}));
  for (auto& mask : scene.masks) mask.fill(false);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int k = top[static_cast<std::size_t>(y * w + x)];
      if (k < 0) {
        const int level = grey + texture(x, y) + draw.between(-grain, grain);
        for (int c = 0; c < 3; ++c)
          scene.pixels(c, y, x) = static_cast<std::uint8_t>(clamp_byte(level + tint[c] + draw.between(-2, 2)));
      } else {
        scene.masks[k](y, x) = true;
        const auto& colour = scene_palette()[scene.objects[k].colour];
        for (int c = 0; c < 3; ++c)
          scene.pixels(c, y, x) = static_cast<std::uint8_t>(
              clamp_byte(colour[c] + draw.between(-options.object_noise, options.object_noise)));
      }
    }

  // The caption: "a SIZE COLOUR SHAPE", paired by relations, clauses joined by "and".
  auto phrase = [&](std::size_t k) {
    const SceneObject& o = scene.objects[k];
    scene.caption.push_back("a");
    scene.word_objects.push_back(-1);
    for (const std::string* word : {&scene_sizes()[o.size], &scene_colours()[o.colour], &scene_shapes()[o.shape]}) {
      scene.caption.push_back(*word);
      scene.word_objects.push_back(static_cast<std::int64_t>(k));
    }
  };
  auto word = [&](const std::string& text) {
    scene.caption.push_back(text);
    scene.word_objects.push_back(-1);
  };
  for (std::size_t k = 0; k < scene.objects.size(); k += 2) {
    if (k > 0) word("and");
    phrase(k);
    if (k + 1 < scene.objects.size()) {
      switch (relations[k / 2]) {
        case 0: word("above"); break;
        case 1: word("below"); break;
        case 2: word("left"); word("of"); break;
        default: word("right"); word("of"); break;
      }
      phrase(k + 1);
    }
  }
  return scene;
}

std::uint64_t scene_seed(std::uint64_t seed, std::size_t i) { return splitmix64(seed ^ splitmix64(i)); }

std::vector<Scene> make_scenes(std::size_t n, std::uint64_t seed, const SceneOptions& options) {
  std::vector<Scene> scenes;
  scenes.reserve(n);
  for (std::size_t i = 0; i < n; ++i) scenes.push_back(render_scene(scene_seed(seed, i), options));
  return scenes;
}

SceneSplit split_scenes(std::size_t n_train, std::size_t n_test, std::uint64_t seed, const SceneOptions& options) {
  SceneSplit split;
  split.train.reserve(n_train);
  split.test.reserve(n_test);
  for (std::size_t i = 0; i < n_train + n_test; ++i)
    (i < n_train ? split.train : split.test).push_back(render_scene(scene_seed(seed, i), options));
  return split;
}

xt::xtensor<bool, 2> word_mask(const Scene& scene, std::size_t word) {
  if (word >= scene.caption.size())
    throw ValueError("word_mask: word " + std::to_string(word) + " of a caption of " +
                     std::to_string(scene.caption.size()) + " words");
  const std::int64_t k = scene.word_objects[word];
  if (k >= 0) return scene.masks[static_cast<std::size_t>(k)];
  xt::xtensor<bool, 2> none = xt::xtensor<bool, 2>::from_shape({scene.pixels.shape()[1], scene.pixels.shape()[2]});
  none.fill(false);
  return none;
}

xt::xtensor<float, 3> to_float(const xt::xtensor<std::uint8_t, 3>& pixels) {
  xt::xtensor<float, 3> out = xt::xtensor<float, 3>::from_shape(pixels.shape());
  for (std::size_t i = 0; i < pixels.size(); ++i) out.flat(i) = static_cast<float>(pixels.flat(i)) / 255.0f;
  return out;
}

std::string caption_text(const Scene& scene) {
  std::string text;
  for (const std::string& w : scene.caption) text += (text.empty() ? "" : " ") + w;
  return text;
}

}  // namespace attn::data
