// Rendered scenes: RGB pictures of coloured shapes with a caption, drawn from a seed, for
// image captioning with attention (Show, Attend and Tell on pixels).
//
//   attn::data::Scene s = attn::data::render_scene(42);
//   s.pixels;        // [3, 64, 64] uint8, red, green and blue planes
//   s.caption;       // {"a", "small", "red", "circle", "above", "a", "large", "blue", "square"}
//   s.masks[k];      // [64, 64] bool: the pixels where object k is seen (its gold region)
//   s.word_objects;  // per caption word, the object it describes, or -1
//
// A scene holds 1 to 4 objects, each a shape (square, circle, triangle, cross), a colour
// (red, green, blue, yellow, purple, cyan) and a size (small, large) at any position inside
// the picture, drawn in order: a later object covers an earlier one where they overlap. The
// background is a grey texture (plain noise, stripes, a checkerboard or a gradient, slightly
// tinted) with pixel noise; every object pixel is its colour plus a little noise. Objects are
// saturated and the background nearly grey, so a pixel's object can be read from its colour:
// object k's pixels lie within `object_noise` of its palette colour in every channel, and a
// background pixel's channels differ by at most `kMaxBackgroundChroma`.
//
// The caption: a phrase "a SIZE COLOUR SHAPE" per object, in drawing order, paired up:
//   caption := clause ("and" clause)*      clause := phrase RELATION phrase | phrase
//   RELATION := "above" | "below" | "left of" | "right of"
// objects 0 and 1 form the first clause, 2 and 3 the second; a last object alone is a clause.
// A relation is decided on the centroids of the two objects' masks (what is seen, after
// overlap), with y growing downwards: dx = x(A) - x(B), dy = y(A) - y(B); if |dy| >= |dx| the
// relation is vertical ("above" when dy < 0, else "below"), otherwise horizontal ("left of"
// when dx < 0, else "right of"). A scene is drawn again (from the same generator) until every
// relation is clear, |major| >= `min_gap` and |major| - |minor| >= `min_margin` pixels, every
// object keeps at least `min_visible` of its area in sight, no two objects share size, colour
// and shape (each phrase names one object, so a word's gold mask is not a pick among
// look-alikes), and no two objects of one colour touch (share an edge between 4-neighbours:
// the pixels would show one blob, with no boundary between the two masks).
//
// Every shape is told apart from every other at every size: a radius is at least
// kMinShapeRadius (below it square, circle and cross merge), and a large object's radius
// exceeds every small one's (scene_radii).
//
// The same bytes on every machine: the draws come from std::mt19937_64 (attn::Generator's
// engine), whose output the C++ standard fixes, mapped to ranges by rejection here, not by
// std::uniform_int_distribution (implementation-defined); the drawing is integer arithmetic
// (no anti-aliasing, no floating point). tests/data/test_scenes.cpp checks a checksum.
//
// Why uint8: the bytes are the picture (a PNG holds them as they are, a checksum reads them),
// 4 times smaller than float; to_float gives a model its [3, H, W] input in 0..1.
#pragma once

#include "vocab.hpp"

#include <xtensor/xtensor.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::data {

// A background pixel's largest channel minus its smallest is at most this (objects' are above 100).
constexpr int kMaxBackgroundChroma = 24;

// The smallest radius a shape is drawn at: at radius 1 square, circle and cross are the same 3x3
// block, at 2 circle and cross the same 21 pixels; from 3 on all four differ.
constexpr int kMinShapeRadius = 3;

struct SceneOptions {
  std::size_t height = 64, width = 64;  // at least 16 each
  std::size_t min_objects = 1, max_objects = 4;  // drawn uniformly, 1 <= min <= max <= 4
  int object_noise = 12;       // each channel of an object pixel: its colour +- up to this (0..20)
  double min_visible = 0.6;    // an object keeps at least this share of its pixels in sight
  int min_gap = 4;             // a relation's centroids are this far apart on its axis (pixels)
  int min_margin = 2;          // and nearer on the other axis by this much
};

struct SceneObject {
  std::size_t shape = 0;   // index into scene_shapes()
  std::size_t colour = 0;  // index into scene_colours()
  std::size_t size = 0;    // index into scene_sizes()
  int x = 0, y = 0;        // centre (pixels; y downwards)
  int radius = 0;          // half its extent: it spans x - radius .. x + radius
};

struct Scene {
  std::uint64_t seed = 0;                   // render_scene(seed, options) draws it again
  xt::xtensor<std::uint8_t, 3> pixels;      // [3, H, W]
  std::vector<SceneObject> objects;         // in drawing order
  std::vector<xt::xtensor<bool, 2>> masks;  // [H, W] per object: where it is seen
  Tokens caption;
  std::vector<std::int64_t> word_objects;   // per word: its object (size, colour, shape words), else -1
};

struct SceneSplit {
  std::vector<Scene> train, test;
};

const Tokens& scene_shapes();   // square circle triangle cross
const Tokens& scene_colours();  // red green blue yellow purple cyan
const Tokens& scene_sizes();    // small large
const std::vector<std::array<std::uint8_t, 3>>& scene_palette();  // RGB of each colour
const Tokens& scene_relations();  // above below "left of" "right of" (two caption words each)
// Every word a caption can use.
Vocab scene_vocab();

// Whether offset (dx, dy) from a shape's centre is inside shape `shape` (index into
// scene_shapes()) of `radius`; y grows downwards. Every shape spans the box -radius..radius on
// both axes, touching all four sides.
bool scene_shape_contains(std::size_t shape, int radius, int dx, int dy);
// The radii drawn in a height x width picture: [size][0] .. [size][1], both included, size as
// in scene_sizes(). Small 5..7 and large 10..13 at 64x64, scaled with the shorter side, never
// below kMinShapeRadius, and a large radius at least 2 above every small one.
std::array<std::array<int, 2>, 2> scene_radii(std::size_t height, std::size_t width);

// The scene of `seed`. ValueError naming the option for options out of range or that can never
// hold (min_gap or min_margin not below the picture's shorter side, when scenes of two or more
// objects are asked for), and when no scene meets the constraints in 10000 draws (options too
// strict for the picture's size). A draw costs its objects' area, not the picture's.
Scene render_scene(std::uint64_t seed, const SceneOptions& options = {});

// The seed of scene i of a set made from `seed` (SplitMix64 of both): scene i is the same
// whether the set holds 10 scenes or 10000.
std::uint64_t scene_seed(std::uint64_t seed, std::size_t i);
// n scenes: scene i is render_scene(scene_seed(seed, i), options).
std::vector<Scene> make_scenes(std::size_t n, std::uint64_t seed, const SceneOptions& options = {});
// Scenes 0..n_train-1 of make_scenes(n_train + n_test, seed) for training, the next n_test for
// testing: no test picture is a training picture (their seeds differ). Test scenes are new
// pictures, not new captions: a one-object scene has one of 2 x 6 x 4 = 48 captions, so in a set
// of a few thousand scenes nearly every one-object test caption also appears word for word in
// training (captions of more objects repeat less), and a model can get those right by recalling
// a training caption. What the test set measures is reading pictures never seen; a split by
// held-out captions would have to be built on top.
SceneSplit split_scenes(std::size_t n_train, std::size_t n_test, std::uint64_t seed, const SceneOptions& options = {});

// The gold region of caption word `word`: its object's mask, or an all-false mask for a word
// naming no object ("a", a relation, "and"). ValueError for a word past the caption's end.
xt::xtensor<bool, 2> word_mask(const Scene& scene, std::size_t word);

// [3, H, W] in 0..1 (value / 255), a model's input.
xt::xtensor<float, 3> to_float(const xt::xtensor<std::uint8_t, 3>& pixels);

// The caption as one string, words separated by spaces.
std::string caption_text(const Scene& scene);

}  // namespace attn::data
