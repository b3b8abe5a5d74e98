// Plots as SVG text and heatmaps as terminal text: shared by the `attn`
// command line and the notebooks' rich display. No plotting library needed.
//
//   std::string svg = attn::viz::heatmap_svg(weights, {"2", "0", "2", "1"}, {"<bos>", "2"});
//   attn::viz::save_text("attention.svg", svg);
//   std::cout << attn::viz::terminal_heatmap(weights, rows, cols);
#pragma once

#include "../core/config.hpp"

#include <iosfwd>
#include <string>
#include <vector>

namespace attn::viz {

struct HeatmapOptions {
  std::string title;
  std::string x_label = "source";   // columns
  std::string y_label = "output";   // rows
  double vmin = 0.0;                // colour scale range; attention weights lie in [0, 1]
  double vmax = 1.0;
  int cell = 28;                    // pixels per cell
  bool show_values = false;         // print each value inside its cell
};

// rows x cols values as coloured cells, labels on both axes and a colour bar.
std::string heatmap_svg(const xt::xarray<double>& values, const std::vector<std::string>& row_labels,
                        const std::vector<std::string>& col_labels, const HeatmapOptions& options = {});

struct Series {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;
};

struct LinePlotOptions {
  std::string title;
  std::string x_label;
  std::string y_label;
  int width = 640;
  int height = 400;
  bool y_from_zero = false;  // start the y axis at 0 (accuracies)
  bool markers = false;      // draw a dot at every point
};

// One or more series as lines, with axes, ticks, labels and a legend.
std::string line_plot_svg(const std::vector<Series>& series, const LinePlotOptions& options = {});

// The heatmap for a terminal: one row of shaded cells per output token,
// " ░▒▓█" from 0 to 1, the source tokens as column headers, whole: each column is
// as wide as its word, and when that would pass max_width characters, long words
// are wrapped over several header lines instead.
std::string terminal_heatmap(const xt::xarray<double>& values, const std::vector<std::string>& row_labels,
                             const std::vector<std::string>& col_labels, std::size_t max_width = 100);

// Attention over a grid (chapter 4), one small grid per generated word:
// weights [T, rows, cols], words the T words. Same colour scale as heatmap_svg.
std::string attention_grids_svg(const xt::xarray<double>& weights, const std::vector<std::string>& words,
                                const HeatmapOptions& options = {});
// The same for a terminal: the grids side by side, each word under its grid.
std::string terminal_grids(const xt::xarray<double>& weights, const std::vector<std::string>& words);

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
