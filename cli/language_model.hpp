// Language models on the command line: chapter 20's pointer sentinel over words and chapter 15's
// character Transformer, trained on a plain UTF-8 text file, scored by perplexity, and sampled from.
//
//   attn train --model pointer-sentinel --task book.txt --out runs/ps      # words, 10 epochs
//   attn train --model transformer-lm --task book.txt --out runs/chars     # characters
//   attn train --model transformer-lm --set attention_position=alibi --set add_positions=false ...
//   attn eval --checkpoint runs/ps                    # perplexity on the text's last lines
//   attn generate --checkpoint runs/ps --prompt "the" --tokens 40 --temperature 0.8
//   attn score --checkpoint runs/ps other.txt         # perplexity of another text, line by line
//
// The task {"name": "text", "file": <absolute path>, "unit": "words" | "characters", "length": 64,
// "valid_fraction": 0.1, "test_fraction": 0.1, "min_freq": 1, "max_vocab": 0, "checksum": ...}: the file's
// lines with a sentence, in order (data/text_corpus.hpp), the first ones train, the next valid_fraction
// choose the epoch (the lowest perplexity is kept), the last test_fraction are held out; each part is one
// stream of tokens, each line ended by <eos>, cut into chunks of `length` predictions (data/language_model.hpp).
// The unit is the model's: pointer-sentinel reads words (chunks of 64, chapter 20's), transformer-lm
// characters (chunks of 32, chapter 15's training windows). Training runs in epochs with Adam and gradient
// clipping (train/lm_training.hpp, the loop of train/epoch_trainer.hpp); a checkpoint is committed after
// every epoch and where Ctrl-C stops it, and --resume continues the run bit for bit. vocab.json's "src" holds
// the tokens ("tgt": the special tokens only); eval refuses a text file that changed (its checksum).
//
// Where a run differs from the chapters:
//   - chapter 15 trains its character model for a number of steps on random windows of 32, with Adam (0.9,
//     0.98, eps 1e-9) under the Noam schedule; the command line trains in epochs over the windows of the text
//     cut back to back, with Adam's defaults at a constant 2e-3, as every model that trains in epochs does;
//     chapter 15's tokens are bytes and its vocabulary the whole text's, the command line's are code points
//     (an accented letter is one token) and its vocabulary the training lines'.
//   - chapter 20 reads the manual pages' paragraphs as documents and trains 3 epochs; the command line reads
//     any text, one line a sentence, for 10 epochs unless --epochs. Both keep the words seen 3 times or more
//     (--min-freq); chapter 20 keeps at most 4,000 of them, <eos> among them, the command line all of them
//     unless --max-vocab N, which counts words only.
// eval, score and train's last line give the share of the held-out targets that read as <unk>: a perplexity
// over text with many unknown words is mostly the unknown word's, which a model learns to guess.
#pragma once

#include "run_dir.hpp"

#include "../data/text_corpus.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace attn::cli {

bool is_text_task_file(const std::string& task);  // FILE.txt

// A run's task must read the unit its model reads (models::language_model_unit): an IOError naming `where`
// (config.json) and the key 'unit' otherwise.
void check_text_unit(const nlohmann::json& config, const std::string& where);

// {"name": "text", "file": <absolute path>, "unit": the model's, "length": 64 (words) or 32 (characters),
//  "valid_fraction": 0.1, "test_fraction": 0.1, "min_freq": 1, "max_vocab": 0}
nlohmann::json default_text_task_config(const std::string& file, const std::string& model);

// A text task: the file read and checked (valid UTF-8 lines of printable text), split, its vocabulary
// (of the training part) and its chunks. `where` names the config in messages; a file whose checksum
// differs from the one recorded is an IOError (its held-out lines would not be the run's).
struct TextTask {
  nlohmann::json config;  // with the file's checksum
  data::TextUnit unit = data::TextUnit::Words;
  data::TextSplit split;
  data::Vocab vocab;
  std::vector<data::Tokens> train, valid, test;  // chunks
  std::string warning;
};
TextTask make_text_task(const nlohmann::json& config, const std::string& where);

// Trains into `out` (new or empty unless start.overwrite), or resumes the run there (start.resumed);
// everything is checked first. Prints each epoch and the perplexity on the held-out lines.
struct RunStart;
void train_language_model_run(nlohmann::json config, const std::string& out, const RunStart& start);

// The perplexity of the run's held-out lines, printed; with `predictions`, one line for every held-out
// token: its position, the token, log p under the model, and the token the model found most likely.
void eval_language_model(Run& run, const std::string& predictions_file, bool overwrite, const std::string& dir);

// For the commands that decode a source (translate, heatmap): a ValueError naming `command` and the run in
// `dir` if it holds a language model, saying which commands read one.
void refuse_language_model(const Run& run, const std::string& command, const std::string& dir);

void add_generate_command(CLI::App& app);
void add_score_command(CLI::App& app);

}  // namespace attn::cli
