#include "attention_overlay.hpp"

#include "../core/errors.hpp"
#include "../io/png.hpp"
#include "base64.hpp"
#include "svg.hpp"

#include <xtensor/xview.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace attn::viz {

namespace {

std::string dims(const xt::xarray<double>& a) { return shape_str(Shape(a.shape().begin(), a.shape().end())); }

void check_image(const char* op, const xt::xtensor<std::uint8_t, 3>& image) {
  const auto& s = image.shape();
  if (s[0] != 3 || s[1] == 0 || s[2] == 0)
    throw ShapeError(std::string(op) + ": expected a picture [3, H, W], got [" + std::to_string(s[0]) + ", " +
                     std::to_string(s[1]) + ", " + std::to_string(s[2]) + "]");
}

// Where output pixel i of `out` samples an axis of `in` cells: the two cells and the weight of
// the second (align_corners=False, clamped at the edges).
struct Tap {
  std::size_t low, high;
  double frac;
};

Tap tap(std::size_t i, std::size_t out, std::size_t in) {
  double src = (static_cast<double>(i) + 0.5) * static_cast<double>(in) / static_cast<double>(out) - 0.5;
  src = std::max(src, 0.0);
  const std::size_t low = std::min(static_cast<std::size_t>(src), in - 1);
  const std::size_t high = std::min(low + 1, in - 1);
  return {low, high, src - static_cast<double>(low)};
}

}  // namespace

xt::xtensor<double, 2> upsample_bilinear(const xt::xarray<double>& cells, std::size_t height, std::size_t width) {
  if (cells.dimension() != 2 || cells.size() == 0 || height == 0 || width == 0)
    throw ShapeError("upsample_bilinear: expected cells [rows, cols] (non-empty) and a size above 0, got cells " +
                     dims(cells) + " and " + std::to_string(height) + "x" + std::to_string(width));
  const std::size_t rows = cells.shape()[0], cols = cells.shape()[1];
  std::vector<Tap> across(width);
  for (std::size_t x = 0; x < width; ++x) across[x] = tap(x, width, cols);
  xt::xtensor<double, 2> out = xt::xtensor<double, 2>::from_shape({height, width});
  for (std::size_t y = 0; y < height; ++y) {
    const Tap down = tap(y, height, rows);
    for (std::size_t x = 0; x < width; ++x) {
      const Tap& a = across[x];
      const double top = cells(down.low, a.low) * (1 - a.frac) + cells(down.low, a.high) * a.frac;
      const double bottom = cells(down.high, a.low) * (1 - a.frac) + cells(down.high, a.high) * a.frac;
      out(y, x) = top * (1 - down.frac) + bottom * down.frac;
    }
  }
  return out;
}

xt::xtensor<std::uint8_t, 3> attention_overlay(const xt::xtensor<std::uint8_t, 3>& image,
                                               const xt::xarray<double>& weights, const OverlayOptions& options) {
  const char* op = "attention_overlay";
  check_image(op, image);
  if (weights.dimension() != 2 || weights.size() == 0)
    throw ShapeError(std::string(op) + ": expected one word's weights [rows, cols], got " + dims(weights));
  if (options.scale < 1 || options.scale > 16)
    throw ValueError(std::string(op) + ": scale must be 1..16, got " + std::to_string(options.scale));
  if (!(options.floor >= 0 && options.floor <= 1))
    throw ValueError(std::string(op) + ": floor must be 0..1, got " + std::to_string(options.floor));
  double highest = 0.0;
  for (double w : weights) {
    if (!std::isfinite(w) || w < 0)
      throw ValueError(std::string(op) + ": attention weights must be finite and >= 0, got " + std::to_string(w));
    highest = std::max(highest, w);
  }
  const std::size_t s = options.scale, H = image.shape()[1] * s, W = image.shape()[2] * s;
  const xt::xtensor<double, 2> map = upsample_bilinear(weights, H, W);
  // An all-zero map stays dim rather than dividing by 0.
  const double top = options.per_word_max ? (highest > 0 ? highest : 1.0) : 1.0;
  xt::xtensor<std::uint8_t, 3> out = xt::xtensor<std::uint8_t, 3>::from_shape({3, H, W});
  for (std::size_t y = 0; y < H; ++y)
    for (std::size_t x = 0; x < W; ++x) {
      const double a = std::min(1.0, map(y, x) / top);
      const double bright = options.floor + (1 - options.floor) * a;
      for (std::size_t c = 0; c < 3; ++c)
        out(c, y, x) = static_cast<std::uint8_t>(std::lround(image(c, y / s, x / s) * bright));
    }
  return out;
}

std::string attention_strips_svg(const xt::xtensor<std::uint8_t, 3>& image, const std::vector<AttentionStrip>& strips,
                                 const StripOptions& options) {
  const char* op = "attention_strips_svg";
  check_image(op, image);
  if (strips.empty()) throw ValueError(std::string(op) + ": expected at least one strip, got none");
  if (options.per_line < 2)
    throw ValueError(std::string(op) + ": per_line must be at least 2 (the picture and a word), got " +
                     std::to_string(options.per_line));
  bool any_notes = false;
  for (std::size_t i = 0; i < strips.size(); ++i) {
    const AttentionStrip& st = strips[i];
    const std::string which = std::string(op) + ": strip " + std::to_string(i) + " ('" + st.label + "')";
    if (st.weights.dimension() != 3 || st.weights.shape()[0] != st.words.size())
      throw ShapeError(which + ": expected weights [T, rows, cols] with T = " + std::to_string(st.words.size()) +
                       " (its words), got " + dims(st.weights));
    if (!st.notes.empty() && st.notes.size() != st.words.size())
      throw ValueError(which + ": expected a note per word or none, got " + std::to_string(st.notes.size()) +
                       " notes for " + std::to_string(st.words.size()) + " words");
    any_notes = any_notes || !st.notes.empty();
  }

  const std::size_t s = options.overlay.scale;
  const int pw = static_cast<int>(image.shape()[2] * s), ph = static_cast<int>(image.shape()[1] * s);
  const int gap = 8, left = 12, label_h = 20, words_h = any_notes ? 34 : 20;
  const int top = options.title.empty() ? 12 : 36;
  const int per_line = static_cast<int>(options.per_line);
  int widest = 1, height = top;
  for (const AttentionStrip& st : strips) {
    const int panels = static_cast<int>(st.words.size()) + 1;
    widest = std::max(widest, std::min(panels, per_line));
    height += label_h + ((panels + per_line - 1) / per_line) * (ph + words_h + gap) + gap;
  }
  const int width = std::max(left * 2 + widest * (pw + gap) - gap, static_cast<int>(options.title.size()) * 9 + 20);

  std::ostringstream svg;
  begin_svg(svg, width, height, options.title, 24);
  auto picture = [&](const xt::xtensor<std::uint8_t, 3>& rgb, int x, int y, const std::string& tooltip) {
    svg << "<image x=\"" << x << "\" y=\"" << y << "\" width=\"" << pw << "\" height=\"" << ph
        << "\" href=\"data:image/png;base64," << base64(io::encode_png(rgb)) << "\"><title>" << escape_xml(tooltip)
        << "</title></image>\n";
  };
  OverlayOptions plain = options.overlay;
  plain.floor = 1.0;  // the picture itself: uniform weights at full brightness, enlarged as the overlays are
  const xt::xtensor<std::uint8_t, 3> enlarged = attention_overlay(image, xt::ones<double>({1, 1}), plain);
  int y = top;
  for (const AttentionStrip& st : strips) {
    svg << "<text x=\"" << left << "\" y=\"" << y + 14 << "\" font-weight=\"bold\">" << escape_xml(st.label)
        << "</text>\n";
    y += label_h;
    for (std::size_t p = 0; p <= st.words.size(); ++p) {
      const int x = left + static_cast<int>(p % options.per_line) * (pw + gap);
      const int py = y + static_cast<int>(p / options.per_line) * (ph + words_h + gap);
      if (p == 0) {
        picture(enlarged, x, py, "the picture");
        continue;
      }
      const std::size_t t = p - 1;
      const xt::xarray<double> cells = xt::view(st.weights, t);
      double highest = 0.0;
      for (double w : cells) highest = std::max(highest, w);
      picture(attention_overlay(image, cells, options.overlay), x, py,
              st.words[t] + ": highest cell weight " + format_number(highest));
      svg << "<text x=\"" << x + pw / 2 << "\" y=\"" << py + ph + 15 << "\" text-anchor=\"middle\" font-size=\"13\">"
          << escape_xml(st.words[t]) << "</text>\n";
      if (!st.notes.empty())
        svg << "<text x=\"" << x + pw / 2 << "\" y=\"" << py + ph + 29
            << "\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\">" << escape_xml(st.notes[t]) << "</text>\n";
    }
    y += static_cast<int>((st.words.size() + options.per_line) / options.per_line) * (ph + words_h + gap) + gap;
  }
  svg << "</svg>\n";
  return svg.str();
}

std::string attention_strip_svg(const xt::xtensor<std::uint8_t, 3>& image, const std::vector<std::string>& words,
                                const xt::xarray<double>& weights, const StripOptions& options) {
  return attention_strips_svg(image, {AttentionStrip{"", words, weights, {}}}, options);
}

}  // namespace attn::viz
