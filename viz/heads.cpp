#include "heads.hpp"

#include "svg.hpp"
#include "../core/errors.hpp"

#include <xtensor/xview.hpp>

#include <algorithm>
#include <regex>
#include <sstream>

namespace attn::viz {

std::string heads_svg(const xt::xarray<double>& weights, const std::vector<std::string>& row_labels,
                      const std::vector<std::string>& col_labels, const HeatmapOptions& options,
                      std::size_t per_row) {
  if (weights.dimension() != 3 || weights.shape()[0] == 0)
    throw ShapeError("heads_svg: expected weights [H, rows, cols] with H >= 1, got " +
                     std::to_string(weights.dimension()) + " dimensions");
  if (per_row == 0) throw ValueError("heads_svg: per_row must be at least 1");
  const std::size_t H = weights.shape()[0];
  // Each head is a whole heatmap_svg document, nested at its place (an <svg> inside an <svg> is valid SVG).
  std::vector<std::string> panels;
  int panel_w = 0, panel_h = 0;
  const std::regex size_re("width=\"([0-9]+)\" height=\"([0-9]+)\"");
  for (std::size_t h = 0; h < H; ++h) {
    HeatmapOptions o = options;
    o.title = "head " + std::to_string(h);
    xt::xarray<double> one = xt::view(weights, h, xt::all(), xt::all());  // [rows, cols]
    panels.push_back(heatmap_svg(one, row_labels, col_labels, o));
    std::smatch m;
    std::regex_search(panels.back(), m, size_re);
    panel_w = std::max(panel_w, std::stoi(m[1]));
    panel_h = std::max(panel_h, std::stoi(m[2]));
  }
  const std::size_t cols = std::min(per_row, H), rows = (H + cols - 1) / cols;
  const int top = options.title.empty() ? 0 : 34;  // room for the title above the grid
  std::ostringstream svg;
  begin_svg(svg, static_cast<int>(cols) * panel_w, top + static_cast<int>(rows) * panel_h, options.title);
  for (std::size_t h = 0; h < H; ++h) {
    const std::string& p = panels[h];
    const std::size_t open = p.find(' ');  // after "<svg": keep the panel's own attributes
    svg << "<svg x=\"" << (h % cols) * panel_w << "\" y=\"" << top + static_cast<int>(h / cols) * panel_h << "\""
        << p.substr(open);
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace attn::viz
