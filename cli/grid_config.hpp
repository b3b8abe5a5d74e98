// How a grid run (chapter 4 on the command line) is configured: the default
// model and task configs, the world and split a task describes, and the model
// a config describes. Unknown or mistyped fields are ValueErrors naming them.
#pragma once

#include "../data/grid.hpp"
#include "../models/grid_captioner.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace attn::cli {

// {"model": "grid", "embed_dim": 32, "encoder_dim": 0, "decoder_dim": 64, "attention_dim": 64,
//  "attention": "soft" | "hard" | "hard-at-inference", "soft_probability": 0.0}
nlohmann::json default_grid_model_config();
// {"name": "grid", "feature_dim": 32, "noise": 0.1, "min_objects": 1, "max_objects": 3,
//  "embedding_seed": 7, "n_train": 2000, "n_test": 200}
nlohmann::json default_grid_task_config();

// The captioner described by `model` (unknown or mistyped fields: ValueError naming them).
std::unique_ptr<models::GridCaptioner> make_grid_model(const nlohmann::json& model, std::size_t vocab,
                                                       const nlohmann::json& task,
                                                       const std::string& task_where = "task 'grid'");

// The grid world of a task config, and its train/test split drawn with `seed`. `where` says
// where the task's keys come from, for messages: "runs/g/checkpoint/config.json: task", or the flags.
data::GridOptions world_options(const nlohmann::json& task, const std::string& where = "task 'grid'");
data::GridSplit grid_split(const nlohmann::json& task, const data::GridWorld& world, std::uint64_t seed,
                           const std::string& where = "task 'grid'");

// "soft", "hard" or "hard-at-inference".
const char* grid_attention_name(models::GridAttention a);

}  // namespace attn::cli
