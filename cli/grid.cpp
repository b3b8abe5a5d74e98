#include "grid.hpp"

#include "commands.hpp"
#include "output.hpp"
#include "parse.hpp"
#include "progress.hpp"
#include "run_config.hpp"

#include "../train/grid_train.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

namespace attn::cli {

namespace {

using nlohmann::json;

// One grid's features [9, D] as a batch of one [1, 9, D].
Tensor one_grid(const xt::xarray<double>& features, Dtype dtype) {
  xt::xarray<double> batch = features;
  batch.reshape({1, features.shape()[0], features.shape()[1]});  // [1, 9, D]
  return tensor(batch).to(dtype);
}

}  // namespace

void train_grid_run(json config, const std::string& out, const RunStart& start) {
  // Everything is checked and built before anything is written.
  std::string where;
  config = epoch_run_config(config, start, "steps", where);
  const TrainSettings s = read_train_settings(config, where);
  const json& task = config.at("task");
  const std::string task_where = start.resumed ? where + ": task" : "the grid task's settings (--task grid, --n-train)";
  const data::GridWorld world(world_options(task, task_where));
  const data::GridSplit split = grid_split(task, world, s.seed, task_where);
  const data::Vocab vocab = data::GridWorld::caption_vocab();
  manual_seed(s.seed);  // the weights, and hard attention's samples
  std::unique_ptr<models::GridCaptioner> model;
  try {
    model = make_grid_model(config.at("model"), vocab.size(), task, task_where);
  } catch (const std::bad_alloc&) {
    throw ValueError("--set: the grid captioner's sizes need more memory than this machine has");
  }
  if (s.dtype == "float32") model->to(Dtype::Float32);
  models::CaptionLossOptions loss;
  loss.doubly_stochastic = s.doubly_stochastic;
  models::EpochTrainerOptions options = epoch_trainer_options(s);
  options.checkpoint_every = s.checkpoint_every;
  models::EpochTrainer trainer(*model, models::grid_family(*model, split.train, vocab, s.batch_size, loss), options);

  const std::unique_ptr<RunLock> lock = begin_epoch_run(trainer, start, out, vocab_json_text(data::Vocab(), vocab));
  // Ctrl-C from here on is read after each step (and the line below says training has begun).
  std::optional<SigintCatcher> catcher(std::in_place);
  std::cout << "training grid (" << grid_attention_name(model->config.attention) << " attention, "
            << model->num_parameters() << " parameters, " << s.dtype << ") on grid: " << split.train.size()
            << " train / " << split.test.size() << " test grids, seed " << s.seed
            << (start.resumed ? ", resumed at step " + std::to_string(trainer.step()) : "") << std::endl;
  ProgressBar bar(options.steps, trainer.step());
  double loss_sum = 0, accuracy_sum = 0;  // the bar gets the mean of every 10 steps
  std::size_t summed = 0;
  trainer.on_step = [&](const models::EpochProgress& p) {
    loss_sum += p.loss;
    accuracy_sum += p.accuracy;
    ++summed;
    if (p.step % 10 == 0 || p.step == options.steps || stop_requested()) {
      bar.update(p.step, loss_sum / double(summed), accuracy_sum / double(summed));
      loss_sum = accuracy_sum = 0;
      summed = 0;
    }
  };
  try {
    train_epochs_in_run(trainer, out, config, data::Vocab(), vocab, options.steps);
  } catch (const Stopped&) {
    bar.finish();
    throw;
  }
  bar.finish();
  catcher.reset();  // the test evaluation that follows is not training: Ctrl-C stops it at once
  const models::GridEvaluation e = models::evaluate_grid_captioner(*model, split.test, vocab);
  std::printf("exact match on the test grids: %.1f%%, attention peak on the gold cell %.1f%%  (checkpoint: %s)\n",
              100 * e.overall.exact_match(), 100 * e.decoded_alignment.hit_rate(), out.c_str());
}

void eval_grid(Run& run, const std::string& predictions_file, bool overwrite, const std::string& dir) {
  const json& task = run.config.at("task");
  const std::string where = run.config_file + ": task";
  const data::GridWorld world(world_options(task, where));
  const data::GridSplit split = grid_split(task, world, run.config.at("seed").get<std::uint64_t>(), where);
  const models::GridEvaluation e = models::evaluate_grid_captioner(*run.captioner, split.test, run.tgt_vocab);
  std::printf("%zu test grids: exact match %.1f%%, token accuracy %.1f%%, loss %.4f\n", e.overall.sentences,
              100 * e.overall.exact_match(), 100 * e.overall.token_accuracy(), e.loss);
  std::printf("attention peak on the cell the word describes: %.1f%% (teacher forced), %.1f%% (greedy captions)\n",
              100 * e.alignment.hit_rate(), 100 * e.decoded_alignment.hit_rate());
  if (predictions_file.empty()) return;
  // Each held-out grid's gold caption and the greedy one, decoded as evaluate_grid_captioner decodes them
  // (at most the longest gold caption + 5 words).
  std::size_t longest = 0;
  for (const data::GridExample& g : split.test) longest = std::max(longest, g.caption.size());
  models::DecodeOptions options;
  options.max_len = longest + 5;
  std::string text;
  for (const data::GridExample& g : split.test) {
    const models::Hypothesis h =
        models::greedy_caption(*run.captioner, one_grid(g.features, run.captioner->dtype()), options).front();
    text += data::join(g.caption, " ") + "\t" + data::join(run.tgt_vocab.decode(h.tokens), " ") + "\n";
  }
  write_output(Output{"--predictions", predictions_file, overwrite}, text, {}, {dir});
  std::printf("wrote %s\n", predictions_file.c_str());
}

GridCaption caption_scene(Run& run, const std::string& scene) {
  const std::vector<data::GridObject> objects = data::parse_scene(scene);
  const data::GridWorld world(world_options(run.config.at("task"), run.config_file + ": task"));
  Generator gen(run.config.at("seed").get<std::uint64_t>());
  const Tensor features = one_grid(world.render(objects, gen), run.captioner->dtype());  // [1, 9, D]
  models::DecodeOptions options;
  options.max_len = 40;
  const models::Hypothesis h = models::greedy_caption(*run.captioner, features, options).front();
  GridCaption caption;
  caption.text = data::join(run.tgt_vocab.decode(h.tokens), " ");
  for (std::int64_t id : h.tokens) caption.words.push_back(run.tgt_vocab.token(id));
  caption.attention = models::attention_grid(h).to_array();  // [T, 3, 3]
  return caption;
}

}  // namespace attn::cli
