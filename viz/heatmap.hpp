// Attention weights as a heatmap: an SVG picture, or shaded text for a terminal.
//
//   std::string svg = attn::viz::heatmap_svg(weights, {"2", "0", "2", "1"}, {"<bos>", "2"});
//   std::cout << attn::viz::terminal_heatmap(weights, rows, cols);
#pragma once

#include "../core/config.hpp"

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

// The heatmap for a terminal: one row of shaded cells per output token,
// " ░▒▓█" from 0 to 1, the source tokens as column headers, whole: each column is
// as wide as its word, and when that would pass max_width characters, long words
// are wrapped over several header lines instead.
std::string terminal_heatmap(const xt::xarray<double>& values, const std::vector<std::string>& row_labels,
                             const std::vector<std::string>& col_labels, std::size_t max_width = 100);

}  // namespace attn::viz
