// Chapter 4's grid captioner (Show, Attend and Tell) on the command line.
// It reads a 3x3 grid of feature vectors, not a sentence, so it is not a Seq2Seq:
// it has its own training loop (models/grid_train), evaluation and decoding.
//
//   attn train --model grid --task grid --out runs/grid
//   attn eval --checkpoint runs/grid
//   attn translate --checkpoint runs/grid --show-attention "red square top left , blue circle center"
//   attn heatmap --checkpoint runs/grid "blue triangle bottom right" --out grid.svg
//
// translate and heatmap take a SCENE written as a caption: the grid it describes
// is rendered (features with noise), then the model captions it, looking at one
// part of the grid per word.
#pragma once

#include "grid_config.hpp"
#include "run_dir.hpp"

#include "../decode/grid_decode.hpp"

#include <string>
#include <vector>

namespace attn::cli {

// Trains into the run folder `out` (cli/run_dir.hpp: a checkpoint of config.json, vocab.json
// and model.npz, written at the end), printing progress and the evaluation. Everything is
// checked before anything is written; `out` must be new or empty unless `overwrite`.
// No --resume: models/grid_train has no resumable trainer (the run is short).
void train_grid_run(const nlohmann::json& config, const std::string& out, bool overwrite);

// Prints the evaluation of a grid checkpoint on its task's held-out grids.
void eval_grid(Run& run);

struct GridCaption {
  std::string text;                // "red square top left"
  std::vector<std::string> words;  // the generated words, <eos> included
  xt::xarray<double> attention;    // [T, 3, 3]: where the model looked for each word
};
// Renders the scene's grid (read by data::parse_scene; noise from the run's seed) and captions it greedily.
GridCaption caption_scene(Run& run, const std::string& scene);

}  // namespace attn::cli
