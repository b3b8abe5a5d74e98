// Every plot of attn::viz in one header: SVG text and terminal text, shared
// by the `attn` command line and the notebooks' rich display. No plotting
// library needed.
//
//   std::string svg = attn::viz::heatmap_svg(weights, {"2", "0", "2", "1"}, {"<bos>", "2"});
//   attn::viz::save_text("attention.svg", svg);
//   std::cout << attn::viz::terminal_heatmap(weights, rows, cols);
#pragma once

#include "attention_text.hpp"
#include "explorer.hpp"
#include "grid_plot.hpp"
#include "heads.hpp"
#include "heatmap.hpp"
#include "line_plot.hpp"
#include "spectrogram.hpp"
#include "svg.hpp"
