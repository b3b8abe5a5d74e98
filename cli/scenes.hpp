// Show, Attend and Tell on rendered scenes on the command line: a CNN trained from scratch on
// pictures of coloured shapes (data/scenes.hpp), captioned by an LSTM that attends over the
// CNN's grid (models/show_attend_tell.hpp).
//
//   attn train --model show-attend-tell --task shapes --out runs/sat        # 5000 scenes, 10 epochs
//   attn train --model show-attend-tell --task shapes --set attention=hard --out runs/sat-hard
//   attn eval --checkpoint runs/sat [--beam 3]        # exact match, BLEU, the attention's share in the masks
//   attn caption --checkpoint runs/sat picture.png [--show-attention] [--out maps.svg]
//   attn caption --checkpoint runs/sat --test 7       # the run's 7th test scene (no PNG needed)
//
// The task {"name": "shapes", "n_train": 5000, "n_valid": 500, "n_test": 500, "image_size": 64,
// "min_objects": 1, "max_objects": 4} is drawn again from the run's seed whenever it is needed (the
// renderer gives the same bytes on every machine). Training runs in epochs (Adam, clipping, the
// paper's doubly stochastic penalty, REINFORCE for hard attention), keeping the epoch with the best
// validation BLEU (greedy captions); a checkpoint is committed after every epoch and where Ctrl-C
// stops, and --resume continues the run bit for bit (--epochs: a new total).
//
// The model config holds the objective's weights beside the sizes, as the paper defines them with the
// model: {"model": "show-attend-tell", "conv_channels": 16, "conv_blocks": 3, "embed_dim": 32,
// "decoder_dim": 128, "attention_dim": 64, "attention": "soft", "gate": true, "soft_probability": 0.5,
// "doubly_stochastic": 1.0, "entropy": 0.01, "baseline_decay": 0.9}: block i has conv_channels * 2^i
// channels, and each halves the picture (3 blocks: 64 x 64 pixels -> an 8 x 8 grid);
// soft_probability is hard attention's per-image share read soft (Xu et al.'s 0.5).
#pragma once

#include "run_dir.hpp"

#include "../data/scene_captions.hpp"
#include "../models/show_attend_tell.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace attn::cli {

nlohmann::json default_scene_model_config();
nlohmann::json default_scene_task_config();

// The model `model` describes (unknown or mistyped fields: ValueError naming `where` and the field), for
// pictures of the task's size (a picture too small for its blocks is refused by name).
std::unique_ptr<models::ShowAttendTell> make_scene_model(const nlohmann::json& model, const nlohmann::json& task,
                                                         const std::string& where);

// The task's three splits drawn from `seed` (ValueError naming `where` and a bad field); with
// `test_only`, the training and validation splits are left empty.
data::SceneCaptions scene_splits(const nlohmann::json& task, std::uint64_t seed, const std::string& where,
                                 bool test_only = false);

// Trains into `out` (new or empty unless start.overwrite), or resumes the run there (start.resumed);
// everything is checked first.
struct RunStart;
void train_scenes_run(nlohmann::json config, const std::string& out, const RunStart& start);

// Exact match, BLEU and the attention's share inside the objects' masks on the test scenes, greedy or
// with beam search; with `predictions`, also reference<TAB>caption lines for that file.
void eval_scenes(Run& run, std::size_t beam, const std::string& predictions_file, bool overwrite,
                 const std::string& dir);

// A command that does not apply to a run of show-attend-tell (translate, heatmap, classify): a ValueError
// naming the command and pointing to attn caption.
void refuse_image_captioner(const Run& run, const std::string& command, const std::string& dir);

// `attn caption`: pictures (PNG files, or the run's test scenes) captioned, with each word's map.
void add_caption_command(CLI::App& app);

}  // namespace attn::cli
