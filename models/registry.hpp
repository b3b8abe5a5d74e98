// Every chapter's model by name, built from a JSON description, so that the
// command line and checkpoints can save what a model is and rebuild it:
//
//   nlohmann::json config = default_model_config("bahdanau");  // every field with its default
//   config["decoder_dim"] = 128;
//   std::unique_ptr<Seq2Seq> model = make_model(config, src_vocab.size(), tgt_vocab.size());
//
// Names: "seq2seq" (chapter 1, no attention), "bahdanau" (2), "luong" (3, global),
// "luong-local" (3, local-p by default), "transformer" (8), "monotonic" (11), "conv" and
// "conv-copy" (12, convolutional attention without and with its copy head), "copynet" (21, a generate
// mode and a copy mode in one softmax; copy = false for the generate mode alone). Unknown names and
// unknown or mistyped fields are a ValueError that names them.
//
// The same registry knows every model the command line trains, the sequence models above and the
// families that are not a Seq2Seq, with the tasks each accepts (trainable_models()): every message
// and help text that lists models or tasks is made from it, so none can leave one out.
#pragma once

#include "language_model.hpp"
#include "seq2seq.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace attn::models {

// The sequence models make_model builds.
const std::vector<std::string>& model_names();

// How a model trains and what it reads.
enum class ModelFamily {
  Sequence,     // a Seq2Seq of make_model, in steps (train/trainer.hpp)
  MultiSource,  // chapter 17's two-source translation, in steps (a Seq2Seq the command line builds)
  Grid,         // chapter 4's captioner of feature grids, in steps (train/grid_train.hpp)
  Scenes,       // Show, Attend and Tell on rendered pictures, in epochs (train/scene_training.hpp)
  Speech,       // chapter 16's Listen, Attend and Spell, in epochs (train/speech_training.hpp)
  Documents,    // chapter 18's document classifiers, in epochs (train/document_training.hpp)
  LanguageModel,  // chapters 15 and 20's language models of a text, in epochs (train/lm_training.hpp)
};

struct TrainableModel {
  std::string name;                // "bahdanau"
  ModelFamily family;
  std::vector<std::string> tasks;  // the tasks it trains on: "copy", ..., "FILE.tsv", "FILE.jsonl"
};

// Every model `attn train --model` accepts, in the order messages list them.
const std::vector<TrainableModel>& trainable_models();
// The entry of `name`, or nullptr.
const TrainableModel* find_trainable_model(const std::string& name);
// Every task `attn train --task` accepts, in order: copy, reverse, sort, dates, grid, shapes, speech, FILE.tsv,
// FILE.jsonl, FILE.txt.
const std::vector<std::string>& task_names();
// The name a task goes by in task_names(): "FILE.tsv" for any path ending in .tsv, "FILE.jsonl" for .jsonl,
// "FILE.txt" for .txt, else the task itself.
std::string task_kind(const std::string& task);
// "seq2seq, bahdanau, ..., bag-of-words" and "copy, reverse, ..., FILE.jsonl": for messages.
std::string model_list();
std::string task_list();
// The models that train on `task` (by its kind), as "han, flat-attention or bag-of-words".
std::string models_for_task(const std::string& task);

// {"model": name, ...every field of that model's config with its default}.
nlohmann::json default_model_config(const std::string& name);

// The model described by `config` (fields left out take their defaults).
std::unique_ptr<Seq2Seq> make_model(const nlohmann::json& config, std::size_t src_vocab, std::size_t tgt_vocab);

// The language models (language_model.hpp): "pointer-sentinel" (chapter 20, words) and "transformer-lm"
// (chapter 15, characters).
const std::vector<std::string>& language_model_names();
bool is_language_model(const std::string& name);
// The unit of text each reads: "words" or "characters".
std::string language_model_unit(const std::string& name);
// {"model": name, ...every field with its default}: pointer-sentinel's embed_dim 64, hidden_dim 128, window 64
// (chapter 20's chunk length), pointer and pointer_loss true; transformer-lm's are the fields of "transformer"
// with chapter 15's sizes (d_model 64, 4 heads, 1 encoder and 2 decoder layers, dim_feedforward 256, dropout 0,
// max_len 1024).
nlohmann::json default_language_model_config(const std::string& name);
// The model `config` describes over `vocab` tokens (fields left out take their defaults); a ValueError names
// an unknown name or an unknown or mistyped field.
std::unique_ptr<LanguageModel> make_language_model(const nlohmann::json& config, std::size_t vocab);

}  // namespace attn::models
