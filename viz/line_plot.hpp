// Curves (loss, accuracy, learning rate) as an SVG line plot.
#pragma once

#include "../core/config.hpp"

#include <string>
#include <vector>

namespace attn::viz {

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

}  // namespace attn::viz
