#include "plot.hpp"

#include "../core/errors.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace attn::viz {

namespace {

const char* kSeriesColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"};

// Tick positions at 1, 2 or 5 times a power of ten, about `count` of them.
std::vector<double> nice_ticks(double lo, double hi, int count = 5) {
  if (hi <= lo) hi = lo + 1;
  const double raw = (hi - lo) / count;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  const double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
  std::vector<double> ticks;
  // From the multiple of `step` at or below lo to the one at or above hi: the axes end on a labelled tick.
  const double first = std::floor(lo / step + 1e-9) * step, last = std::ceil(hi / step - 1e-9) * step;
  for (double v = first; v <= last + step * 1e-9; v += step)
    ticks.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  return ticks;
}

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

std::size_t display_width(const std::string& s) {  // UTF-8 code points, not bytes
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// A label made of blanks (a space token) shows as "␣" so that its column is not unlabelled.
std::string visible(const std::string& label) {
  if (label.empty() || label.find_first_not_of(' ') != std::string::npos) return label;
  std::string out;
  for (std::size_t i = 0; i < label.size(); ++i) out += "\u2423";
  return out;
}

}  // namespace

std::string escape_xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

void begin_svg(std::ostream& svg, int width, int height, const std::string& title, int title_y) {
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (!title.empty())
    svg << "<text x=\"" << width / 2 << "\" y=\"" << title_y << "\" text-anchor=\"middle\" font-size=\"15\">"
        << escape_xml(title) << "</text>\n";
}

std::string viridis(double t) {  // interpolated between 6 stops
  static const double stops[6][3] = {{68, 1, 84},    {65, 68, 135},  {42, 120, 142},
                                     {34, 168, 132}, {122, 209, 81}, {253, 231, 37}};
  if (!(t >= 0)) t = 0;  // also maps NaN to the low end
  t = std::min(t, 1.0) * 5;
  const int i = std::min(static_cast<int>(t), 4);
  const double f = t - i;
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(stops[i][0] + f * (stops[i + 1][0] - stops[i][0])),
                static_cast<int>(stops[i][1] + f * (stops[i + 1][1] - stops[i][1])),
                static_cast<int>(stops[i][2] + f * (stops[i + 1][2] - stops[i][2])));
  return buf;
}

std::string format_number(double v) {
  std::ostringstream os;
  os.precision(3);
  os << v;
  return os.str();
}

std::string colour_bar_svg(int x, int y, int height, double vmin, double vmax) {
  std::ostringstream svg;  // a gradient through the 6 stops of viridis, vmax at the top
  svg << "<defs><linearGradient id=\"attn-viridis\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
  for (int i = 0; i <= 5; ++i) svg << "<stop offset=\"" << i / 5.0 << "\" stop-color=\"" << viridis(i / 5.0) << "\"/>";
  svg << "</linearGradient></defs>\n<rect x=\"" << x << "\" y=\"" << y << "\" width=\"14\" height=\"" << height
      << "\" fill=\"url(#attn-viridis)\" stroke=\"#999\" stroke-width=\"0.5\"/>\n";
  for (int i = 0; i <= 4; ++i) {  // ticks at vmin, 1/4, ..., vmax
    const int ty = y + height - i * height / 4;
    svg << "<line x1=\"" << x + 14 << "\" y1=\"" << ty << "\" x2=\"" << x + 18 << "\" y2=\"" << ty
        << "\" stroke=\"#333\"/><text x=\"" << x + 21 << "\" y=\"" << ty + 4 << "\" font-size=\"11\">"
        << format_number(vmin + i * (vmax - vmin) / 4) << "</text>\n";
  }
  return svg.str();
}

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

std::string line_plot_svg(const std::vector<Series>& series, const LinePlotOptions& o) {
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (const auto& s : series) {
    if (s.x.size() != s.y.size())
      throw ShapeError("line_plot_svg: series '" + s.name + "' has " + std::to_string(s.x.size()) + " x values and " +
                       std::to_string(s.y.size()) + " y values");
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      xmin = std::min(xmin, s.x[i]), xmax = std::max(xmax, s.x[i]);
      ymin = std::min(ymin, s.y[i]), ymax = std::max(ymax, s.y[i]);
    }
  }
  if (xmin > xmax) xmin = 0, xmax = 1, ymin = 0, ymax = 1;  // nothing to draw: empty axes
  if (o.y_from_zero) ymin = std::min(ymin, 0.0);
  if (xmax == xmin) xmax = xmin + 1;
  if (ymax == ymin) ymax = ymin + 1;
  const auto xt = nice_ticks(xmin, xmax), yt = nice_ticks(ymin, ymax);
  xmin = std::min(xmin, xt.front()), xmax = std::max(xmax, xt.back());
  ymin = std::min(ymin, yt.front()), ymax = std::max(ymax, yt.back());

  const int left = 64, right = 20, top = o.title.empty() ? 16 : 36, bottom = 50;
  const int pw = o.width - left - right, ph = o.height - top - bottom;
  auto px = [&](double x) { return left + (x - xmin) / (xmax - xmin) * pw; };
  auto py = [&](double y) { return top + ph - (y - ymin) / (ymax - ymin) * ph; };

  std::ostringstream svg;
  begin_svg(svg, o.width, o.height, o.title);
  for (double t : xt)
    svg << "<line x1=\"" << px(t) << "\" y1=\"" << top << "\" x2=\"" << px(t) << "\" y2=\"" << top + ph
        << "\" stroke=\"#e5e5e5\"/>\n<text x=\"" << px(t) << "\" y=\"" << top + ph + 16
        << "\" text-anchor=\"middle\">" << format_number(t) << "</text>\n";
  for (double t : yt)
    svg << "<line x1=\"" << left << "\" y1=\"" << py(t) << "\" x2=\"" << left + pw << "\" y2=\"" << py(t)
        << "\" stroke=\"#e5e5e5\"/>\n<text x=\"" << left - 6 << "\" y=\"" << py(t) + 4
        << "\" text-anchor=\"end\">" << format_number(t) << "</text>\n";
  svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << pw << "\" height=\"" << ph
      << "\" fill=\"none\" stroke=\"#333\"/>\n"
      << "<text x=\"" << left + pw / 2 << "\" y=\"" << o.height - 10 << "\" text-anchor=\"middle\">"
      << escape_xml(o.x_label) << "</text>\n"
      << "<text x=\"16\" y=\"" << top + ph / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 16 "
      << top + ph / 2 << ")\">" << escape_xml(o.y_label) << "</text>\n";
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& s = series[k];
    const char* colour = kSeriesColours[k % 7];
    svg << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\" points=\"";
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i])) svg << px(s.x[i]) << "," << py(s.y[i]) << " ";
    svg << "\"/>\n";
    if (o.markers)
      for (std::size_t i = 0; i < s.x.size(); ++i)
        if (std::isfinite(s.x[i]) && std::isfinite(s.y[i]))
          svg << "<circle cx=\"" << px(s.x[i]) << "\" cy=\"" << py(s.y[i]) << "\" r=\"3\" fill=\"" << colour
              << "\"/>\n";
  }
  // The legend, top right inside the plot, in a box drawn over the lines so none runs through its text.
  std::size_t longest_name = 1;
  for (const auto& s : series) longest_name = std::max(longest_name, display_width(s.name));
  const int legend_w = 36 + 7 * static_cast<int>(longest_name), legend_x = left + pw - legend_w - 6;
  if (!series.empty())
    svg << "<rect x=\"" << legend_x << "\" y=\"" << top + 4 << "\" width=\"" << legend_w << "\" height=\""
        << 16 * series.size() + 6 << "\" fill=\"white\" fill-opacity=\"0.85\" stroke=\"#ccc\"/>\n";
  for (std::size_t k = 0; k < series.size(); ++k) {
    const int ly = top + 18 + 16 * static_cast<int>(k);
    svg << "<line x1=\"" << legend_x + 6 << "\" y1=\"" << ly - 4 << "\" x2=\"" << legend_x + 26 << "\" y2=\""
        << ly - 4 << "\" stroke=\"" << kSeriesColours[k % 7] << "\" stroke-width=\"2\"/>\n<text x=\""
        << legend_x + 32 << "\" y=\"" << ly << "\">" << escape_xml(series[k].name) << "</text>\n";
  }
  svg << "</svg>\n";
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

void save_text(const std::string& path, const std::string& text) {
  static std::atomic<unsigned> counter{0};  // unique per process and call: two writers never share a temporary
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw IOError("save_text: cannot write '" + path + "' (does its folder exist?)");
    out << text;
    if (!out) throw IOError("save_text: writing '" + path + "' failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw IOError("save_text: cannot rename onto '" + path + "'");
  }
}

}  // namespace attn::viz
