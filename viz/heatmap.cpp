// Heatmaps in SVG and in a terminal (see heatmap.hpp).
#include "heatmap.hpp"

#include "svg.hpp"
#include "../core/errors.hpp"

#include <xtensor/xarray.hpp>

#include <algorithm>
#include <sstream>

namespace attn::viz {

namespace {

void check_labels(const xt::xarray<double>& values, const std::vector<std::string>& rows,
                  const std::vector<std::string>& cols, const char* op) {
  if (values.dimension() != 2)
    throw ShapeError(std::string(op) + ": expected a 2-d array [rows, cols], got shape " +
                     shape_str(Shape(values.shape().begin(), values.shape().end())));
  if (rows.size() != values.shape()[0] || cols.size() != values.shape()[1])
    throw ShapeError(std::string(op) + ": expected " + std::to_string(values.shape()[0]) + " row and " +
                     std::to_string(values.shape()[1]) + " column labels, got " + std::to_string(rows.size()) +
                     " and " + std::to_string(cols.size()));
}


// A label made of blanks (a space token) shows as "␣" so that its column is not unlabelled.
std::string visible(const std::string& label) {
  if (label.empty() || label.find_first_not_of(' ') != std::string::npos) return label;
  std::string out;
  for (std::size_t i = 0; i < label.size(); ++i) out += "\u2423";
  return out;
}

}  // namespace

std::string heatmap_svg(const xt::xarray<double>& values, const std::vector<std::string>& row_labels,
                        const std::vector<std::string>& col_labels, const HeatmapOptions& o) {
  check_labels(values, row_labels, col_labels, "heatmap_svg");
  const std::size_t rows = values.shape()[0], cols = values.shape()[1];
  std::vector<std::string> row_text, col_text;  // what is drawn: a space shows as "␣"
  for (const auto& l : row_labels) row_text.push_back(visible(l));
  for (const auto& l : col_labels) col_text.push_back(visible(l));
  std::size_t longest_row = 1, longest_col = 1;
  for (const auto& l : row_text) longest_row = std::max(longest_row, display_width(l));
  for (const auto& l : col_text) longest_col = std::max(longest_col, display_width(l));
  const bool rotate = longest_col > 2;  // characters stand upright above their column
  const int title_h = o.title.empty() ? 10 : 34;
  const int left = 20 + 8 * static_cast<int>(longest_row) + 10;
  const int top = title_h + (rotate ? 7 * static_cast<int>(longest_col) + 12 : 20);
  const int grid_w = o.cell * static_cast<int>(cols), grid_h = o.cell * static_cast<int>(rows);
  const int bar_x = left + grid_w + 20, bar_h = std::max(std::min(grid_h, 240), 100);
  const std::string axes = o.x_label + " (columns) / " + o.y_label + " (rows)";
  const int axes_w = 15 * static_cast<int>(display_width(axes)) / 2, title_w = 9 * static_cast<int>(display_width(o.title));
  const int width = std::max({bar_x + 60, left + axes_w / 2 + 20, axes_w + 20, title_w + 20});
  const int axes_y = top + std::max(grid_h, bar_h) + 22;  // below the grid and the colour bar
  const int height = axes_y + 16;

  std::ostringstream svg;
  begin_svg(svg, width, height, o.title);
  const double span = o.vmax > o.vmin ? o.vmax - o.vmin : 1.0;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const double v = values(r, c);
      const int x = left + o.cell * static_cast<int>(c), y = top + o.cell * static_cast<int>(r);
      svg << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << o.cell << "\" height=\"" << o.cell
          << "\" fill=\"" << viridis((v - o.vmin) / span) << "\"><title>" << escape_xml(row_text[r]) << " / "
          << escape_xml(col_text[c]) << ": " << format_number(v) << "</title></rect>\n";
      if (o.show_values)
        svg << "<text x=\"" << x + o.cell / 2 << "\" y=\"" << y + o.cell / 2 + 4
            << "\" text-anchor=\"middle\" font-size=\"9\" fill=\"" << ((v - o.vmin) / span > 0.6 ? "black" : "white")
            << "\">" << format_number(v) << "</text>\n";
    }
  for (std::size_t r = 0; r < rows; ++r)  // row labels, right-aligned left of the grid
    svg << "<text x=\"" << left - 6 << "\" y=\"" << top + o.cell * static_cast<int>(r) + o.cell / 2 + 4
        << "\" text-anchor=\"end\">" << escape_xml(row_text[r]) << "</text>\n";
  for (std::size_t c = 0; c < cols; ++c) {  // column labels above the grid, rotated when long
    const int x = left + o.cell * static_cast<int>(c) + o.cell / 2;
    if (rotate)
      svg << "<text x=\"" << x + 4 << "\" y=\"" << top - 6 << "\" transform=\"rotate(-60 " << x + 4 << " " << top - 6
          << ")\">" << escape_xml(col_text[c]) << "</text>\n";
    else
      svg << "<text x=\"" << x << "\" y=\"" << top - 6 << "\" text-anchor=\"middle\">" << escape_xml(col_text[c])
          << "</text>\n";
  }
  const int axes_x = std::max(left + grid_w / 2, axes_w / 2 + 10);  // centred under the grid, inside the picture
  svg << "<text x=\"" << axes_x << "\" y=\"" << axes_y << "\" text-anchor=\"middle\" fill=\"#444\">"
      << escape_xml(axes) << "</text>\n"
      << colour_bar_svg(bar_x, top, bar_h, o.vmin, o.vmax) << "</svg>\n";
  return svg.str();
}

std::string terminal_heatmap(const xt::xarray<double>& values, const std::vector<std::string>& row_labels,
                             const std::vector<std::string>& col_labels, std::size_t max_width) {
  check_labels(values, row_labels, col_labels, "terminal_heatmap");
  static const char* shades[] = {" ", "\u2591", "\u2592", "\u2593", "\u2588"};  // " ░▒▓█"
  std::size_t label_w = 1, longest = 1;
  for (const auto& l : row_labels) label_w = std::max(label_w, display_width(l));
  std::vector<std::string> cols;
  for (const auto& l : col_labels) {
    cols.push_back(visible(l));
    longest = std::max(longest, display_width(cols.back()));
  }
  // Each column is as wide as its word plus a space; if that is too wide for max_width,
  // words longer than `wrap` code points are wrapped over several header lines.
  auto widths = [&](std::size_t wrap) {
    std::vector<std::size_t> w;
    for (const auto& l : cols) w.push_back(std::max<std::size_t>(std::min(display_width(l), wrap), 1) + 1);
    return w;
  };
  std::size_t wrap = longest;
  auto total = [&](std::size_t wrap) {
    std::size_t t = label_w + 2;
    for (std::size_t w : widths(wrap)) t += w;
    return t;
  };
  while (wrap > 2 && total(wrap) > max_width) --wrap;
  const std::vector<std::size_t> cell_w = widths(wrap);
  // The header lines: piece k of every word (pieces of `wrap` code points, never inside a UTF-8 character).
  std::vector<std::vector<std::string>> pieces(cols.size());
  std::size_t header_lines = 1;
  for (std::size_t c = 0; c < cols.size(); ++c) {
    const std::string& l = cols[c];
    for (std::size_t begin = 0; begin < l.size();) {
      std::size_t end = begin;
      for (std::size_t n = 0; end < l.size() && n < wrap; ++n)
        for (++end; end < l.size() && (static_cast<unsigned char>(l[end]) & 0xC0) == 0x80;) ++end;
      pieces[c].push_back(l.substr(begin, end - begin));
      begin = end;
    }
    header_lines = std::max(header_lines, pieces[c].size());
  }
  auto pad = [](const std::string& s, std::size_t w, bool right) {
    const std::size_t n = display_width(s);
    std::string fill(w > n ? w - n : 0, ' ');
    return right ? fill + s : s + fill;
  };
  std::ostringstream os;
  for (std::size_t k = 0; k < header_lines; ++k) {
    os << std::string(label_w, ' ') << " \u2502";
    for (std::size_t c = 0; c < cols.size(); ++c) os << pad(k < pieces[c].size() ? pieces[c][k] : "", cell_w[c], false);
    os << "\n";
  }
  os << std::string(label_w, ' ') << " \u253c";
  for (std::size_t w : cell_w)
    for (std::size_t k = 0; k < w; ++k) os << "\u2500";
  os << "\n";
  for (std::size_t r = 0; r < row_labels.size(); ++r) {
    os << pad(row_labels[r], label_w, true) << " \u2502";
    for (std::size_t c = 0; c < cols.size(); ++c) {
      const double v = std::clamp(values(r, c), 0.0, 1.0);
      const int level = std::isfinite(values(r, c)) ? std::min(4, static_cast<int>(std::lround(v * 4))) : 0;
      for (std::size_t k = 0; k + 1 < cell_w[c]; ++k) os << shades[level];
      os << " ";
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace attn::viz
