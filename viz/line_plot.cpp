// Line plots in SVG (see line_plot.hpp).
#include "line_plot.hpp"

#include "svg.hpp"
#include "../core/errors.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace attn::viz {

namespace {

const char* kSeriesColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"};

// An axis label: whole numbers in full up to a million (a step count reads "1000", not "1e+03"),
// anything else with 3 significant digits.
std::string tick_label(double v) {
  if (v == std::round(v) && std::abs(v) < 1e6) return std::to_string(static_cast<long long>(v));
  return format_number(v);
}

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

}  // namespace

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
        << "\" text-anchor=\"middle\">" << tick_label(t) << "</text>\n";
  for (double t : yt)
    svg << "<line x1=\"" << left << "\" y1=\"" << py(t) << "\" x2=\"" << left + pw << "\" y2=\"" << py(t)
        << "\" stroke=\"#e5e5e5\"/>\n<text x=\"" << left - 6 << "\" y=\"" << py(t) + 4
        << "\" text-anchor=\"end\">" << tick_label(t) << "</text>\n";
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

}  // namespace attn::viz
