#include "grid.hpp"

#include "progress.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace attn::cli {

namespace {

using nlohmann::json;

const char* attention_name(models::GridAttention a) {
  return a == models::GridAttention::Soft ? "soft" : a == models::GridAttention::Hard ? "hard" : "hard-at-inference";
}

models::GridAttention attention_from_name(const std::string& name) {
  for (auto a : {models::GridAttention::Soft, models::GridAttention::Hard, models::GridAttention::HardAtInference})
    if (name == attention_name(a)) return a;
  throw ValueError("model config of 'grid': unknown attention '" + name + "' (soft, hard, hard-at-inference)");
}

// A whole number >= 0 from a config (json's get<std::size_t>() would turn -4 into 2^64 - 4).
std::size_t size_field(const json& config, const char* what, const char* key, std::size_t fallback) {
  if (!config.contains(key)) return fallback;
  const json& v = config.at(key);
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
    throw ValueError(std::string(what) + ": field '" + key + "' must be a whole number >= 0, got " + v.dump());
  return v.get<std::size_t>();
}

data::GridOptions world_options(const json& task) {
  data::GridOptions o;
  o.feature_dim = size_field(task, "task 'grid'", "feature_dim", o.feature_dim);
  o.noise = task.value("noise", o.noise);
  o.min_objects = size_field(task, "task 'grid'", "min_objects", o.min_objects);
  o.max_objects = size_field(task, "task 'grid'", "max_objects", o.max_objects);
  o.embedding_seed = size_field(task, "task 'grid'", "embedding_seed", o.embedding_seed);
  return o;
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
  const char* what = "model config of 'grid'";
  c.embed_dim = size_field(model, what, "embed_dim", c.embed_dim);
  c.encoder_dim = size_field(model, what, "encoder_dim", c.encoder_dim);
  c.decoder_dim = size_field(model, what, "decoder_dim", c.decoder_dim);
  c.attention_dim = size_field(model, what, "attention_dim", c.attention_dim);
  const json& attention = model.value("attention", json("soft"));
  const json& soft_probability = model.value("soft_probability", json(0.0));
  if (!attention.is_string() || !soft_probability.is_number())
    throw ValueError(std::string(what) + ": 'attention' must be a string and 'soft_probability' a number");
  c.attention = attention_from_name(attention.get<std::string>());
  c.soft_probability = soft_probability.get<double>();
  return std::make_unique<models::GridCaptioner>(c);
}

void train_grid_run(const json& config, const std::string& out) {
  const std::uint64_t seed = config.at("seed");
  manual_seed(seed);  // the weights, and hard attention's samples
  const json& task = config.at("task");
  const data::GridWorld world(world_options(task));
  Generator gen(seed);
  const data::GridSplit split = world.split(size_field(task, "task 'grid'", "n_train", 2000),
                                            size_field(task, "task 'grid'", "n_test", 200), gen);
  const data::Vocab vocab = data::GridWorld::caption_vocab();
  auto model = make_grid_model(config.at("model"), vocab.size(), task);
  if (config.value("dtype", "float32") == "float32") model->to(Dtype::Float32);

  const json& t = config.at("train");
  models::GridTrainOptions options;
  options.steps = t.at("steps");
  options.batch_size = t.at("batch_size");
  options.lr = t.at("lr");
  options.clip_norm = t.value("clip_norm", 5.0);
  options.seed = seed;
  options.log_every = 10;
  options.loss.doubly_stochastic = t.value("doubly_stochastic", 0.0);

  std::filesystem::create_directories(out);
  save_run_description(out, config, data::Vocab(), vocab);
  std::cout << "training grid (" << attention_name(model->config.attention) << " attention, "
            << model->num_parameters() << " parameters, " << config.value("dtype", "float32") << ") on grid: "
            << split.train.size() << " train / " << split.test.size() << " test grids, seed " << seed << std::endl;
  ProgressBar bar(options.steps);
  models::train_grid_captioner(*model, split.train, vocab, options,
                               [&](const models::Progress& p) { bar.update(p.step, p.loss, p.accuracy); });
  bar.finish();
  nn::save(*model, out + "/model.npz");
  const models::GridEvaluation e = models::evaluate_grid_captioner(*model, split.test, vocab);
  std::printf("exact match on the test grids: %.1f%%, attention peak on the gold cell %.1f%%  (checkpoint: %s)\n",
              100 * e.overall.exact_match(), 100 * e.decoded_alignment.hit_rate(), out.c_str());
}

void eval_grid(Run& run) {
  const json& task = run.config.at("task");
  const data::GridWorld world(world_options(task));
  Generator gen(run.config.at("seed").get<std::uint64_t>());
  const data::GridSplit split = world.split(size_field(task, "task 'grid'", "n_train", 2000),
                                            size_field(task, "task 'grid'", "n_test", 200), gen);
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
