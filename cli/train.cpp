// `attn train` (and --resume): any model on any task, with a progress bar,
// periodic evaluation and checkpoints in the run folder --out (cli/run_dir.hpp).
// Every input (flags, config, corpus, checkpoint) is checked and the whole run is
// built before the first byte is written.
#include "commands.hpp"
#include "language_model.hpp"
#include "documents.hpp"
#include "multi_source.hpp"
#include "run_config.hpp"
#include "scenes.hpp"
#include "speech.hpp"
#include "../data/lexicon.hpp"
#include "../models/extended_source.hpp"
#include "../viz/line_plot.hpp"
#include "output.hpp"
#include "parse.hpp"
#include "progress.hpp"
#include "run_config.hpp"

#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>

namespace attn::cli {

std::string program_name = "attn";

namespace {

// Thrown from a step's progress report when Ctrl-C was pressed: the step is complete.
struct StopAfterStep {};

// "decoder_dim=128" -> config["decoder_dim"] = 128 (JSON values; bare words are strings).
void apply_setting(nlohmann::json& model, const std::string& setting) {
  const auto eq = setting.find('=');
  if (eq == std::string::npos || eq == 0) throw ValueError("--set expects KEY=VALUE, got '" + setting + "'");
  if (!valid_utf8(setting))
    throw ValueError("--set '" + setting.substr(0, eq) + "=...': not valid UTF-8 text (config.json stores UTF-8 only)");
  const std::string key = setting.substr(0, eq), text = setting.substr(eq + 1);
  if (key == "model")  // the model decides which keys exist: it is chosen first, by its own flag
    throw ValueError("--set " + setting + ": 'model' cannot be set with --set; choose the model with --model " + text);
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    value = text;
  }
  model[key] = value;
}

// Every field of a sequence model's config with its default: the registry's models, and multi-source.
nlohmann::json model_defaults(const std::string& name) {
  return name == "multi-source" ? default_multi_source_model_config() : models::default_model_config(name);
}

// --model's help: every model of the registry, with the task it needs when it is not a sequence task.
std::string model_help() {
  std::string help;
  for (const models::TrainableModel& m : models::trainable_models()) {
    help += (help.empty() ? "" : ", ") + m.name;
    if (m.family != models::ModelFamily::Sequence) {
      std::string tasks;
      for (const std::string& t : m.tasks) tasks += (tasks.empty() ? "" : ", ") + t;
      help += " (--task " + tasks + ")";
    }
  }
  return help;
}

std::string task_list_help() { return models::task_list(); }

constexpr std::size_t kReportEvery = 10;  // steps per point of the loss curve and per update of the bar

std::string format_step(double step) { return std::to_string(static_cast<long long>(step)); }

// Vaswani et al.'s schedule, linear warm-up then 1/sqrt(n) decay, scaled so that its
// peak, at step `warmup`, is --lr: lr_n = lr * min(n / warmup, sqrt(warmup / n)).
std::unique_ptr<nn::LRScheduler> warmup_schedule(nn::Optimizer& o, double lr, std::uint64_t warmup) {
  const double w = static_cast<double>(warmup);
  return std::make_unique<nn::NoamLR>(o, /*d_model=*/1, static_cast<long>(warmup), /*factor=*/lr * std::sqrt(w));
}

// The config and vocabularies must be storable as JSON (UTF-8) before training starts.
void check_storable(const nlohmann::json& config, const TaskData& task) {
  try {
    (void)config.dump();
    (void)nlohmann::json::parse(task.src_vocab.to_json()).dump();
    (void)nlohmann::json::parse(task.tgt_vocab.to_json()).dump();
  } catch (const nlohmann::json::exception& e) {
    throw ValueError(std::string("the run's settings or vocabulary cannot be stored as JSON (") + e.what() + ")");
  }
}


// Builds the model the settings describe (a small vocabulary: the settings fail fast, before any
// data is made). When the model refuses them, the message names the --set that is to blame:
// the last one whose removal lets the model build.
void check_settings(const nlohmann::json& model, const std::string& name, const std::vector<std::string>& settings) {
  const std::string where = "the model's settings (--model, --set)";
  // Rotary positions rotate pairs of a head's dimensions: an odd head size fails only at the first step.
  if (name == "transformer" && model.value("attention_position", "") == "rotary" && model.contains("d_model") &&
      model.contains("nhead") && model.at("d_model").is_number_integer() && model.at("nhead").is_number_integer()) {
    const std::int64_t d_model = model.at("d_model").get<std::int64_t>(), nhead = model.at("nhead").get<std::int64_t>();
    if (d_model > 0 && nhead > 0 && d_model % nhead == 0 && (d_model / nhead) % 2 == 1)
      throw ValueError("--set attention_position=rotary: rotary positions turn pairs of each head's dimensions, so "
                       "the head size d_model / nhead must be even; it is " + std::to_string(d_model) + " / " +
                       std::to_string(nhead) + " = " + std::to_string(d_model / nhead) +
                       " (change --set d_model or --set nhead)");
  }
  try {
    build_model(model, 8, 8, where);
  } catch (const Error& e) {
    const nlohmann::json defaults = model_defaults(name);
    std::set<std::string> tried;  // a key given twice: its last value is the one in force
    for (auto it = settings.rbegin(); it != settings.rend(); ++it) {
      const std::string& setting = *it;
      const std::string key = setting.substr(0, setting.find('='));
      if (!tried.insert(key).second) continue;
      nlohmann::json without = model;
      if (defaults.contains(key)) without[key] = defaults.at(key);
      else without.erase(key);
      try {
        build_model(without, 8, 8, where);
      } catch (const Error&) {
        continue;
      }
      throw ValueError("--set " + setting + ": " + e.what());
    }
    throw;
  }
}

// `train --resume DIR --bpe N`: allowed only if N is the run's own number of merges.
void check_resumed_bpe(const std::string& dir, std::uint64_t merges) {
  const Checkpoint unit(dir);
  const nlohmann::json config = unit.read_json("config.json");
  const nlohmann::json task = config.contains("task") ? config.at("task") : nlohmann::json::object();
  if (!task.is_object() || !task.contains("bpe"))
    throw ValueError("train --resume: --bpe " + std::to_string(merges) + ": the run in " + dir +
                     " was trained on words, without --bpe; a run keeps its tokens (train a new run with --bpe)");
  const std::uint64_t own = Fields(task, unit.name("config.json") + ": task").count("bpe", 1, kMaxMerges);
  if (own != merges)
    throw ValueError("train --resume: --bpe " + std::to_string(merges) + " differs from the run's --bpe " +
                     std::to_string(own) + " (" + unit.name("config.json") +
                     "); a run keeps its subword codes: leave --bpe out, or train a new run");
}

}  // namespace

std::string vocab_json_text(const data::Vocab& src, const data::Vocab& tgt) {
  return nlohmann::json{{"src", nlohmann::json::parse(src.to_json())}, {"tgt", nlohmann::json::parse(tgt.to_json())}}
      .dump();
}

std::string ResumedRun::model_name() const {
  const bool named = config.is_object() && config.contains("model") && config.at("model").is_object() &&
                     config.at("model").contains("model") && config.at("model").at("model").is_string();
  return named ? config.at("model").at("model").get<std::string>() : "";
}

std::shared_ptr<ResumedRun> open_to_resume(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) throw IOError("--resume " + dir + ": no such run folder");
  if (!holds_run(dir)) throw IOError("--resume " + dir + ": holds no run (no " + dir + "/checkpoint)");
  auto run = std::make_shared<ResumedRun>();
  run->lock = std::make_unique<RunLock>(dir);  // no other process may commit while this one reads and trains
  run->unit = std::make_unique<Checkpoint>(dir);
  run->where = run->unit->name("config.json");
  run->config = run->unit->read_json("config.json");
  return run;
}

nlohmann::json epoch_run_config(nlohmann::json config, const RunStart& start, const char* total_key, std::string& where) {
  where = "the run's settings";
  if (!start.resumed) return config;
  where = start.resumed->where;
  config = start.resumed->config;
  read_train_settings(config, where);  // the checkpoint as it is, before the new total changes it
  if (start.new_total) config["train"][total_key] = start.new_total;
  return config;
}

std::unique_ptr<RunLock> begin_epoch_run(models::EpochTrainer& trainer, const RunStart& start, const std::string& out,
                                         const std::string& vocab_json) {
  if (!start.resumed) {
    check_out_folder(out, start.overwrite);
    auto lock = std::make_unique<RunLock>(out);
    check_out_folder(out, start.overwrite);  // again, now that no other process can write there
    return lock;
  }
  const ResumedRun& run = *start.resumed;
  const std::string name = run.model_name();
  if (!run.unit->lists("model.trainer.npz")) {
    const bool stopped = run.config.at("train").contains("stopped_at_step");
    throw ValueError("train --resume: " + run.unit->name("model.trainer.npz") + " is missing: this " + name +
                     " run was made by an attn that kept no optimizer state for " + name + " runs" +
                     (stopped ? " (it was stopped at step " + run.config.at("train").at("stopped_at_step").dump() + ")"
                              : std::string()) +
                     ", so it cannot resume; eval reads it as it is, and a new run (--out NEW_DIR, or --overwrite) resumes");
  }
  if (vocab_json != run.unit->read_json("vocab.json").dump())
    throw IOError(run.unit->name("vocab.json") + ": differs from the vocabulary of the task's data as it is now (was "
                  "the corpus changed since the run began?); the run cannot continue on other data");
  try {
    trainer.load_checkpoint(run.unit->path("model"));
  } catch (const Error& e) {
    run.unit->rethrow_named(e);
  }
  if (trainer.finished()) {
    const bool epochs = trainer.options().epochs > 0;
    const std::size_t done = epochs ? trainer.epochs_done() : trainer.step();
    const std::string flag = epochs ? "--epochs" : "--steps";
    throw ValueError("train --resume: " + (start.new_total ? flag + " " + std::to_string(start.new_total) + ": " : std::string()) +
                     "the run in " + out + (epochs ? " has trained " + std::to_string(done) + (done == 1 ? " epoch" : " epochs")
                                                   : " is already at step " + std::to_string(done)) +
                     "; to train it further, give " + flag + " more than " + std::to_string(done));
  }
  return nullptr;
}

void train_epochs_in_run(models::EpochTrainer& trainer, const std::string& out, const nlohmann::json& config,
                         const data::Vocab& src_vocab, const data::Vocab& tgt_vocab, std::size_t total_steps,
                         const std::function<std::string()>& kept) {
  trainer.on_checkpoint = [&] {
    commit_checkpoint(out, config, src_vocab, tgt_vocab,
                      [&](const std::string& unit) { trainer.save_checkpoint(unit + "/model"); });
  };
  trainer.should_stop = [] { return stop_requested(); };
  if (trainer.train()) return;  // its last act is a checkpoint, at the end or at the step Ctrl-C stopped
  const std::string more = kept ? kept() : "";
  std::string position;  // in a run in epochs: " (epoch 3 of 12, after batch 4 of 11)" or " (epoch 3 of 12, at its end)"
  if (const std::size_t epochs = trainer.options().epochs) {
    const std::size_t batch = trainer.epoch_position();
    position = " (epoch " + std::to_string(trainer.epochs_done() + (batch ? 1 : 0)) + " of " + std::to_string(epochs) +
               (batch ? ", after batch " + std::to_string(batch) + " of " + std::to_string(trainer.epoch_size())
                      : std::string(", at its end")) + ")";
  }
  throw Stopped{"attn: stopped by Ctrl-C at step " + std::to_string(trainer.step()) + " of " +
                    std::to_string(total_steps) + position + "; the checkpoint in " + out + " holds step " +
                    std::to_string(trainer.step()) + (more.empty() ? "" : "; " + more) + ". Resume it with:\n  " +
                    shell_word(program_name) + " train --resume " + shell_word(out),
                130};
}

void write_epoch_plot(const std::string& path, const models::EpochTrainer& trainer, const std::string& title,
                      const std::string& y_label, const std::vector<std::pair<std::string, std::vector<double>>>& series) {
  std::vector<double> epochs;
  for (std::size_t e = 1; e <= trainer.epochs_done(); ++e) epochs.push_back(double(e));
  viz::LinePlotOptions plot;
  plot.title = title;
  plot.x_label = "epoch";
  plot.y_label = y_label;
  plot.y_from_zero = true;
  plot.markers = true;
  std::vector<viz::Series> lines;
  for (const auto& [name, values] : series) lines.push_back({name, epochs, values});
  write_own_file(path, viz::line_plot_svg(lines, plot));
}

void keep_best_view(EpochRunView& view, const models::EpochTrainer& trainer, const std::string& readers,
                    const std::function<std::string(double)>& score, const std::string& how) {
  view.validation = [score, how](const models::EpochReport& r) {
    return "validation " + score(r.validation) + how + (r.best ? " (best so far)" : "");
  };
  view.kept = [&trainer, readers, score] {
    if (!trainer.has_best()) return std::string("no epoch is validated yet: its model.npz holds the weights at that step");
    return readers + " read the weights of epoch " + std::to_string(trainer.best_epoch()) + ", the best on validation (" +
           score(trainer.best_score()) + ") so far";
  };
}

std::string resumed_text(const models::EpochTrainer& trainer) {
  const std::string step = std::to_string(trainer.step());
  if (const std::size_t batch = trainer.epoch_position())
    return ", resumed at step " + step + ", in epoch " + std::to_string(trainer.epochs_done() + 1) + " (after batch " +
           std::to_string(batch) + " of " + std::to_string(trainer.epoch_size()) + ")";
  return ", resumed after epoch " + std::to_string(trainer.epochs_done()) + " (step " + step + ")";
}

double run_epochs(models::EpochTrainer& trainer, const std::string& out, const nlohmann::json& config,
                  const data::Vocab& src_vocab, const data::Vocab& tgt_vocab, std::size_t examples,
                  std::size_t batch_size, std::optional<SigintCatcher>& catcher, const EpochRunView& view) {
  const std::size_t epochs = trainer.options().epochs, per_epoch = (examples + batch_size - 1) / batch_size;
  const std::size_t total_steps = epochs * per_epoch, first_epoch = trainer.epochs_done();
  ProgressBar bar(total_steps, trainer.step());
  const auto started = std::chrono::steady_clock::now();
  const auto seconds_since_start = [&started] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  trainer.on_step = [&](const models::EpochProgress& p) {
    bar.update(p.step, p.loss, view.step_accuracy ? p.epoch_accuracy : std::nan(""));
  };
  trainer.on_epoch = [&](const models::EpochReport& r) {
    bar.finish();
    const double so_far = seconds_since_start();
    std::printf("  epoch %zu/%zu: loss %.3f, %s  [%s, left %s]\n", r.epoch, epochs, r.loss, view.validation(r).c_str(),
                ProgressBar::format_duration(so_far).c_str(),
                ProgressBar::format_duration(so_far / double(r.epoch - first_epoch) * double(epochs - r.epoch)).c_str());
    std::fflush(stdout);
  };
  try {
    train_epochs_in_run(trainer, out, config, src_vocab, tgt_vocab, total_steps, view.kept);
  } catch (const Stopped&) {
    bar.finish();
    if (trainer.epochs_done() && view.write_plots) view.write_plots();
    throw;
  }
  catcher.reset();  // the test evaluation that follows is not training: Ctrl-C stops it at once
  return seconds_since_start();
}

TrainResult train_run(nlohmann::json config, const std::string& out, TrainMode mode, std::uint64_t new_steps,
                      std::shared_ptr<ResumedRun> resumed) {
  // 1. Read and check everything: the settings, the task's data, the model, the checkpoint.
  std::unique_ptr<RunLock> lock;
  std::unique_ptr<Checkpoint> unit;
  std::string where = "the run's settings";
  if (mode == TrainMode::Resume) {
    if (!resumed) resumed = open_to_resume(out);
    lock = std::move(resumed->lock);
    unit = std::move(resumed->unit);
    where = resumed->where;
    config = resumed->config;
    // (a malformed config is read_train_settings' to report, by name)
    read_train_settings(config, where);  // the checkpoint as it is, before --steps changes it
    if (new_steps) config["train"]["steps"] = new_steps;
  } else {
    config["format"] = "attn-checkpoint";
  }
  const TrainSettings s = read_train_settings(config, where);
  const models::TrainableModel* entry = models::find_trainable_model(config.at("model").value("model", ""));
  if (entry && entry->family != models::ModelFamily::Sequence && entry->family != models::ModelFamily::MultiSource)
    throw ValueError("train_run: " + entry->name + " is not a sequence model (attn train dispatches it to its own family)");
  manual_seed(s.seed);
  // A resumed run keeps its subword codes (bpe.codes, checked against the manifest).
  data::Bpe codes;
  const bool resume_codes = mode == TrainMode::Resume && config.at("task").contains("bpe");
  if (mode == TrainMode::Resume && resume_codes != unit->lists(kCodesFile))
    throw IOError(unit->name(kCodesFile) + (resume_codes ? ": missing (config.json's task has \"bpe\")"
                                                         : ": listed in manifest.json, but config.json's task has no \"bpe\""));
  if (resume_codes) {
    codes = read_codes(unit->path(kCodesFile), unit->name(kCodesFile));
    const std::uint64_t merges = Fields(config.at("task"), where + ": task").count("bpe", 1, kMaxMerges);
    if (codes.merges().size() > merges)  // as load_run refuses it for eval: the two files are not of one run
      throw IOError(unit->name(kCodesFile) + ": holds " + std::to_string(codes.merges().size()) +
                    " merges, more than the " + std::to_string(merges) + " of config.json's task.bpe; the "
                    "checkpoint's files do not belong together (restore them, or train a new run)");
  }
  TaskData task = make_task(config.at("task"), s.seed, where + ": task", resume_codes ? &codes : nullptr);
  config["task"] = task.config;  // with the corpus' checksum
  const bool multi_source = config.at("model").value("model", "") == "multi-source";
  if (multi_source != (task.config.value("sources", 1) > 1))
    throw ValueError(multi_source ? "--model multi-source reads several sources: train it on a FILE.tsv whose source "
                                    "side is 'english ||| german' (attn corpus gettext --second LANG writes one)"
                                  : where + ": the task has several sources: only --model multi-source reads them");
  if (multi_source) {  // the model splits its packed source rows at this id
    if (!task.src_vocab.contains(data::kSeparator))
      throw ValueError("the source vocabulary has no " + data::kSeparator + " (a --min-freq above the number of "
                       "training pairs leaves it out)");
    config["model"]["sep_id"] = task.src_vocab.id(data::kSeparator);
  }
  if (!task.warning.empty()) std::cout << "warning: " << task.warning << std::endl;
  if (!task.filter_summary.empty()) std::cout << task.filter_summary << std::endl;
  if (!task.bpe_summary.empty()) std::cout << task.bpe_summary << std::endl;
  const data::Bpe* bpe = task.has_bpe ? &task.bpe : nullptr;
  std::unique_ptr<models::Seq2Seq> model =
      build_model(config.at("model"), task.src_vocab.size(), task.tgt_vocab.size(),
                  mode == TrainMode::Resume ? where : "the model's settings (--model, --set)");
  // a copying model (conv-copy, copynet) copies a source token as its target id: it needs both vocabularies
  auto* copying = dynamic_cast<models::CopyingModel*>(model.get());
  if (copying) copying->set_copy_map(task.src_vocab, task.tgt_vocab);
  // A copying model trains on log p over each batch's extended vocabulary, and its config says so. A
  // conv-copy checkpoint that does not say so was trained over the target ids alone: resuming it would
  // change the objective in the middle of the run. (CopyNet has always trained over the extended one.)
  const bool extended = copying && copying->copies();
  const std::string model_name = config.at("model").value("model", "");
  if (!extended && !s.copy_objective.empty())
    throw ValueError((mode == TrainMode::Resume ? "train --resume: " : "train: ") + where +
                     ": train: \"copy_objective\" is only for a model that copies (conv-copy, or copynet with "
                     "copy = true); this " + model_name + (copying ? " has copy = false" : " does not copy") +
                     ": remove the key");
  if (extended && mode == TrainMode::Resume && s.copy_objective.empty() && model_name == "conv-copy")
    throw ValueError("train --resume: " + where + ": this conv-copy run's train section has no "
                     "\"copy_objective\": its steps so far were trained on log p over the target vocabulary, and "
                     "attn train optimizes log p over each batch's extended vocabulary; resuming would change the "
                     "objective mid-run. Train a new run with the same settings (--out NEW_DIR, or --overwrite "
                     "this one); eval, translate and heatmap read this one as it is");
  if (extended) config["train"]["copy_objective"] = "extended";
  // the lexicon bias reads a word-translation table: IBM model 1 over the training pairs (a resumed
  // run reads the one its checkpoint holds)
  auto* bahdanau = dynamic_cast<models::BahdanauSeq2Seq*>(model.get());
  if (bahdanau && bahdanau->config.lexicon_bias && mode != TrainMode::Resume) {
    std::vector<std::vector<std::int64_t>> src_ids, tgt_ids;
    for (const data::Example& e : task.split.train) {
      src_ids.push_back(task.src_vocab.encode(e.src));
      tgt_ids.push_back(task.tgt_vocab.encode(e.tgt));
      // the decoder writes <eos> too, and the bias applies at that step: learn where it comes from
      tgt_ids.back().push_back(data::Vocab::eos_id);
    }
    data::IBMModel1Options ibm;
    bahdanau->set_lexicon(data::ibm_model1(src_ids, tgt_ids, task.src_vocab.size(), task.tgt_vocab.size(), ibm));
    std::cout << "lexicon: IBM model 1, " << ibm.iterations << " iterations over the " << src_ids.size()
              << " training pairs" << std::endl;
  }
  if (s.dtype == "float32") model->to(Dtype::Float32);
  check_storable(config, task);

  models::TrainerOptions options;
  options.steps = s.steps;
  options.batch_size = s.batch_size;
  options.lr = s.lr;
  options.clip_norm = s.clip_norm;
  options.label_smoothing = s.label_smoothing;
  options.seed = s.seed;
  options.log_every = 1;  // every step: see on_progress
  options.eval_every = s.eval_every;
  options.checkpoint_every = s.checkpoint_every;
  std::size_t longest = 0;  // evaluation decodes no further than a Transformer's positions reach
  for (const auto& e : task.split.test) longest = std::max(longest, e.src.size());
  options.eval.max_len = decode_limit(config.at("model"), longest);
  options.eval.keep_predictions = true;  // scored on words (cli/word_scores.hpp)
  models::Trainer trainer(*model, task.split.train, task.src_vocab, task.tgt_vocab, options);
  trainer.set_eval_data(task.split.test);
  if (s.warmup > 0)  // before load_checkpoint, which replays the schedule to the saved step
    trainer.set_schedule([lr = s.lr, warmup = s.warmup](nn::Optimizer& o) { return warmup_schedule(o, lr, warmup); });

  if (mode == TrainMode::Resume) {
    if (vocab_json_text(task.src_vocab, task.tgt_vocab) != unit->read_json("vocab.json").dump())
      throw IOError(unit->name("vocab.json") + ": differs from the vocabulary of the task's data as it is now (" +
                    (resume_codes ? "the corpus is unchanged (its checksum matches), so " + unit->name(kCodesFile) +
                                        " was changed since the run began: restore it"
                                  : std::string("was the corpus file changed since the run began?")) +
                    "); the run cannot continue on other data");
    try {
      trainer.load_checkpoint(unit->path("model"));
    } catch (const Error& e) {
      unit->rethrow_named(e);
    }
    if (trainer.step() >= s.steps)
      throw ValueError(std::string(new_steps ? "--steps " + std::to_string(new_steps) + ": " : "") + "the run in " +
                       out + " is already at step " + std::to_string(trainer.step()) +
                       "; to train it further, give --steps more than " + std::to_string(trainer.step()));
    unit.reset();
  } else {
    // 2. Only now: the folder must be free to write (checked again once it is locked).
    check_out_folder(out, mode == TrainMode::Overwrite);
    lock = std::make_unique<RunLock>(out);
    check_out_folder(out, mode == TrainMode::Overwrite);
  }

  // 3. Train; each checkpoint is one unit, committed whole (cli/run_dir.hpp).
  // The training time: steps only; evaluations and checkpoints on the way are not counted.
  using Clock = std::chrono::steady_clock;
  double outside_seconds = 0.0, trained_seconds = 0.0;
  const std::size_t first_step = trainer.step();
  auto outside = [&outside_seconds](Clock::time_point since) {
    outside_seconds += std::chrono::duration<double>(Clock::now() - since).count();
  };
  trainer.on_checkpoint = [&] {
    const Clock::time_point since = Clock::now();
    std::map<std::string, std::string> texts;
    if (bpe) texts[kCodesFile] = bpe->to_text();
    commit_checkpoint(out, config, task.src_vocab, task.tgt_vocab,
                      [&](const std::string& folder) { trainer.save_checkpoint(folder + "/model"); }, texts);
    outside(since);
  };
  std::cout << "training " << config["model"]["model"].get<std::string>() << " (" << model->num_parameters()
            << " parameters, " << s.dtype << ") on " << task.config.at("name").get<std::string>() << ": "
            << task.split.train.size() << " train / " << task.split.test.size() << " test examples, seed " << s.seed
            << (mode == TrainMode::Resume ? ", resumed at step " + std::to_string(trainer.step()) : "") << std::endl;
  TrainResult result;
  ProgressBar bar(options.steps, trainer.step());
  const Clock::time_point started = Clock::now();
  Clock::time_point last_report = started;  // an evaluation follows the report of its step
  std::size_t last_report_step = 0;
  // The trainer reports every step (options.log_every = 1) so that Ctrl-C is seen between two steps;
  // the curves and the bar still get the mean of every 10 steps.
  double loss_sum = 0, accuracy_sum = 0;
  std::size_t summed = 0;
  trainer.on_progress = [&](const models::Progress& p) {
    last_report = Clock::now();
    last_report_step = p.step;
    if (p.step >= options.steps)  // the last step is done; the final evaluation follows
      trained_seconds = std::chrono::duration<double>(Clock::now() - started).count() - outside_seconds;
    loss_sum += p.loss;
    accuracy_sum += p.accuracy;
    ++summed;
    if (p.step % kReportEvery == 0 || p.step >= options.steps) {
      result.steps.push_back(static_cast<double>(p.step));
      result.losses.push_back(loss_sum / double(summed));
      result.lrs.push_back(p.lr);
      bar.update(p.step, loss_sum / double(summed), accuracy_sum / double(summed));
      loss_sum = accuracy_sum = 0;
      summed = 0;
    }
    if (stop_requested() && p.step < options.steps) {
      if (summed) bar.update(p.step, loss_sum / double(summed), accuracy_sum / double(summed));  // the step reached
      throw StopAfterStep{};
    }
  };
  trainer.on_evaluation = [&](const models::Evaluation& e) {
    if (e.step >= options.steps) return;  // the final one is printed by the caller
    const Clock::time_point since = e.step == last_report_step ? last_report : Clock::now();
    bar.finish();
    const WordScores w = word_scores(e, task.split.test, bpe);
    std::printf("  eval at step %zu: exact match %.1f%%, token accuracy %.1f%%, BLEU %.2f\n", e.step,
                100 * w.overall.exact_match(), 100 * e.overall.token_accuracy(), w.overall.bleu_percent());
    outside(since);
  };
  try {
    const SigintCatcher catcher;
    trainer.train();  // ends with an evaluation and a checkpoint at the last step
  } catch (const StopAfterStep&) {
    bar.finish();
    trainer.on_checkpoint();  // the step reached, committed as every checkpoint is (one rename)
    throw Stopped{"attn: stopped by Ctrl-C at step " + std::to_string(trainer.step()) + " of " +
                      std::to_string(options.steps) + "; the checkpoint in " + out + " holds step " +
                      std::to_string(trainer.step()) + ". Resume it with:\n  " + shell_word(program_name) +
                      " train --resume " + shell_word(out),
                  130};
  }
  bar.finish();
  const std::size_t trained = trainer.step() - first_step;
  std::printf("training time: %zu steps in %.1f s (%.2f steps/s; evaluations and checkpoints not counted)\n",
              trained, trained_seconds, trained_seconds > 0 ? double(trained) / trained_seconds : 0.0);
  result.evaluation = trainer.last_evaluation();
  result.scores = word_scores(result.evaluation, task.split.test, bpe);
  const std::vector<std::string> plots = write_curves(out, result, task.config.at("name") == "tsv");
  std::cout << "plots:";
  for (const auto& p : plots) std::cout << " " << p;
  std::cout << std::endl;
  return result;
}

std::vector<std::string> write_curves(const std::string& dir, const TrainResult& result, bool bleu) {
  const std::string from =
      result.steps.empty() || result.steps.front() <= 10 ? "" : " (from step " + format_step(result.steps.front()) + ")";
  std::vector<std::string> written;
  auto save = [&](const std::string& name, const std::string& svg) {
    written.push_back(dir + "/" + name);
    write_own_file(written.back(), svg);  // the run's own plots: replaced, never written through a link
  };
  viz::LinePlotOptions loss;
  loss.title = "training loss" + from;
  loss.x_label = "step";
  loss.y_label = "cross-entropy";
  save("loss.svg", viz::line_plot_svg({{"train", result.steps, result.losses}}, loss));
  viz::LinePlotOptions lr;
  lr.title = "learning rate" + from;
  lr.x_label = "step";
  lr.y_label = "lr";
  lr.y_from_zero = true;
  save("lr.svg", viz::line_plot_svg({{"lr", result.steps, result.lrs}}, lr));
  viz::Series exact{"exact match", {}, {}}, bleu_series{"BLEU", {}, {}};
  for (const auto& [len, c] : result.scores.by_length) {  // on words (cli/word_scores.hpp)
    exact.x.push_back(static_cast<double>(len));
    exact.y.push_back(100 * c.exact_match());
    bleu_series.x.push_back(static_cast<double>(len));
    bleu_series.y.push_back(c.bleu_percent());
  }
  viz::LinePlotOptions by_length;
  by_length.title = "held-out exact match by source length";
  by_length.x_label = "source length (words)";
  by_length.y_label = "exact match (%)";
  by_length.y_from_zero = true;
  by_length.markers = true;
  save("accuracy_by_length.svg", viz::line_plot_svg({exact}, by_length));
  if (bleu) {
    by_length.title = "held-out BLEU by source length";
    by_length.y_label = "BLEU";
    save("bleu_by_length.svg", viz::line_plot_svg({bleu_series}, by_length));
  }
  return written;
}

void add_train_command(CLI::App& app) {
  struct Options {
    std::string model = "bahdanau", task = "reverse", out, resume, dtype = "float32";
    std::uint64_t steps = 2000, batch_size = 64, eval_every = 500, checkpoint_every = 500, warmup = 0;
    double lr = 3e-3, label_smoothing = 0.0, clip = 1.0;
    std::uint64_t seed = 1;
    std::vector<std::string> settings;
    std::uint64_t min_length = 0, max_length = 0, n_train = 0;
    bool skip_malformed = false, overwrite = false;
    // FILE.tsv only
    bool lowercase = true, split_punctuation = true, char_level = false;
    double valid_fraction = 0.05;
    std::string test_file;
    std::uint64_t min_freq = 1, max_vocab = 0, bpe = 0;
    // FILE.jsonl (document classifiers) only
    std::uint64_t epochs = 12, max_sentences = 20, max_words = 40;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("train", "Train a chapter's model on a task; checkpoints go to --out");
  cmd->add_option("--model", o->model, model_help())->capture_default_str();
  cmd->add_option("--task", o->task,
                  task_list_help() + " (shapes: pictures of coloured shapes with captions, drawn from --seed; speech: "
                  "spoken digits, made with espeak-ng; FILE.tsv: source<TAB>target lines, "
                  "or 'english ||| german<TAB>french' for multi-source; FILE.jsonl: labelled documents, "
                  "data/documents.hpp, e.g. the pinned manpages.jsonl; FILE.txt: UTF-8 text for a language model, a "
                  "line a sentence)")
      ->capture_default_str();
  add_count(cmd, "--steps", o->steps, 1, kMaxSteps,
            "optimizer steps in all (with --resume: the new total; not for the models that train in --epochs)");
  add_count(cmd, "--batch-size", o->batch_size, 1, kMaxBatch,
            "examples per optimizer step (han, flat-attention, bag-of-words: 32 unless given)");
  add_real(cmd, "--lr", o->lr, Bounds::positive(), "Adam's learning rate (with --warmup: its peak)");
  add_count(cmd, "--warmup", o->warmup, 0, kMaxSteps,
            "steps of linear warm-up to --lr, then lr * sqrt(warmup / step) (Vaswani et al.; 0: constant lr)");
  add_real(cmd, "--clip", o->clip, Bounds::non_negative(), "max gradient norm (0: off)");
  add_real(cmd, "--label-smoothing", o->label_smoothing, {0.0, 1.0, false, true},
           "the share of each target's probability spread evenly over the vocabulary (0: off; not for copying models)");
  add_count(cmd, "--eval-every", o->eval_every, 0, kMaxSteps, "steps between evaluations (0: at the end only)");
  add_count(cmd, "--checkpoint-every", o->checkpoint_every, 0, kMaxSteps,
            "steps between checkpoints (0: at the end only)");
  cmd->add_option("--dtype", o->dtype, "float32 (fast) or float64")->check(CLI::IsMember({"float32", "float64"}))
      ->capture_default_str();
  add_count(cmd, "--min-length", o->min_length, 1, 10000, "shortest source (copy/reverse/sort; default 5)")
      ->default_str("");  // 0 stands for "not given": the task's own default applies
  add_count(cmd, "--max-length", o->max_length, 1, 10000,
            "longest source (copy/reverse/sort; default 15); FILE.tsv: pairs with a side longer than this are "
            "dropped, and train says how many (default 12); FILE.txt: the predictions in a chunk (default 64 words, "
            "32 characters)")
      ->default_str("");
  add_count(cmd, "--n-train", o->n_train, 1, kMaxExamples,
            "training examples to generate (not for FILE.tsv or FILE.jsonl; shapes: pictures to draw, default 5000; speech: utterances to speak, at most "
            "100,000 and no more than half of this machine's memory holds, about 50 kB each; default: the task's own)")
      ->default_str("");
  cmd->add_flag("--skip-malformed", o->skip_malformed, "FILE.tsv: skip malformed lines instead of stopping at the first");
  add_switch(cmd, "--lowercase", "--no-lowercase", o->lowercase, "FILE.tsv: lowercase both sides");
  add_switch(cmd, "--split-punctuation", "--no-split-punctuation", o->split_punctuation,
             "FILE.tsv: punctuation and French elisions as words of their own");
  cmd->add_flag("--char-level", o->char_level, "FILE.tsv: one token per character instead of per word");
  add_real(cmd, "--valid-fraction", o->valid_fraction, {0.0, 1.0, true, true},
           "FILE.tsv: the share of pairs held out for evaluation (default 0.05); FILE.jsonl: the share of the "
           "training documents that chooses the epoch (default 0.125; a fifth of each class is the test); FILE.txt: "
           "the share of lines before the last tenth (the test) that chooses the epoch (default 0.1)");
  cmd->add_option("--test-file", o->test_file, "FILE.tsv: held-out pairs from this file instead (all of FILE trains)");
  add_count(cmd, "--min-freq", o->min_freq, 1, kMaxExamples,
            "words seen fewer times in training read as <unk> (default: 1 for FILE.tsv and FILE.txt, 2 for FILE.jsonl)")
      ->default_str("");  // the default depends on the task: the help says which
  add_count(cmd, "--max-vocab", o->max_vocab, 0, 100000,
            "FILE.tsv: keep the most frequent words per side only; FILE.txt: the most frequent tokens (default 0: all)");
  add_count(cmd, "--bpe", o->bpe, 1, kMaxMerges,
            "FILE.tsv: learn N joint byte-pair merges from the training split and train on subwords "
            "(--max-length, --min-freq and --max-vocab then count subwords; kept by --resume)");
  add_count(cmd, "--epochs", o->epochs, 1, kMaxSteps,
            "FILE.jsonl, shapes, speech and FILE.txt: passes over the training set (default 12, FILE.txt and shapes 10; "
            "FILE.jsonl keeps the epoch with the best validation accuracy, shapes the best validation BLEU, FILE.txt the "
            "lowest validation perplexity; with --resume: the new total)")
      ->default_str("");
  add_count(cmd, "--max-sentences", o->max_sentences, 0, 100000,
            "FILE.jsonl: read the first N sentences of each document (0: all; default 20)");
  add_count(cmd, "--max-words", o->max_words, 0, 100000,
            "FILE.jsonl: cut each sentence to its first N words (0: all; default 40)");
  cmd->add_option("--set", o->settings, "a model setting KEY=VALUE, e.g. --set decoder_dim=128 (repeatable)");
  add_count(cmd, "--seed", o->seed, 0, kMaxSeed,
            "seeds the data, the split, the initial weights and the order of the batches (the same seed, the same run)");
  cmd->add_option("--out", o->out, "the run folder (new or empty, unless --overwrite)");
  cmd->add_flag("--overwrite", o->overwrite, "replace the run in --out (its checkpoint is kept until the first new one)");
  cmd->add_option("--resume", o->resume, "continue the run in this folder (to --steps)");
  cmd->callback([o, cmd] {
    if (cmd->count("--resume")) {
      // The run continues as its config.json says: only the number of steps (or epochs) may change.
      for (const char* flag : {"--model", "--task", "--set", "--batch-size", "--lr", "--clip", "--label-smoothing",
                               "--dtype", "--min-length", "--max-length", "--n-train", "--seed", "--out",
                               "--skip-malformed", "--eval-every", "--checkpoint-every", "--overwrite", "--lowercase",
                               "--no-lowercase", "--split-punctuation", "--no-split-punctuation", "--char-level",
                               "--valid-fraction", "--test-file", "--min-freq", "--max-vocab", "--warmup", "--max-sentences", "--max-words"})
        if (cmd->count(flag))
          throw ValueError(std::string("train --resume: ") + flag +
                           " cannot change a run (it continues as its config.json describes; only --steps, or --epochs "
                           "for a run in epochs, may change)");
      if (o->resume.empty()) throw ValueError("--resume: expected a run folder, got an empty value");
      if (cmd->count("--bpe")) check_resumed_bpe(o->resume, o->bpe);
      const std::shared_ptr<ResumedRun> run = open_to_resume(o->resume);
      const std::string name = run->model_name();
      const models::TrainableModel* entry = models::find_trainable_model(name);
      const bool in_epochs = trains_in_epochs(name);
      const char* wrong = in_epochs ? "--steps" : "--epochs";
      if (cmd->count(wrong))
        throw ValueError(std::string("train --resume: ") + wrong + " does not apply to this " + name + " run (it trains in " +
                         (in_epochs ? "epochs: give the new total with --epochs)" : "steps: give the new total with --steps)"));
      const std::uint64_t total = cmd->count("--epochs") ? o->epochs : cmd->count("--steps") ? o->steps : 0;
      RunStart start;
      start.resumed = run;
      start.new_total = total;
      if (entry && entry->family == models::ModelFamily::Documents) return train_documents_run({}, o->resume, start);
      if (entry && entry->family == models::ModelFamily::Speech) return train_speech_run({}, o->resume, start);
      if (entry && entry->family == models::ModelFamily::Scenes) return train_scenes_run({}, o->resume, start);
      if (entry && entry->family == models::ModelFamily::Grid) return train_grid_run({}, o->resume, start);
      if (entry && entry->family == models::ModelFamily::LanguageModel)
        return train_language_model_run({}, o->resume, start);
      const TrainResult r = train_run({}, o->resume, TrainMode::Resume, total, run);
      std::printf("exact match on the test set: %.1f%%, BLEU %.2f\n", 100 * r.scores.overall.exact_match(),
                  r.scores.overall.bleu_percent());
      return;
    }
    if (o->out.empty()) throw ValueError("train: --out DIR is required (where checkpoints go)");
    // The names first, each against the registry (models/registry.hpp), which lists them all.
    const models::TrainableModel* entry = models::find_trainable_model(o->model);
    if (!entry) throw ValueError("unknown model '" + o->model + "' (models: " + models::model_list() + ")");
    const std::vector<std::string>& tasks = models::task_names();
    if (std::find(tasks.begin(), tasks.end(), models::task_kind(o->task)) == tasks.end())
      throw ValueError("unknown task '" + o->task + "' (tasks: " + models::task_list() + "; FILE is a path)");
    RunStart start;
    start.overwrite = o->overwrite;
    // The config of a model that trains in epochs, its chapter's lr and clipping unless given (32 a batch).
    auto epoch_config = [&](const nlohmann::json& model, const nlohmann::json& task, double lr, double clip) {
      return nlohmann::json{
          {"format", "attn-checkpoint"}, {"model", model}, {"task", task}, {"seed", o->seed}, {"dtype", o->dtype},
          {"train",
           {{"epochs", o->epochs},
            {"batch_size", cmd->count("--batch-size") ? o->batch_size : 32},
            {"lr", cmd->count("--lr") ? o->lr : lr},
            {"clip_norm", cmd->count("--clip") ? o->clip : clip}}}};
    };
    if (is_document_model(o->model) || is_document_task_file(o->task)) {  // chapter 18 (cli/documents.hpp)
      if (!is_document_model(o->model) || !is_document_task_file(o->task))
        throw ValueError(is_document_model(o->model)
                             ? "--model " + o->model + " classifies documents: give it a FILE.jsonl of labelled "
                               "documents with --task (e.g. the pinned manpages.jsonl of tools/setup.sh --with-corpus)"
                             : "--task " + o->task + " holds documents to classify: train " +
                                   models::models_for_task(o->task) + " on it (--model)");
      for (const char* flag : {"--steps", "--warmup", "--label-smoothing", "--eval-every", "--checkpoint-every",
                               "--min-length", "--max-length", "--n-train", "--skip-malformed",
                               "--split-punctuation", "--no-split-punctuation", "--char-level", "--test-file",
                               "--max-vocab", "--bpe"})
        if (cmd->count(flag))
          throw ValueError(std::string("train: ") + flag + " does not apply to a document classifier (it trains "
                           "in --epochs on a FILE.jsonl)");
      nlohmann::json model = default_document_model_config(o->model);
      for (const auto& setting : o->settings) apply_setting(model, setting);
      nlohmann::json task = default_document_task_config(o->task);
      task["max_sentences"] = o->max_sentences;
      task["max_words"] = o->max_words;
      if (cmd->count("--min-freq")) task["min_freq"] = o->min_freq;
      task["lowercase"] = o->lowercase;
      if (cmd->count("--valid-fraction")) task["valid_fraction"] = o->valid_fraction;
      // The chapter's settings unless given: Adam 2e-3, 32 documents a batch, clipping at 5.
      return train_documents_run(epoch_config(model, task, 2e-3, 5.0), o->out, start);
    }
    if (models::is_language_model(o->model) || is_text_task_file(o->task)) {  // chapters 15 and 20 (cli/language_model.hpp)
      if (!models::is_language_model(o->model) || !is_text_task_file(o->task))
        throw ValueError(models::is_language_model(o->model)
                             ? "--model " + o->model + " is a language model: give it a FILE.txt of UTF-8 text with --task"
                             : "--task " + o->task + " is a text to model: train " + models::models_for_task(o->task) +
                                   " on it (--model)");
      for (const char* flag : {"--steps", "--warmup", "--label-smoothing", "--eval-every", "--checkpoint-every",
                               "--min-length", "--n-train", "--skip-malformed", "--lowercase", "--no-lowercase",
                               "--split-punctuation", "--no-split-punctuation", "--char-level", "--test-file", "--bpe",
                               "--max-sentences", "--max-words"})
        if (cmd->count(flag))
          throw ValueError(std::string("train: ") + flag + " does not apply to a language model (it trains in --epochs "
                           "on a FILE.txt)");
      nlohmann::json model = models::default_language_model_config(o->model);
      for (const auto& setting : o->settings) apply_setting(model, setting);
      nlohmann::json task = default_text_task_config(o->task, o->model);
      if (cmd->count("--max-length")) {
        if (o->max_length > 4096)
          throw ValueError("--max-length " + std::to_string(o->max_length) + ": a chunk of a FILE.txt holds at most "
                           "4096 predictions (a window of text, as the model reads it)");
        task["length"] = o->max_length;
      }
      if (cmd->count("--valid-fraction")) task["valid_fraction"] = o->valid_fraction;
      if (cmd->count("--min-freq")) task["min_freq"] = o->min_freq;
      if (cmd->count("--max-vocab")) task["max_vocab"] = o->max_vocab;
      // Chapter 20's settings unless given: Adam 2e-3, 32 chunks a batch, clipping at 1; 10 epochs.
      nlohmann::json config = epoch_config(model, task, 2e-3, 1.0);
      if (!cmd->count("--epochs")) config["train"]["epochs"] = 10;
      return train_language_model_run(config, o->out, start);
    }
    if (o->model == "las" || o->task == "speech") {  // chapter 16 (cli/speech.hpp)
      if (o->model != "las" || o->task != "speech")
        throw ValueError(o->model == "las" ? "--model las transcribes speech: train it with --task speech"
                                           : "--task speech goes with --model las (Listen, Attend and Spell)");
      for (const char* flag : {"--steps", "--warmup", "--label-smoothing", "--eval-every", "--checkpoint-every",
                               "--min-length", "--max-length", "--skip-malformed", "--lowercase", "--no-lowercase",
                               "--split-punctuation", "--no-split-punctuation", "--char-level", "--valid-fraction", "--test-file", "--min-freq", "--max-vocab", "--bpe",
                               "--max-sentences", "--max-words"})
        if (cmd->count(flag))
          throw ValueError(std::string("train: ") + flag + " does not apply to --model las (it trains in --epochs on "
                           "spoken digits)");
      nlohmann::json model = default_speech_model_config();
      for (const auto& setting : o->settings) apply_setting(model, setting);
      nlohmann::json task = default_speech_task_config();
      if (cmd->count("--n-train")) task["n_train"] = o->n_train;
      // The chapter's settings unless given: Adam 1e-3, 32 utterances a batch, clipping at 1.
      return train_speech_run(epoch_config(model, task, 1e-3, 1.0), o->out, start);
    }
    if (o->model == "show-attend-tell" || o->task == "shapes") {  // Show, Attend and Tell on pictures (cli/scenes.hpp)
      if (o->model != "show-attend-tell" || o->task != "shapes")
        throw ValueError(o->model == "show-attend-tell"
                             ? "--model show-attend-tell captions pictures: train it with --task shapes"
                             : "--task shapes goes with --model show-attend-tell (Show, Attend and Tell)");
      for (const char* flag : {"--steps", "--warmup", "--label-smoothing", "--eval-every", "--checkpoint-every",
                               "--min-length", "--max-length", "--skip-malformed", "--lowercase", "--no-lowercase",
                               "--split-punctuation", "--no-split-punctuation", "--char-level", "--valid-fraction",
                               "--test-file", "--min-freq", "--max-vocab", "--bpe", "--max-sentences", "--max-words"})
        if (cmd->count(flag))
          throw ValueError(std::string("train: ") + flag + " does not apply to --model show-attend-tell (it trains in "
                           "--epochs on rendered scenes)");
      nlohmann::json model = default_scene_model_config();
      for (const auto& setting : o->settings) apply_setting(model, setting);
      nlohmann::json task = default_scene_task_config();
      if (cmd->count("--n-train")) task["n_train"] = o->n_train;
      // Unless given: Adam 1e-3, 32 pictures a batch, clipping at 5 (as chapter 4's captioner); 10 epochs.
      nlohmann::json config = epoch_config(model, task, 1e-3, 5.0);
      if (!cmd->count("--epochs")) config["train"]["epochs"] = 10;
      return train_scenes_run(config, o->out, start);
    }
    for (const char* flag : {"--epochs", "--max-sentences", "--max-words"})
      if (cmd->count(flag))
        throw ValueError(std::string("train: ") + flag + " is for the models that train in epochs: a document "
                         "classifier on a FILE.jsonl (--max-sentences, --max-words too), show-attend-tell on shapes, las "
                         "on speech and a language model on a FILE.txt");
    if ((o->model == "grid") != (o->task == "grid"))
      throw ValueError(o->model == "grid" ? "--model grid (the captioner of chapter 4) trains on --task grid only"
                                          : "task 'grid' goes with --model grid (the captioner of chapter 4), not "
                                            "with a sequence model");
    nlohmann::json model = o->model == "grid" ? default_grid_model_config() : model_defaults(o->model);
    if (std::any_of(o->settings.begin(), o->settings.end(), [](const std::string& s) { return s.rfind("sep_id=", 0) == 0; }))
      throw ValueError("--set sep_id: the id of <sep> is set by train from the vocabulary, not by hand");
    for (const auto& s : o->settings) apply_setting(model, s);
    if (o->model != "grid") check_settings(model, o->model, o->settings);
    nlohmann::json task = default_task_config(o->task);
    // A flag that does not apply to the task is an error, not silently ignored.
    for (const char* flag : {"--min-length", "--max-length", "--n-train", "--skip-malformed"}) {
      const std::string key = flag == std::string("--skip-malformed") ? "skip_malformed" : std::string(flag + 2);
      std::string field = key;
      for (char& c : field) c = c == '-' ? '_' : c;
      if (cmd->count(flag) && !task.contains(field))
        throw ValueError(std::string(flag) + " does not apply to the task '" + task.at("name").get<std::string>() + "'");
    }
    if (cmd->count("--min-length")) task["min_length"] = o->min_length;
    if (cmd->count("--max-length")) task["max_length"] = o->max_length;
    if (cmd->count("--n-train")) task["n_train"] = o->n_train;
    if (o->skip_malformed) task["skip_malformed"] = true;
    if (o->model == "multi-source") {
      if (task.at("name") != "tsv")
        throw ValueError("--model multi-source trains on a FILE.tsv of 'english ||| german<TAB>french' lines (attn "
                         "corpus gettext --second LANG writes one), not on the task '" + o->task + "'");
      if (cmd->count("--bpe") || o->char_level)
        throw ValueError("--model multi-source reads words: --bpe and --char-level do not apply");
      task["sources"] = model.value("sources", 2);
    }
    if (task.at("name") == "tsv") {
      if (cmd->count("--bpe") && o->char_level)
        throw ValueError("train: --bpe splits words into subwords; it does not go with --char-level");
      if (cmd->count("--bpe")) task["bpe"] = o->bpe;
      task["lowercase"] = o->lowercase;
      task["split_punctuation"] = o->split_punctuation && !o->char_level;
      task["char_level"] = o->char_level;
      task["test_fraction"] = o->valid_fraction;
      task["min_freq"] = o->min_freq;
      task["max_vocab"] = o->max_vocab;
      if (!o->test_file.empty())
        task["test_file"] = std::filesystem::absolute(o->test_file).lexically_normal().string();
    } else {
      for (const char* flag : {"--lowercase", "--no-lowercase", "--split-punctuation", "--no-split-punctuation",
                               "--char-level", "--valid-fraction", "--test-file", "--min-freq", "--max-vocab", "--bpe"})
        if (cmd->count(flag)) throw ValueError(std::string("train: ") + flag + " is for a FILE.tsv task only");
    }
    nlohmann::json config = {{"format", "attn-checkpoint"}, {"model", model}, {"task", task}, {"seed", o->seed},
                             {"dtype", o->dtype},
                             {"train",
                              {{"steps", o->steps},
                               {"batch_size", o->batch_size},
                               {"lr", o->lr},
                               {"clip_norm", o->clip},
                               {"label_smoothing", o->label_smoothing},
                               {"eval_every", o->eval_every},
                               {"checkpoint_every", o->checkpoint_every}}}};
    if (o->warmup > 0) config["train"]["warmup"] = o->warmup;  // written only when set: older configs stay as they were
    if (o->model == "grid") {
      if (o->warmup > 0) throw ValueError("--warmup does not apply to --model grid (its trainer has no schedule)");
      if (cmd->count("--label-smoothing")) throw ValueError("--label-smoothing does not apply to --model grid");
      config["train"].erase("label_smoothing");
      return train_grid_run(config, o->out, start);
    }
    const TrainResult r = train_run(config, o->out, o->overwrite ? TrainMode::Overwrite : TrainMode::New);
    std::printf("exact match on the test set: %.1f%%, BLEU %.2f  (checkpoint: %s)\n",
                100 * r.scores.overall.exact_match(), r.scores.overall.bleu_percent(), o->out.c_str());
  });
}

}  // namespace attn::cli
