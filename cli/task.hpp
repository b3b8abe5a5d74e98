// The tasks `attn train --task ...` knows, described as JSON so a checkpoint
// can say what it was trained on:
//   {"name": "reverse", "vocab_size": 10, "min_length": 5, "max_length": 15, "n_train": 20000, "n_test": 500}
//   {"name": "dates", "n_train": 20000, "n_test": 1000}
//   {"name": "tsv", "file": "/abs/path/fra.txt", "char_level": false, "lowercase": true, "split_punctuation": true,
//    "max_length": 12, "test_fraction": 0.05, "test_file": "", "min_freq": 1, "max_vocab": 0,
//    "skip_malformed": false, "checksum": "...", "bpe": 4000}   (a malformed line is an error naming its
//    number, unless skipped; the checksum of the file, recorded by train, makes eval refuse a file that has
//    changed; "bpe": joint byte-pair codes of that many merges, learned from the training split, and then
//    max_length counts subwords and the vocabularies are subwords: cli/bpe.hpp)
//   {"name": "grid", ...}   chapter 4's captioned grids: cli/grid.hpp
#pragma once

#include "../attn.hpp"
#include "../data/bpe.hpp"
#include "../decode/decode.hpp"
#include "../eval/evaluate.hpp"
#include "../models/registry.hpp"
#include "../train/trainer.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace attn::cli {

struct TaskData {
  nlohmann::json config;       // with every default filled in
  data::Split split;           // train and test, disjoint
  data::Vocab src_vocab, tgt_vocab;
  std::string warning;         // e.g. the malformed lines of a corpus that were skipped
  bool has_bpe = false;        // the examples are subwords of these codes ("bpe" in the config)
  data::Bpe bpe;
  std::string filter_summary;  // a corpus: how many pairs the length limit kept and dropped
  std::string bpe_summary;     // what the codes did to the corpus: pairs kept, vocabularies, and without them
};

// The config for --task NAME: copy, reverse, sort, dates, grid, or a .tsv file.
nlohmann::json default_task_config(const std::string& task);

// Generates (or loads) the examples of a sequence task (not grid); the split is
// reproducible from `seed`. Every field is checked first: a missing, unknown,
// mistyped or out-of-range key is a ValueError naming `where` and the key. For a
// corpus, the returned config holds the file's checksum (an IOError if the config
// already held another). A corpus with "bpe" uses `codes` when given (a checkpoint's), else
// learns them from the training split only (never from the held-out pairs).
TaskData make_task(const nlohmann::json& config, std::uint64_t seed, const std::string& where = "task",
                   const data::Bpe* codes = nullptr);

// The pairs of a corpus file's `bytes` (read once, e.g. by read_checksummed), errors naming `path`: the
// encoding and word-length checks of data/text_file.hpp first, then the TSV; the hint for a malformed line
// names `command`'s flag ("attn train --skip-malformed").
data::Corpus load_corpus(const std::string& bytes, const std::string& path, const data::CorpusOptions& options,
                         const std::string& command);

// How a user's sentence is cut into tokens for this task: as the corpus was
// (lowercased, punctuation split), characters for dates, whitespace otherwise; then
// into subwords when the run has codes (`bpe`).
data::Tokens tokenize(const nlohmann::json& task_config, const std::string& text, const data::Bpe* bpe = nullptr);
std::string detokenize(const nlohmann::json& task_config, const data::Tokens& tokens);

}  // namespace attn::cli
