// The top level and the "train" section of a run's config.json, checked key by key
// (the "model" section is checked by models::make_model / make_grid_model, the
// "task" section by make_task), so that every command reads a config the same way:
//   {"format": "attn-checkpoint", "model": {...}, "task": {...}, "seed": 1, "dtype": "float32",
//    "train": {"steps": 2000, "batch_size": 64, "lr": 0.003, "clip_norm": 1.0, "label_smoothing": 0.0,
//              "eval_every": 500, "checkpoint_every": 500, "warmup": 400,    (warmup: only when set)
//              "copy_objective": "extended"}}   (a copying model's: log p over each batch's extended vocabulary)
// A document classifier (cli/documents.hpp), Listen, Attend and Spell (cli/speech.hpp) and a language model
// (cli/language_model.hpp) train in epochs:
//    "train": {"epochs": 12, "batch_size": 32, "lr": 0.002, "clip_norm": 5.0}
// A las, document classifier or grid run stopped by Ctrl-C before those runs resumed (they kept no trainer
// state) recorded the step it reached: "stopped_at_step": 130. Such a config still loads (eval, translate,
// classify); a run stopped now commits a resumable checkpoint instead and records no stop.
#pragma once

#include "../train/epoch_trainer.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace attn::cli {

struct TrainSettings {
  std::uint64_t seed = 1;
  std::string dtype = "float32";  // or "float64"
  std::uint64_t epochs = 0;       // of a model that trains in epochs (it has no "steps")
  std::uint64_t steps = 0, batch_size = 0, eval_every = 0, checkpoint_every = 0;
  std::uint64_t warmup = 0;       // steps of the inverse-sqrt warm-up schedule (0: constant lr)
  double lr = 0, clip_norm = 0, label_smoothing = 0;
  double doubly_stochastic = 0;   // the grid captioner's attention penalty
  // "extended" for a copying model (conv-copy, copynet with copy = true) trained on log p over each batch's extended
  // vocabulary (models::Trainer); empty when the config does not say, as for every other model.
  std::string copy_objective;
};

// The models whose runs count epochs, not steps (the registry's speech, documents and language model
// families: las, han, flat-attention, bag-of-words, pointer-sentinel, transformer-lm).
bool trains_in_epochs(const std::string& model);

// `where` names the file in errors: "runs/a/checkpoint/config.json".
TrainSettings read_train_settings(const nlohmann::json& config, const std::string& where);

// The settings models::EpochTrainer takes from them: epochs (or steps, when epochs is 0), lr, clip_norm, seed.
models::EpochTrainerOptions epoch_trainer_options(const TrainSettings& s);

}  // namespace attn::cli
