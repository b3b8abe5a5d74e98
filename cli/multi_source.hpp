// Chapter 17's multi-source translation on the command line (Zoph & Knight 2016): English and
// German in, French out, from the installed message catalogs.
//
//   attn corpus gettext --lang fr --second de --locale-dir locale --out en-de-fr.tsv
//       # lines "english ||| german<TAB>french": the messages both catalogs translate
//   attn train --model multi-source --task en-de-fr.tsv --min-freq 2 --out runs/ms
//   attn eval --checkpoint runs/ms --beam 4
//   attn translate --checkpoint runs/ms "cannot open file ||| datei kann nicht geöffnet werden"
//   attn heatmap --checkpoint runs/ms "..." --out a.svg      # the attention over the first source
//
// A multi-source run's task is a FILE.tsv whose source side holds the sources one after
// another, separated by " ||| " (a token the tokenizers keep whole); the task records
// "sources": K and reads each " ||| " as the model's <sep> token (data/multi_source.hpp's
// packed row), so the trainer, decoders and BLEU serve it as every Seq2Seq. The model config
// records the id of <sep> in the source vocabulary ("sep_id", set by train).
#pragma once

#include "../data/example.hpp"
#include "../data/multi_source.hpp"
#include "../models/multi_source.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace attn::cli {

// What separates two sources in a corpus line and in a sentence to translate.
inline const std::string kSourceSeparator = "|||";

// {"model": "multi-source", "sources": 2, "embed_dim": 64, "hidden_dim": 128, "attention": "separate",
//  "init": "child-sum"}   (attention: separate | flat; init: child-sum | basic)
nlohmann::json default_multi_source_model_config();

// The model `model` describes. "sep_id" (set by train) must be a source id; a config without it
// (the settings checked before the vocabulary exists) takes the last id.
std::unique_ptr<models::Seq2Seq> make_multi_source_model(const nlohmann::json& model, std::size_t src_vocab,
                                                         std::size_t tgt_vocab);

// Every kSourceSeparator token of a source made <sep>; the source must then hold exactly
// `sources` non-empty parts (a ValueError naming `where` and the sentence otherwise).
data::Tokens pack_separators(const data::Tokens& src, std::size_t sources, const std::string& where);

}  // namespace attn::cli
