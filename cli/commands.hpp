// The `attn` command line: one function per command, registered in main.cpp.
#pragma once

#include "bpe.hpp"
#include "grid.hpp"
#include "parse.hpp"
#include "run_dir.hpp"
#include "task.hpp"
#include "word_scores.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <utility>
#include <vector>

namespace attn::cli {

// How the user ran attn (argv[0]), for the commands it prints (train.cpp; main sets it).
extern std::string program_name;

// A command stopped at the user's request (Ctrl-C) after saving what it did: main prints
// `message` (what was kept and how to go on) and exits with `status` (130, as for SIGINT).
struct Stopped {
  std::string message;
  int status;
};

void add_train_command(CLI::App& app);
void add_demo_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_translate_command(CLI::App& app);
void add_heatmap_command(CLI::App& app);
void add_classify_command(CLI::App& app);  // inspect.cpp: document classifiers (cli/documents.hpp)
void add_graph_command(CLI::App& app);
void add_corpus_command(CLI::App& app);  // corpus.cpp
void add_batches_command(CLI::App& app);  // batches.cpp

// What `train` and `demo` share: trains the run described by `config` into the run
// folder `out` (New: it must be new or empty; Overwrite: its run is replaced at the
// first checkpoint), or resumes the run in `out` (Resume: `config` is read from its
// checkpoint; new_steps, if not 0, is the new total). Everything is checked before
// anything is written; the folder is locked while training. Returns the final evaluation.
enum class TrainMode { New, Overwrite, Resume };
struct TrainResult {
  models::Evaluation evaluation;
  std::vector<double> steps, losses, lrs;  // the loss and learning-rate curves (of this invocation)
  WordScores scores;                       // the final evaluation on words (BLEU as NLTK computes it)
};
// The run folder also gets its plots (write_curves).
TrainResult train_run(nlohmann::json config, const std::string& out, TrainMode mode, std::uint64_t new_steps = 0);

// Writes the run's plots into `dir` as SVG: loss.svg, lr.svg, accuracy_by_length.svg, and
// bleu_by_length.svg when `bleu` (corpus tasks). Returns the paths written.
std::vector<std::string> write_curves(const std::string& dir, const TrainResult& result, bool bleu);

// Decodes sentences of the run's task (already tokenized, into subwords for a run with codes);
// unknown tokens read as <unk>, with a note on standard error.
std::vector<models::Hypothesis> translate(Run& run, const std::vector<data::Tokens>& sentences, std::size_t beam);
// The same with every decoding option (its max_len is set by decode_limit).
std::vector<models::Hypothesis> translate(Run& run, const std::vector<data::Tokens>& sentences,
                                          models::DecodeOptions options);

// How many tokens decoding may write for sources of up to `src_len` tokens: 2 * src_len + 10,
// but never past what a Transformer's positional encoding covers (its "max_len").
std::size_t decode_limit(const nlohmann::json& model_config, std::size_t src_len);

// The main attention of one hypothesis as a [T, S] array (T output tokens, S source tokens).
xt::xarray<double> attention_of(const models::Hypothesis& h, const std::string& name, std::size_t src_len);

// The sources of an input as the model's attentions read them: for multi-source, one per
// source ("source.k" reads part k of the packed row), else the input under the main attention.
std::vector<std::pair<std::string, data::Tokens>> attended_sources(const Run& run, const data::Tokens& input);

// The words of an output, as a user reads them.
std::string output_text(const Run& run, const models::Hypothesis& h);

// Every attention of the model (last_attention()) when it reads `input` and is fed its own output
// `h` teacher-forced (<bos> + every output token but the last), in eval mode: the weights the
// decoding had, every layer and head at once.
std::map<std::string, Tensor> teacher_forced_attention(Run& run, const data::Tokens& input, const models::Hypothesis& h);

}  // namespace attn::cli
