// Spectrograms and attention under them (see spectrogram.hpp).
#include "spectrogram.hpp"

#include "svg.hpp"
#include "../core/errors.hpp"

#include <xtensor/xarray.hpp>
#include <xtensor/xsort.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace attn::viz {

namespace {

std::string shape_of(const xt::xarray<double>& a) { return shape_str(Shape(a.shape().begin(), a.shape().end())); }

void check_features(const char* op, const xt::xarray<double>& features) {
  if (features.dimension() != 2 || features.shape()[0] == 0 || features.shape()[1] == 0)
    throw ShapeError(std::string(op) + ": expected features [T, n_mels] with T, n_mels > 0, got shape " +
                     shape_of(features));
}

struct Layout {
  int left = 60, top, width, spec_h, frames;
};

// The spectrogram's cells and its frequency label, at (left, top); returns its height.
int draw_spectrogram(std::ostringstream& svg, const xt::xarray<double>& f, int left, int top,
                     const SpectrogramOptions& o) {
  const std::size_t T = f.shape()[0], M = f.shape()[1];
  const double lo = xt::amin(f)(), hi = xt::amax(f)(), span = hi > lo ? hi - lo : 1.0;
  const int h = o.band_px * static_cast<int>(M);
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t m = 0; m < M; ++m)  // band 0 at the bottom
      svg << "<rect x=\"" << left + o.frame_px * static_cast<int>(t) << "\" y=\""
          << top + h - o.band_px * static_cast<int>(m + 1) << "\" width=\"" << o.frame_px << "\" height=\""
          << o.band_px << "\" fill=\"" << viridis((f(t, m) - lo) / span) << "\"/>\n";
  svg << "<text x=\"" << left - 8 << "\" y=\"" << top + h / 2 << "\" text-anchor=\"end\" fill=\"#444\">mel</text>\n";
  return h;
}

// Ticks every 0.5 s under a strip of T frames at y.
void draw_time_axis(std::ostringstream& svg, std::size_t T, int left, int y, const SpectrogramOptions& o) {
  const double seconds = static_cast<double>(T) * o.frame_seconds;
  for (double s = 0; s <= seconds + 1e-9; s += 0.5) {
    const int x = left + static_cast<int>(std::lround(s / o.frame_seconds)) * o.frame_px;
    svg << "<line x1=\"" << x << "\" y1=\"" << y << "\" x2=\"" << x << "\" y2=\"" << y + 4
        << "\" stroke=\"#444\"/><text x=\"" << x << "\" y=\"" << y + 16 << "\" text-anchor=\"middle\">"
        << format_number(s) << "</text>\n";
  }
  svg << "<text x=\"" << left + static_cast<int>(T) * o.frame_px / 2 << "\" y=\"" << y + 32
      << "\" text-anchor=\"middle\" fill=\"#444\">time (s)</text>\n";
}

}  // namespace

std::string spectrogram_svg(const xt::xarray<double>& features, const SpectrogramOptions& o) {
  check_features("spectrogram_svg", features);
  const int T = static_cast<int>(features.shape()[0]);
  const int title_h = o.title.empty() ? 10 : 34, left = 50;
  const int spec_h = o.band_px * static_cast<int>(features.shape()[1]);
  const int bar_x = left + T * o.frame_px + 12;  // the colour bar: what a colour of the spectrogram is worth
  const int width = std::max(bar_x + 70, 9 * static_cast<int>(display_width(o.title)) + 20);
  std::ostringstream svg;
  begin_svg(svg, width, title_h + spec_h + 50, o.title);
  draw_spectrogram(svg, features, left, title_h, o);
  svg << colour_bar_svg(bar_x, title_h, spec_h, xt::amin(features)(), xt::amax(features)());
  draw_time_axis(svg, features.shape()[0], left, title_h + spec_h, o);
  svg << "</svg>\n";
  return svg.str();
}

std::string alignment_over_spectrogram_svg(const xt::xarray<double>& features, const xt::xarray<double>& weights,
                                           const std::vector<std::string>& row_labels, std::size_t frames_per_state,
                                           const SpectrogramOptions& o) {
  const char* op = "alignment_over_spectrogram_svg";
  check_features(op, features);
  if (weights.dimension() != 2 || weights.shape()[0] != row_labels.size())
    throw ShapeError(std::string(op) + ": expected weights [L, U] with L = " + std::to_string(row_labels.size()) +
                     " row labels, got shape " + shape_of(weights));
  const std::size_t T = features.shape()[0], L = weights.shape()[0], U = weights.shape()[1];
  if (frames_per_state == 0 || U * frames_per_state < T || (U - 1) * frames_per_state >= T)
    throw ShapeError(std::string(op) + ": " + std::to_string(U) + " states of " + std::to_string(frames_per_state) +
                     " frames do not cover the " + std::to_string(T) + " frames of the spectrogram");
  std::size_t longest = 1;
  for (const auto& l : row_labels) longest = std::max(longest, display_width(l));
  const int title_h = o.title.empty() ? 10 : 34, left = std::max(50, 20 + 8 * static_cast<int>(longest));
  const int spec_h = o.band_px * static_cast<int>(features.shape()[1]), gap = 8;
  const int att_top = title_h + spec_h + gap, att_h = o.row_px * static_cast<int>(L);
  // Two colour bars on the right: the spectrogram's values, and the attention weights (0 to 1).
  const int bar_x = left + static_cast<int>(T) * o.frame_px + 12;
  const int width = std::max(bar_x + 70, 9 * static_cast<int>(display_width(o.title)) + 20);
  std::ostringstream svg;
  begin_svg(svg, width, att_top + att_h + 50, o.title);
  draw_spectrogram(svg, features, left, title_h, o);
  svg << colour_bar_svg(bar_x, title_h, spec_h, xt::amin(features)(), xt::amax(features)())
      << colour_bar_svg(bar_x, att_top, att_h, 0.0, 1.0);
  for (std::size_t i = 0; i < L; ++i) {
    for (std::size_t u = 0; u < U; ++u) {
      const std::size_t first = u * frames_per_state, last = std::min(T, first + frames_per_state);
      svg << "<rect x=\"" << left + o.frame_px * static_cast<int>(first) << "\" y=\""
          << att_top + o.row_px * static_cast<int>(i) << "\" width=\"" << o.frame_px * static_cast<int>(last - first)
          << "\" height=\"" << o.row_px << "\" fill=\"" << viridis(weights(i, u)) << "\"><title>"
          << escape_xml(row_labels[i]) << " / state " << u << ": " << format_number(weights(i, u)) << "</title></rect>\n";
    }
    const std::string label = row_labels[i] == " " ? "\u2423" : row_labels[i];  // a space shows as ␣
    svg << "<text x=\"" << left - 6 << "\" y=\"" << att_top + o.row_px * static_cast<int>(i) + o.row_px - 3
        << "\" text-anchor=\"end\">" << escape_xml(label) << "</text>\n";
  }
  draw_time_axis(svg, T, left, att_top + att_h, o);
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace attn::viz
