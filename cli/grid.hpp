// Chapter 4's grid captioner (Show, Attend and Tell) on the command line.
// It reads a 3x3 grid of feature vectors, not a sentence, so it is not a Seq2Seq:
// it trains with the loop of train/epoch_trainer.hpp (train/grid_train.hpp), and has its own evaluation
// and decoding.
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

// Trains into the run folder `out` (cli/run_dir.hpp: config.json, vocab.json, model.npz and
// model.trainer.npz, every --checkpoint-every steps and at the end), or resumes the run there
// (start.resumed), printing progress and the evaluation. Everything is checked before anything
// is written; a new `out` must be new or empty unless start.overwrite. The loop is
// models::EpochTrainer's with the captioner's family (train/grid_train.hpp), in steps.
struct RunStart;
void train_grid_run(nlohmann::json config, const std::string& out, const RunStart& start);

// Prints the evaluation of a grid checkpoint on its task's held-out grids; with `predictions_file`, also
// writes each held-out grid's gold caption<TAB>greedy caption to it.
void eval_grid(Run& run, const std::string& predictions_file = "", bool overwrite = false, const std::string& dir = "");

struct GridCaption {
  std::string text;                // "red square top left"
  std::vector<std::string> words;  // the generated words, <eos> included
  xt::xarray<double> attention;    // [T, 3, 3]: where the model looked for each word
};
// Renders the scene's grid (read by data::parse_scene; noise from the run's seed) and captions it greedily.
GridCaption caption_scene(Run& run, const std::string& scene);

}  // namespace attn::cli
