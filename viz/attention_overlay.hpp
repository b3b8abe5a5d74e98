// The figure of Show, Attend and Tell: where the captioner looked for each word, laid over the
// picture (bright where attended, dimmed elsewhere), the picture first and one overlay per word
// with the word beneath it.
//
//   auto scene = attn::data::render_scene(42);
//   xt::xtensor<std::uint8_t, 3> one = attention_overlay(scene.pixels, weights_of_word);  // weights [8, 8]
//   AttentionStrip soft{"soft", words, soft_weights};     // weights [T, 8, 8], one map per word
//   AttentionStrip hard{"hard", words2, hard_weights};
//   xcpp::display(attn::viz::Svg{attention_strips_svg(scene.pixels, {soft, hard})});  // one strip under the other
//
// Each overlay is a PNG inside the SVG (a data URI, viz/base64.hpp), so the figure shows in an
// untrusted notebook as every other picture does (viz/display.hpp).
//
// Upsampling: bilinear, as PyTorch's F.interpolate(mode="bilinear", align_corners=False): the
// value at a pixel is interpolated between the four nearest cell centres, cell r's centre at
// pixel row (r + 0.5) * H / rows - 0.5; beyond the outer centres it is the edge cell's value.
// Not the paper's 16x upsampling with a Gaussian blur: the grid here is 8 x 8 over 64 x 64
// pixels (the paper's 14 x 14 over 224 x 224), bilinear keeps each cell's value at its centre,
// spreads a cell no further than its neighbours' centres (a blur wide enough to hide 8-pixel
// steps would smear a small object's map over its neighbours), needs no width to choose, and
// PyTorch computes the same values. A display choice only: eval/attention_share.hpp measures the
// weights on the cells themselves.
//
// Brightness: a pixel's colour times floor + (1 - floor) * a, a the upsampled weight over the
// map's highest (per_word_max, the default: a soft map over 64 cells rarely exceeds a few tenths,
// and would be dark everywhere on an absolute scale; a map spread evenly shows the whole picture
// bright, as it should) or the weight itself (1: a cell holding all the weight). Multiplying
// keeps an attended object's own colour, which a colour word is about (the tutorials' white
// glow washes it out).
#pragma once

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::viz {

// cells [rows, cols] upsampled to height x width (see above). ShapeError unless 2-d and
// non-empty, or for a size of 0.
xt::xtensor<double, 2> upsample_bilinear(const xt::xarray<double>& cells, std::size_t height, std::size_t width);

struct OverlayOptions {
  std::size_t scale = 3;     // each picture pixel drawn scale x scale (1..16); the map is upsampled to that size
  double floor = 0.2;        // the brightness where the weight is 0 (0..1); 1 where it is highest
  bool per_word_max = true;  // a map's highest weight is full brightness; false: a weight of 1 is
};

// The picture [3, H, W] with the weights [rows, cols] of one word laid over it:
// [3, H * scale, W * scale]. ShapeError for a picture not [3, H, W] or weights not 2-d;
// ValueError for options out of range or a negative or non-finite weight.
xt::xtensor<std::uint8_t, 3> attention_overlay(const xt::xtensor<std::uint8_t, 3>& image,
                                               const xt::xarray<double>& weights, const OverlayOptions& options = {});

// One row of the figure: a caption's words and each word's map.
struct AttentionStrip {
  std::string label;               // drawn above the strip ("soft", "hard"); may be empty
  std::vector<std::string> words;  // T words
  xt::xarray<double> weights;      // [T, rows, cols]
  std::vector<std::string> notes;  // optional: one line per word, drawn under it (e.g. its share in the mask)
};

struct StripOptions {
  OverlayOptions overlay;
  std::size_t per_line = 8;  // pictures per line (the picture itself counts); a long caption wraps
  std::string title;
};

// The strips one under the other, each the picture and then one overlay per word, its word
// beneath. ShapeError or ValueError naming the strip and what does not fit (words against the
// maps, notes against the words).
std::string attention_strips_svg(const xt::xtensor<std::uint8_t, 3>& image, const std::vector<AttentionStrip>& strips,
                                 const StripOptions& options = {});

// One strip.
std::string attention_strip_svg(const xt::xtensor<std::uint8_t, 3>& image, const std::vector<std::string>& words,
                                const xt::xarray<double>& weights, const StripOptions& options = {});

}  // namespace attn::viz
