// Attention over a grid (chapter 4): one small grid per generated word, in SVG
// and in the terminal.
#include "grid_plot.hpp"
#include "svg.hpp"

#include "../core/errors.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace attn::viz {

namespace {

constexpr std::size_t kPerLine = 8;  // grids side by side before wrapping

void check_grids(const xt::xarray<double>& weights, const std::vector<std::string>& words, const char* op) {
  if (weights.dimension() != 3)
    throw ShapeError(std::string(op) + ": expected weights [T, rows, cols], got shape " +
                     shape_str(Shape(weights.shape().begin(), weights.shape().end())));
  if (words.size() != weights.shape()[0])
    throw ShapeError(std::string(op) + ": expected " + std::to_string(weights.shape()[0]) + " words, got " +
                     std::to_string(words.size()));
}

}  // namespace

std::string attention_grids_svg(const xt::xarray<double>& weights, const std::vector<std::string>& words,
                                const HeatmapOptions& o) {
  check_grids(weights, words, "attention_grids_svg");
  const int T = static_cast<int>(words.size()), rows = static_cast<int>(weights.shape()[1]),
            cols = static_cast<int>(weights.shape()[2]);
  const int per_line = std::max(1, std::min(T, static_cast<int>(kPerLine)));
  const int lines = (T + per_line - 1) / per_line;
  const int panel_w = std::max(cols * o.cell, 64), panel_h = rows * o.cell + 24;  // grid + its word below
  const int gap = 14, left = 16, top = o.title.empty() ? 16 : 40;
  const int bar_x = left + per_line * (panel_w + gap) + 6, bar_h = std::max(lines * (panel_h + gap) - gap - 24, 60);
  const int width = std::max(bar_x + 56, static_cast<int>(o.title.size()) * 9 + 20);
  const int height = top + std::max(lines * (panel_h + gap), bar_h + 24) + 8;

  std::ostringstream svg;
  begin_svg(svg, width, height, o.title, 24);
  const double span = o.vmax > o.vmin ? o.vmax - o.vmin : 1.0;
  for (int t = 0; t < T; ++t) {
    const int x0 = left + (t % per_line) * (panel_w + gap) + (panel_w - cols * o.cell) / 2;
    const int y0 = top + (t / per_line) * (panel_h + gap);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const double v = weights(t, r, c);
        svg << "<rect x=\"" << x0 + c * o.cell << "\" y=\"" << y0 + r * o.cell << "\" width=\"" << o.cell
            << "\" height=\"" << o.cell << "\" fill=\"" << viridis((v - o.vmin) / span)
            << "\" stroke=\"white\" stroke-width=\"1\"><title>" << escape_xml(words[t]) << ", row " << r
            << ", column " << c << ": " << format_number(v) << "</title></rect>\n";
      }
    svg << "<text x=\"" << x0 + cols * o.cell / 2 << "\" y=\"" << y0 + rows * o.cell + 16
        << "\" text-anchor=\"middle\">" << escape_xml(words[t]) << "</text>\n";
  }
  svg << colour_bar_svg(bar_x, top, bar_h, o.vmin, o.vmax) << "</svg>\n";
  return svg.str();
}

std::string terminal_grids(const xt::xarray<double>& weights, const std::vector<std::string>& words) {
  check_grids(weights, words, "terminal_grids");
  static const char* shades[] = {" ", "\u2591", "\u2592", "\u2593", "\u2588"};  // " ░▒▓█"
  const std::size_t T = words.size(), rows = weights.shape()[1], cols = weights.shape()[2];
  std::size_t panel = 2 * cols + 2;  // a cell is two characters wide, plus the frame
  for (const auto& w : words) panel = std::max(panel, w.size());
  std::ostringstream os;
  for (std::size_t first = 0; first < T; first += kPerLine) {
    const std::size_t last = std::min(T, first + kPerLine);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t t = first; t < last; ++t) {
        os << "\u2502";
        for (std::size_t c = 0; c < cols; ++c) {
          const double v = weights(t, r, c);
          const int level = std::isfinite(v) ? std::min(4, static_cast<int>(std::lround(std::clamp(v, 0.0, 1.0) * 4))) : 0;
          os << shades[level] << shades[level];
        }
        os << "\u2502" << std::string(panel - 2 * cols - 2 + 2, ' ');
      }
      os << "\n";
    }
    for (std::size_t t = first; t < last; ++t) os << words[t] << std::string(panel + 2 - words[t].size(), ' ');
    os << "\n";
  }
  return os.str();
}

}  // namespace attn::viz
