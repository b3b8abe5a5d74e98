// The `attn` command line: one function per command, registered in main.cpp.
#pragma once

#include "bpe.hpp"
#include "grid.hpp"
#include "parse.hpp"
#include "run_dir.hpp"
#include "task.hpp"
#include "progress.hpp"
#include "word_scores.hpp"

#include "../train/epoch_trainer.hpp"

#include <CLI/CLI.hpp>

#include <optional>
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
// A run folder opened to resume (train --resume DIR): locked for this process, its checkpoint
// unit open (the manifest checked) and its config.json read; `where` names that file in messages.
struct ResumedRun {
  std::unique_ptr<RunLock> lock;
  std::unique_ptr<Checkpoint> unit;
  nlohmann::json config;
  std::string where;
  std::string model_name() const;  // config.model.model, or "" when it has none
};
std::shared_ptr<ResumedRun> open_to_resume(const std::string& dir);

// The run folder also gets its plots (write_curves). Resume: `resumed` if already opened, else opened here.
TrainResult train_run(nlohmann::json config, const std::string& out, TrainMode mode, std::uint64_t new_steps = 0,
                      std::shared_ptr<ResumedRun> resumed = nullptr);

// How a run of the families that train with models::EpochTrainer (grid, las, the document classifiers)
// starts: in a new folder (over an old run with `overwrite`), or resumed from `resumed` to `new_total`
// epochs or steps (0: the total its config.json says).
struct RunStart {
  bool overwrite = false;
  std::shared_ptr<ResumedRun> resumed;
  std::uint64_t new_total = 0;
};

// The config such a run trains under: `config` for a new run; for a resumed one its checkpoint's, checked,
// with train.<total_key> ("epochs" or "steps") set to start.new_total if given. `where` gets the name of the
// config in messages.
nlohmann::json epoch_run_config(nlohmann::json config, const RunStart& start, const char* total_key, std::string& where);

// Before training: a new run checks and locks its folder (new or empty unless start.overwrite); a resumed
// run loads its checkpoint into `trainer` (an error names the file; a run made before these families
// resumed has no trainer state and is refused, saying why; its vocab.json must equal `vocab_json`) and
// must have more to train. Returns the new run's lock (a resumed run's is start.resumed's).
std::unique_ptr<RunLock> begin_epoch_run(models::EpochTrainer& trainer, const RunStart& start, const std::string& out,
                                         const std::string& vocab_json);

// vocab.json's text as a checkpoint holds it (compact), to compare with a resumed run's.
std::string vocab_json_text(const data::Vocab& src, const data::Vocab& tgt);

// Trains with Ctrl-C read between two steps (the caller holds a SigintCatcher from before it says training
// has begun, so that no Ctrl-C is missed); every checkpoint of the trainer is committed into `out`
// as one unit (config.json, vocab.json, model.npz, model.trainer.npz). Returns at the end of
// training. On Ctrl-C the step reached is committed and Stopped is thrown, its message naming the
// step (and the epoch, for a run in epochs), `kept` (what eval reads, if more needs saying) and the
// command that resumes the run.
void train_epochs_in_run(models::EpochTrainer& trainer, const std::string& out, const nlohmann::json& config,
                         const data::Vocab& src_vocab, const data::Vocab& tgt_vocab, std::size_t total_steps,
                         const std::function<std::string()>& kept = {});

// What a run in epochs shows beside its loop: each family's own words and plots.
struct EpochRunView {
  // The validation part of an epoch's line, e.g. "validation accuracy 93.1% (best so far)".
  std::function<std::string(const models::EpochReport&)> validation;
  bool step_accuracy = false;         // the bar shows the epoch's running accuracy (a classifier's)
  std::function<void()> write_plots;  // after training, and when Ctrl-C stops a run past its first epoch
  std::function<std::string()> kept;  // what eval reads, for the Ctrl-C message (empty: nothing to add)
};

// The plot of a run in epochs: each of `series` (a name and one value per epoch done) against the epochs done,
// from zero, with markers, written to `path` as a file the run owns.
void write_epoch_plot(const std::string& path, const models::EpochTrainer& trainer, const std::string& title,
                      const std::string& y_label, const std::vector<std::pair<std::string, std::vector<double>>>& series);

// For a run that keeps its best validated epoch: view.validation says "validation " + score(value) + `how` and
// "(best so far)" on the best; view.kept says which epoch `readers` ("eval and caption") read, with its score.
void keep_best_view(EpochRunView& view, const models::EpochTrainer& trainer, const std::string& readers,
                    const std::function<std::string(double)>& score, const std::string& how = "");

// Trains a family's epochs (train_epochs_in_run) with a progress bar over its steps and a line after each
// epoch: its loss, view.validation, the time so far and left (each epoch to come taking the mean epoch so
// far, its validation included). `examples` and `batch_size` count the steps of an epoch. When training
// ends, `catcher` is reset, so that Ctrl-C stops what follows (the test evaluation) at once. Returns the
// seconds this invocation trained.
double run_epochs(models::EpochTrainer& trainer, const std::string& out, const nlohmann::json& config,
                  const data::Vocab& src_vocab, const data::Vocab& tgt_vocab, std::size_t examples,
                  std::size_t batch_size, std::optional<SigintCatcher>& catcher, const EpochRunView& view);

// Where a resumed run in epochs goes on from, for the line that begins training: ", resumed after epoch 2
// (step 22)", or within an epoch ", resumed at step 27, in epoch 3 (after batch 5 of 11)".
std::string resumed_text(const models::EpochTrainer& trainer);

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
