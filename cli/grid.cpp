#include "grid.hpp"

#include "parse.hpp"
#include "progress.hpp"
#include "run_config.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace attn::cli {

namespace {

using nlohmann::json;

constexpr std::uint64_t kMaxGridSize = 65536;  // embed_dim, decoder_dim, ...

const char* attention_name(models::GridAttention a) {
  return a == models::GridAttention::Soft ? "soft" : a == models::GridAttention::Hard ? "hard" : "hard-at-inference";
}

models::GridAttention attention_from_name(const std::string& name) {
  for (auto a : {models::GridAttention::Soft, models::GridAttention::Hard, models::GridAttention::HardAtInference})
    if (name == attention_name(a)) return a;
  throw ValueError("model config of 'grid': unknown attention '" + name + "' (soft, hard, hard-at-inference)");
}

data::GridOptions world_options(const json& task) {
  const Fields f(task, "task 'grid'");
  f.only({"name", "feature_dim", "noise", "min_objects", "max_objects", "embedding_seed", "n_train", "n_test"});
  data::GridOptions o;
  o.feature_dim = f.count_or("feature_dim", o.feature_dim, 1, 4096);
  o.noise = f.real_or("noise", o.noise, {0.0, 100.0});
  o.min_objects = f.count_or("min_objects", o.min_objects, 1, 9);
  o.max_objects = f.count_or("max_objects", o.max_objects, 1, 9);
  o.embedding_seed = f.count_or("embedding_seed", o.embedding_seed, 0, kMaxSeed);
  if (o.min_objects > o.max_objects)
    throw ValueError("task 'grid': min_objects " + std::to_string(o.min_objects) + " is more than max_objects " +
                     std::to_string(o.max_objects));
  return o;
}

data::GridSplit grid_split(const json& task, const data::GridWorld& world, std::uint64_t seed) {
  const Fields f(task, "task 'grid'");
  Generator gen(seed);
  return world.split(f.count_or("n_train", 2000, 1, kMaxExamples), f.count_or("n_test", 200, 1, 1000000), gen);
}

// One grid's features [9, D] as a batch of one [1, 9, D].
Tensor one_grid(const xt::xarray<double>& features, Dtype dtype) {
  xt::xarray<double> batch = features;
  batch.reshape({1, features.shape()[0], features.shape()[1]});  // [1, 9, D]
  return tensor(batch).to(dtype);
}

}  // namespace

json default_grid_model_config() {
  const models::GridCaptionerConfig c;
  return {{"model", "grid"},           {"embed_dim", c.embed_dim},
          {"encoder_dim", c.encoder_dim}, {"decoder_dim", c.decoder_dim},
          {"attention_dim", c.attention_dim}, {"attention", attention_name(c.attention)},
          {"soft_probability", c.soft_probability}};
}

json default_grid_task_config() {
  const data::GridOptions o;
  return {{"name", "grid"},
          {"feature_dim", o.feature_dim},
          {"noise", o.noise},
          {"min_objects", o.min_objects},
          {"max_objects", o.max_objects},
          {"embedding_seed", o.embedding_seed},
          {"n_train", 2000},
          {"n_test", 200}};
}

std::unique_ptr<models::GridCaptioner> make_grid_model(const json& model, std::size_t vocab, const json& task) {
  const json defaults = default_grid_model_config();
  for (const auto& item : model.items())
    if (!defaults.contains(item.key())) {
      std::string fields;
      for (const auto& d : defaults.items()) fields += fields.empty() ? d.key() : ", " + d.key();
      throw ValueError("model config of 'grid': unknown field '" + item.key() + "' (fields: " + fields + ")");
    }
  models::GridCaptionerConfig c;
  c.vocab = vocab;
  c.feature_dim = world_options(task).feature_dim;
  const Fields f(model, "model config of 'grid'");
  c.embed_dim = f.count_or("embed_dim", c.embed_dim, 1, kMaxGridSize);
  c.encoder_dim = f.count_or("encoder_dim", c.encoder_dim, 0, kMaxGridSize);  // 0: no encoder layer
  c.decoder_dim = f.count_or("decoder_dim", c.decoder_dim, 1, kMaxGridSize);
  c.attention_dim = f.count_or("attention_dim", c.attention_dim, 1, kMaxGridSize);
  c.attention = attention_from_name(f.has("attention") ? f.one_of("attention", {"soft", "hard", "hard-at-inference"}) : "soft");
  c.soft_probability = f.real_or("soft_probability", 0.0, {0.0, 1.0});
  return std::make_unique<models::GridCaptioner>(c);
}

void train_grid_run(const json& config, const std::string& out, bool overwrite) {
  // Everything is checked and built before anything is written.
  const TrainSettings s = read_train_settings(config, "the run's settings");
  const json& task = config.at("task");
  const data::GridWorld world(world_options(task));
  const data::GridSplit split = grid_split(task, world, s.seed);
  const data::Vocab vocab = data::GridWorld::caption_vocab();
  manual_seed(s.seed);  // the weights, and hard attention's samples
  std::unique_ptr<models::GridCaptioner> model;
  try {
    model = make_grid_model(config.at("model"), vocab.size(), task);
  } catch (const std::bad_alloc&) {
    throw ValueError("--set: the grid captioner's sizes need more memory than this machine has");
  }
  if (s.dtype == "float32") model->to(Dtype::Float32);
  models::GridTrainOptions options;
  options.steps = s.steps;
  options.batch_size = s.batch_size;
  options.lr = s.lr;
  options.clip_norm = s.clip_norm;
  options.seed = s.seed;
  options.log_every = 10;
  options.loss.doubly_stochastic = s.doubly_stochastic;

  check_out_folder(out, overwrite);
  const RunLock lock(out);
  check_out_folder(out, overwrite);  // again, now that no other process can write there
  std::cout << "training grid (" << attention_name(model->config.attention) << " attention, "
            << model->num_parameters() << " parameters, " << s.dtype << ") on grid: " << split.train.size()
            << " train / " << split.test.size() << " test grids, seed " << s.seed << std::endl;
  ProgressBar bar(options.steps);
  models::train_grid_captioner(*model, split.train, vocab, options,
                               [&](const models::Progress& p) { bar.update(p.step, p.loss, p.accuracy); });
  bar.finish();
  commit_checkpoint(out, config, data::Vocab(), vocab,
                    [&](const std::string& unit) { nn::save(*model, unit + "/model.npz"); });
  const models::GridEvaluation e = models::evaluate_grid_captioner(*model, split.test, vocab);
  std::printf("exact match on the test grids: %.1f%%, attention peak on the gold cell %.1f%%  (checkpoint: %s)\n",
              100 * e.overall.exact_match(), 100 * e.decoded_alignment.hit_rate(), out.c_str());
}

void eval_grid(Run& run) {
  const json& task = run.config.at("task");
  const data::GridWorld world(world_options(task));
  const data::GridSplit split = grid_split(task, world, run.config.at("seed").get<std::uint64_t>());
  const models::GridEvaluation e = models::evaluate_grid_captioner(*run.captioner, split.test, run.tgt_vocab);
  std::printf("%zu test grids: exact match %.1f%%, token accuracy %.1f%%, loss %.4f\n", e.overall.sentences,
              100 * e.overall.exact_match(), 100 * e.overall.token_accuracy(), e.loss);
  std::printf("attention peak on the cell the word describes: %.1f%% (teacher forced), %.1f%% (greedy captions)\n",
              100 * e.alignment.hit_rate(), 100 * e.decoded_alignment.hit_rate());
}

std::vector<data::GridObject> parse_scene(const std::string& text) {
  std::string spaced;
  for (char ch : text) spaced += ch == ',' ? std::string(" , ") : std::string(1, ch);
  const data::Tokens words = data::split_whitespace(data::to_lower(spaced));
  const auto& colours = data::GridWorld::colours();
  const auto& shapes = data::GridWorld::shapes();
  const std::string help =
      " (a scene is written as a caption: COLOUR SHAPE PLACE[, ...], colours: red green blue yellow, shapes: "
      "square circle triangle, places: top left, top center, ..., center, ..., bottom right)";
  std::vector<data::GridObject> objects;
  std::size_t i = 0;
  while (i < words.size()) {
    data::GridObject o;
    const auto colour = std::find(colours.begin(), colours.end(), words[i]);
    if (colour == colours.end()) throw ValueError("scene: '" + words[i] + "' is not a colour" + help);
    if (++i == words.size()) throw ValueError("scene: a shape must follow '" + words[i - 1] + "'" + help);
    const auto shape = std::find(shapes.begin(), shapes.end(), words[i]);
    if (shape == shapes.end()) throw ValueError("scene: '" + words[i] + "' is not a shape" + help);
    data::Tokens place;
    for (++i; i < words.size() && words[i] != ","; ++i) place.push_back(words[i]);
    if (i < words.size()) ++i;  // the ","
    o.colour = static_cast<std::size_t>(colour - colours.begin());
    o.shape = static_cast<std::size_t>(shape - shapes.begin());
    o.cell = 9;
    for (std::size_t cell = 0; cell < 9; ++cell)
      if (data::GridWorld::cell_words(cell) == place) o.cell = cell;
    if (o.cell == 9) throw ValueError("scene: '" + data::join(place, " ") + "' is not a place in the grid" + help);
    for (const auto& other : objects)
      if (other.cell == o.cell) throw ValueError("scene: two objects at '" + data::join(place, " ") + "'");
    objects.push_back(o);
  }
  if (objects.empty()) throw ValueError("scene: empty" + help);
  std::sort(objects.begin(), objects.end());
  return objects;
}

GridCaption caption_scene(Run& run, const std::string& scene) {
  const std::vector<data::GridObject> objects = parse_scene(scene);
  const data::GridWorld world(world_options(run.config.at("task")));
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
