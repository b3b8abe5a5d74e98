// An attention explorer for the notebook, as bertviz is for Python: a head view (one layer, the
// query tokens and the key tokens in two columns, a line per weight, a colour per head, heads
// toggled, hover a token to keep only its lines and read its weights), a model view (every layer
// by every head as small heatmaps, click one to open it), and the decoding of one output step
// by step (a slider: the word written, the attention row that chose it, the beam's hypotheses,
// a copy gate, an expected alignment position).
//
//   viz::Explorer e;
//   e.title = "the cat sat -> le chat ...";
//   e.attentions.push_back({"cross", target_tokens, source_tokens, weights});  // [layers, heads, T, S]
//   xcpp::display(e);                          // viz/display.hpp: one self-contained HTML output
//   std::string page = viz::explorer_html(e);  // the same fragment, e.g. for `attn heatmap --html`
//
// The fragment is the whole program: its script (viz/explorer/explorer.js) and style
// (explorer.css) are inside it and nothing is fetched, so it works offline and in an exported
// HTML file. Each view has its own random id and touches only its own elements, so a notebook
// may show many. Where scripts do not run (GitHub's renderer, an untrusted notebook), a static
// picture shows instead: every head of the first attention's last layer (viz/heads.hpp), as an
// <img> of a data-URI SVG, which Jupyter's HTML sanitiser keeps (an inline <svg> it strips to text).
// Weights are written rounded to 4 significant digits, once for every view that draws them.
#pragma once

#include "../core/config.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attn::viz {

// One kind of attention of a model: every layer and head.
struct ExplorerAttention {
  std::string name;                  // "cross", "encoder self", "decoder self", "attention"
  std::vector<std::string> rows;     // the queries (an output's tokens, or the source's for self-attention)
  std::vector<std::string> cols;     // the keys
  xt::xarray<double> weights;        // [layers, heads, rows, cols]; a recurrent model: [1, 1, T, S]
  // The rows are what a decoder reads (<bos>, then the words written): the row of word w is the
  // step that read w and wrote the next word. The views say so (viz::explore sets it).
  bool rows_read = false;
};

// One output step of a decoding.
struct ExplorerStep {
  std::string token;                 // the word written
  std::vector<double> row;           // the attention that chose it, over Explorer::source
  std::vector<std::pair<std::string, double>> beam;  // the hypotheses kept, and their scores (beam search)
  std::optional<double> gate;        // a copy head's p_gen
  std::optional<double> path;        // the monotonic model's expected alignment position
  std::optional<std::size_t> continued;  // the beam entry the output continues (it need not rank first)
  std::optional<double> probability;     // the written word's probability given the prefix before it
  std::vector<std::pair<std::string, double>> alternatives;  // other words kept after that prefix, and their probabilities
};

struct Explorer {
  std::string title;
  std::vector<ExplorerAttention> attentions;  // head and model views (when not empty)
  std::vector<ExplorerStep> steps;            // the decoding view (when not empty)
  std::vector<std::string> source;            // the columns of the steps' rows
  std::string steps_label;                    // what the steps' rows are ("the last layer's cross-attention, ...")
};

// The HTML fragment of one view. ShapeError naming the attention unless its weights are
// [layers, heads, rows, cols] with the labels' lengths (at least one of each), and unless every
// step's row has one weight per source token; ValueError for an explorer with nothing to show.
std::string explorer_html(const Explorer& explorer);

}  // namespace attn::viz
