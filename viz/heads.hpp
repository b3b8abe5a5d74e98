// Every head of one attention layer as a grid of small heatmaps (the Transformer's
// `attn heatmap --layer L` without --head), each titled "head h".
//
//   std::string svg = attn::viz::heads_svg(weights, rows, cols);   // weights [H, T, S]
#pragma once

#include "heatmap.hpp"

#include <xtensor/xarray.hpp>

#include <string>
#include <vector>

namespace attn::viz {

// weights [H, rows, cols]: H heatmaps with the same labels and colour scale, up to
// `per_row` side by side, under options.title.
std::string heads_svg(const xt::xarray<double>& weights, const std::vector<std::string>& row_labels,
                      const std::vector<std::string>& col_labels, const HeatmapOptions& options = {},
                      std::size_t per_row = 4);

}  // namespace attn::viz
