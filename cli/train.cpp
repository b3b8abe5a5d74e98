// `attn train` (and --resume): any model on any task, with a progress bar,
// periodic evaluation and checkpoints in --out.
#include "commands.hpp"
#include "progress.hpp"

#include <filesystem>
#include <iostream>

namespace attn::cli {

namespace {

// "decoder_dim=128" -> config["decoder_dim"] = 128 (JSON values; bare words are strings).
void apply_setting(nlohmann::json& model, const std::string& setting) {
  const auto eq = setting.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ValueError("--set expects KEY=VALUE, got '" + setting + "'");
  const std::string key = setting.substr(0, eq), text = setting.substr(eq + 1);
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    value = text;
  }
  model[key] = value;
}

}  // namespace

TrainResult train_run(nlohmann::json config, const std::string& out, bool resume) {
  const std::uint64_t seed = config.at("seed");
  manual_seed(seed);
  TaskData task = make_task(config.at("task"), seed);
  config["task"] = task.config;  // with the corpus' checksum
  if (!task.warning.empty()) std::cout << "warning: " << task.warning << std::endl;
  std::unique_ptr<models::Seq2Seq> model =
      models::make_model(config.at("model"), task.src_vocab.size(), task.tgt_vocab.size());
  if (config.value("dtype", "float32") == "float32") model->to(Dtype::Float32);

  const nlohmann::json& t = config.at("train");
  models::TrainerOptions options;
  options.steps = t.at("steps");
  options.batch_size = t.at("batch_size");
  options.lr = t.at("lr");
  options.clip_norm = t.value("clip_norm", 1.0);
  options.label_smoothing = t.value("label_smoothing", 0.0);
  options.seed = seed;
  options.log_every = 10;
  options.eval_every = t.value("eval_every", 0);
  options.checkpoint_every = t.value("checkpoint_every", 0);
  options.checkpoint_path = out + "/model";
  std::size_t longest = 0;  // evaluation decodes no further than a Transformer's positions reach
  for (const auto& e : task.split.test) longest = std::max(longest, e.src.size());
  options.eval.max_len = decode_limit(config.at("model"), longest);
  std::filesystem::create_directories(out);
  save_run_description(out, config, task.src_vocab, task.tgt_vocab);

  models::Trainer trainer(*model, task.split.train, task.src_vocab, task.tgt_vocab, options);
  trainer.set_eval_data(task.split.test);
  if (resume) trainer.load_checkpoint(out + "/model");

  std::cout << "training " << config["model"]["model"].get<std::string>() << " (" << model->num_parameters()
            << " parameters, " << config.value("dtype", "float32") << ") on " << task.config.at("name").get<std::string>()
            << ": " << task.split.train.size() << " train / " << task.split.test.size() << " test examples, seed "
            << seed << (resume ? ", resumed at step " + std::to_string(trainer.step()) : "") << std::endl;
  TrainResult result;
  ProgressBar bar(options.steps, trainer.step());
  trainer.on_progress = [&](const models::Progress& p) {
    result.steps.push_back(static_cast<double>(p.step));
    result.losses.push_back(p.loss);
    bar.update(p.step, p.loss, p.accuracy);
  };
  trainer.on_evaluation = [&](const models::Evaluation& e) {
    if (e.step >= options.steps) return;  // the final one is printed by the caller
    bar.finish();
    std::printf("  eval at step %zu: exact match %.1f%%, token accuracy %.1f%%, BLEU %.2f\n", e.step,
                100 * e.overall.exact_match(), 100 * e.overall.token_accuracy(),
                100 * models::bleu_from_stats(e.bleu).score);
  };
  trainer.train();
  bar.finish();
  result.evaluation = trainer.evaluate_now();
  trainer.save_checkpoint(out + "/model");
  return result;
}

void add_train_command(CLI::App& app) {
  struct Options {
    std::string model = "bahdanau", task = "reverse", out, resume, dtype = "float32";
    std::size_t steps = 2000, batch_size = 64, eval_every = 500, checkpoint_every = 500;
    double lr = 3e-3, label_smoothing = 0.0, clip = 1.0;
    std::uint64_t seed = 1;
    std::vector<std::string> settings;
    std::size_t min_length = 0, max_length = 0, n_train = 0;
    bool skip_malformed = false;
    // FILE.tsv only
    bool lowercase = true, split_punctuation = true, char_level = false;
    double valid_fraction = 0.05;
    std::string test_file;
    std::size_t min_freq = 1, max_vocab = 0;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("train", "Train a chapter's model on a task; checkpoints go to --out");
  cmd->add_option("--model", o->model, "seq2seq, bahdanau, luong, luong-local, transformer, or grid (with --task grid)")
      ->capture_default_str();
  cmd->add_option("--task", o->task, "copy, reverse, sort, dates, grid, or a FILE.tsv of source<TAB>target lines")
      ->capture_default_str();
  cmd->add_option("--steps", o->steps, "optimizer steps in all")->check(count_check())->capture_default_str();
  cmd->add_option("--batch-size", o->batch_size)->check(count_check())->capture_default_str();
  cmd->add_option("--lr", o->lr, "Adam's learning rate")->capture_default_str();
  cmd->add_option("--clip", o->clip, "max gradient norm (0: off)")->capture_default_str();
  cmd->add_option("--label-smoothing", o->label_smoothing)->capture_default_str();
  cmd->add_option("--eval-every", o->eval_every, "steps between evaluations (grid: at the end only)")
      ->check(count_check())->capture_default_str();
  cmd->add_option("--checkpoint-every", o->checkpoint_every, "steps between checkpoints (grid: at the end only)")
      ->check(count_check())->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "float32 (fast) or float64")->check(CLI::IsMember({"float32", "float64"}))
      ->capture_default_str();
  cmd->add_option("--min-length", o->min_length, "shortest source (copy/reverse/sort)")->check(count_check());
  cmd->add_option("--max-length", o->max_length, "longest source (copy/reverse/sort; FILE.tsv: longer pairs dropped)")
      ->check(count_check());
  cmd->add_option("--n-train", o->n_train, "training examples to generate")->check(count_check());
  cmd->add_flag("--skip-malformed", o->skip_malformed, "FILE.tsv: skip malformed lines instead of stopping at the first");
  cmd->add_flag("--lowercase,!--no-lowercase", o->lowercase, "FILE.tsv: lowercase both sides (default: on)");
  cmd->add_flag("--split-punctuation,!--no-split-punctuation", o->split_punctuation,
                "FILE.tsv: punctuation and French elisions as words of their own (default: on)");
  cmd->add_flag("--char-level", o->char_level, "FILE.tsv: one token per character instead of per word");
  cmd->add_option("--valid-fraction", o->valid_fraction, "FILE.tsv: the share of pairs held out for evaluation")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  cmd->add_option("--test-file", o->test_file, "FILE.tsv: held-out pairs from this file instead (all of FILE trains)");
  cmd->add_option("--min-freq", o->min_freq, "FILE.tsv: words seen fewer times in training read as <unk>")
      ->check(count_check())->capture_default_str();
  cmd->add_option("--max-vocab", o->max_vocab, "FILE.tsv: keep the most frequent words per side only (0: all)")
      ->check(count_check())->capture_default_str();
  cmd->add_option("--set", o->settings, "a model setting KEY=VALUE, e.g. --set decoder_dim=128 (repeatable)");
  cmd->add_option("--seed", o->seed)->check(count_check())->capture_default_str();
  cmd->add_option("--out", o->out, "the checkpoint directory");
  cmd->add_option("--resume", o->resume, "continue the run in this checkpoint directory (to --steps)");
  cmd->callback([o, cmd] {
    if (!o->resume.empty()) {
      // The run continues as its config.json says: only the number of steps may change.
      for (const char* flag : {"--model", "--task", "--set", "--batch-size", "--lr", "--clip", "--label-smoothing",
                               "--dtype", "--min-length", "--max-length", "--n-train", "--seed", "--out",
                               "--skip-malformed", "--eval-every", "--checkpoint-every", "--lowercase",
                               "--split-punctuation", "--char-level", "--valid-fraction", "--test-file", "--min-freq",
                               "--max-vocab"})
        if (cmd->count(flag))
          throw ValueError(std::string("train --resume: ") + flag +
                           " cannot change a run (it continues as its config.json describes; only --steps may change)");
      nlohmann::json config = read_json(o->resume + "/config.json");
      if (!config.is_object() || !config.contains("train") || !config.contains("model"))
        throw IOError(o->resume + "/config.json: not an attn checkpoint description");
      if (config["model"].value("model", "") == "grid")
        throw ValueError("train --resume: the grid captioner's training cannot resume (models/grid_train keeps no "
                         "optimizer state); train again with more --steps");
      if (cmd->count("--steps")) config["train"]["steps"] = o->steps;
      const TrainResult r = train_run(config, o->resume, true);
      std::printf("exact match on the test set: %.1f%%, BLEU %.2f\n", 100 * r.evaluation.overall.exact_match(),
                  100 * models::bleu_from_stats(r.evaluation.bleu).score);
      return;
    }
    if (o->out.empty()) throw ValueError("train: --out DIR is required (where checkpoints go)");
    if ((o->model == "grid") != (o->task == "grid"))
      throw ValueError(o->model == "grid" ? "--model grid (the captioner of chapter 4) trains on --task grid only"
                                          : "task 'grid' goes with --model grid (the captioner of chapter 4), not "
                                            "with a sequence model");
    nlohmann::json model = o->model == "grid" ? default_grid_model_config() : models::default_model_config(o->model);
    for (const auto& s : o->settings) apply_setting(model, s);
    nlohmann::json task = default_task_config(o->task);
    if (o->model == "grid") make_grid_model(model, 8, task);  // checks the settings before any data is made
    else models::make_model(model, 8, 8);
    if (o->min_length) task["min_length"] = o->min_length;
    if (o->max_length) task["max_length"] = o->max_length;
    if (o->n_train) task["n_train"] = o->n_train;
    if (o->skip_malformed) task["skip_malformed"] = true;
    if (task.at("name") == "tsv") {
      task["lowercase"] = o->lowercase;
      task["split_punctuation"] = o->split_punctuation && !o->char_level;
      task["char_level"] = o->char_level;
      task["test_fraction"] = o->valid_fraction;
      task["min_freq"] = o->min_freq;
      task["max_vocab"] = o->max_vocab;
      if (!o->test_file.empty())
        task["test_file"] = std::filesystem::absolute(o->test_file).lexically_normal().string();
    } else {
      for (const char* flag : {"--lowercase", "--split-punctuation", "--char-level", "--valid-fraction", "--test-file",
                               "--min-freq", "--max-vocab"})
        if (cmd->count(flag)) throw ValueError(std::string("train: ") + flag + " is for a FILE.tsv task only");
    }
    nlohmann::json config = {{"model", model}, {"task", task}, {"seed", o->seed}, {"dtype", o->dtype},
                             {"train",
                              {{"steps", o->steps},
                               {"batch_size", o->batch_size},
                               {"lr", o->lr},
                               {"clip_norm", o->clip},
                               {"label_smoothing", o->label_smoothing},
                               {"eval_every", o->eval_every},
                               {"checkpoint_every", o->checkpoint_every}}}};
    if (o->model == "grid") return train_grid_run(config, o->out);
    const TrainResult r = train_run(config, o->out, false);
    std::printf("exact match on the test set: %.1f%%, BLEU %.2f  (checkpoint: %s)\n",
                100 * r.evaluation.overall.exact_match(), 100 * models::bleu_from_stats(r.evaluation.bleu).score,
                o->out.c_str());
  });
}

}  // namespace attn::cli
