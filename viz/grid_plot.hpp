// Attention over a feature grid (chapter 4), as SVG or terminal text.
#pragma once

#include "heatmap.hpp"

#include <string>
#include <vector>

namespace attn::viz {

// Attention over a grid (chapter 4), one small grid per generated word:
// weights [T, rows, cols], words the T words. Same colour scale as heatmap_svg.
std::string attention_grids_svg(const xt::xarray<double>& weights, const std::vector<std::string>& words,
                                const HeatmapOptions& options = {});
// The same for a terminal: the grids side by side, each word under its grid.
std::string terminal_grids(const xt::xarray<double>& weights, const std::vector<std::string>& words);

}  // namespace attn::viz
