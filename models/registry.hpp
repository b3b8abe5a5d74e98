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
#pragma once

#include "seq2seq.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace attn::models {

const std::vector<std::string>& model_names();

// {"model": name, ...every field of that model's config with its default}.
nlohmann::json default_model_config(const std::string& name);

// The model described by `config` (fields left out take their defaults).
std::unique_ptr<Seq2Seq> make_model(const nlohmann::json& config, std::size_t src_vocab, std::size_t tgt_vocab);

}  // namespace attn::models
