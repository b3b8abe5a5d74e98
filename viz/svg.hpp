// The SVG pieces every plot is drawn with: the document, escaping, numbers,
// the viridis colour scale and its colour bar, and atomic saving.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>

namespace attn::viz {

// How many characters a label takes on screen: UTF-8 code points, not bytes.
std::size_t display_width(const std::string& text);

// A vertical colour bar (SVG elements, not a document) at (x, y): vmax at the top, ticks at quarters.
std::string colour_bar_svg(int x, int y, int height, double vmin, double vmax);

// The viridis colour ("#rrggbb") at t in [0, 1] (dark blue to yellow).
std::string viridis(double t);
// Text safe inside SVG/XML: "<bos>" -> "&lt;bos&gt;".
std::string escape_xml(const std::string& text);

// Starts an SVG document of width x height on a white background, with the
// title (if any) centred at the top, its baseline at title_y. Every plot opens so.
void begin_svg(std::ostream& svg, int width, int height, const std::string& title, int title_y = 22);

// Writes text to a file atomically enough for plots; throws attn::IOError on failure.
void save_text(const std::string& path, const std::string& text);

// "1.5", "0.25", "1e-05": short tick labels.
std::string format_number(double v);

}  // namespace attn::viz
