// A checkpoint directory, as `attn train --out DIR` writes it:
//   DIR/config.json   {"format": "attn-checkpoint", "model": {...}, "task": {...}, "train": {...}}
//   DIR/vocab.json    {"src": <Vocab>, "tgt": <Vocab>}
//   DIR/model.npz     the model's parameters (nn/checkpoint.hpp, numpy's format)
//   DIR/model.trainer.npz  optimizer moments, step and random state, for --resume
// Everything `attn eval`, `translate` and `heatmap` need to rebuild the model.
// The grid captioner (chapter 4, "model": {"model": "grid"}) has no source
// sentences: its "src" vocabulary holds the special tokens only, and it is
// not a Seq2Seq, so a Run holds it apart (cli/grid.hpp).
#pragma once

#include "../attn.hpp"
#include "../models/decode.hpp"
#include "../models/evaluate.hpp"
#include "../models/grid_captioner.hpp"
#include "../models/registry.hpp"
#include "../models/trainer.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace attn::cli {

struct Run {
  nlohmann::json config;
  data::Vocab src_vocab, tgt_vocab;
  std::unique_ptr<models::Seq2Seq> model;            // null for the grid captioner
  std::unique_ptr<models::GridCaptioner> captioner;  // only for the grid captioner
  bool is_grid() const { return captioner != nullptr; }
  nn::Module& module() { return captioner ? static_cast<nn::Module&>(*captioner) : *model; }
  std::string model_name() const;                     // config.model.model: "bahdanau", "grid", ...
};

// Writes config.json and vocab.json (the weights: the Trainer, or nn::save).
void save_run_description(const std::string& dir, const nlohmann::json& config, const data::Vocab& src_vocab,
                          const data::Vocab& tgt_vocab);

// Rebuilds the model of a checkpoint directory and loads its weights. A missing
// directory or file, a file that does not parse, or weights that do not fit the
// described model (a checkpoint of another model) each give an IOError naming
// the file and what is wrong.
Run load_run(const std::string& dir);

// Reads a JSON file, or throws IOError naming it.
nlohmann::json read_json(const std::string& path);
void write_json(const std::string& path, const nlohmann::json& value);

}  // namespace attn::cli
