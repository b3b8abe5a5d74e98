// How a grid run is configured: the defaults, the task's world and split, the model (see grid_config.hpp).
#include "grid_config.hpp"

#include "parse.hpp"
#include "run_config.hpp"

namespace attn::cli {

using nlohmann::json;

namespace {

constexpr std::uint64_t kMaxGridSize = 65536;  // embed_dim, decoder_dim, ...

models::GridAttention attention_from_name(const std::string& name) {
  for (auto a : {models::GridAttention::Soft, models::GridAttention::Hard, models::GridAttention::HardAtInference})
    if (name == grid_attention_name(a)) return a;
  throw ValueError("model config of 'grid': unknown attention '" + name + "' (soft, hard, hard-at-inference)");
}

}  // namespace


const char* grid_attention_name(models::GridAttention a) {
  return a == models::GridAttention::Soft ? "soft" : a == models::GridAttention::Hard ? "hard" : "hard-at-inference";
}


data::GridOptions world_options(const json& task, const std::string& where) {
  const Fields f(task, where);
  f.only({"name", "feature_dim", "noise", "min_objects", "max_objects", "embedding_seed", "n_train", "n_test"});
  data::GridOptions o;
  o.feature_dim = f.count_or("feature_dim", o.feature_dim, 1, 4096);
  o.noise = f.real_or("noise", o.noise, {0.0, 100.0});
  o.min_objects = f.count_or("min_objects", o.min_objects, 1, 9);
  o.max_objects = f.count_or("max_objects", o.max_objects, 1, 9);
  o.embedding_seed = f.count_or("embedding_seed", o.embedding_seed, 0, kMaxSeed);
  if (o.min_objects > o.max_objects)
    throw ValueError(where + ": min_objects " + std::to_string(o.min_objects) + " is more than max_objects " +
                     std::to_string(o.max_objects));
  return o;
}

data::GridSplit grid_split(const json& task, const data::GridWorld& world, std::uint64_t seed, const std::string& where) {
  const Fields f(task, where);
  Generator gen(seed);
  return world.split(f.count_or("n_train", 2000, 1, kMaxExamples), f.count_or("n_test", 200, 1, 1000000), gen);
}

json default_grid_model_config() {
  const models::GridCaptionerConfig c;
  return {{"model", "grid"},           {"embed_dim", c.embed_dim},
          {"encoder_dim", c.encoder_dim}, {"decoder_dim", c.decoder_dim},
          {"attention_dim", c.attention_dim}, {"attention", grid_attention_name(c.attention)},
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

std::unique_ptr<models::GridCaptioner> make_grid_model(const json& model, std::size_t vocab, const json& task,
                                                       const std::string& task_where) {
  const json defaults = default_grid_model_config();
  for (const auto& item : model.items())
    if (!defaults.contains(item.key())) {
      std::string fields;
      for (const auto& d : defaults.items()) fields += fields.empty() ? d.key() : ", " + d.key();
      throw ValueError("model config of 'grid': unknown field '" + item.key() + "' (fields: " + fields + ")");
    }
  models::GridCaptionerConfig c;
  c.vocab = vocab;
  c.feature_dim = world_options(task, task_where).feature_dim;
  const Fields f(model, "model config of 'grid'");
  c.embed_dim = f.count_or("embed_dim", c.embed_dim, 1, kMaxGridSize);
  c.encoder_dim = f.count_or("encoder_dim", c.encoder_dim, 0, kMaxGridSize);  // 0: no encoder layer
  c.decoder_dim = f.count_or("decoder_dim", c.decoder_dim, 1, kMaxGridSize);
  c.attention_dim = f.count_or("attention_dim", c.attention_dim, 1, kMaxGridSize);
  c.attention = attention_from_name(f.has("attention") ? f.one_of("attention", {"soft", "hard", "hard-at-inference"}) : "soft");
  c.soft_probability = f.real_or("soft_probability", 0.0, {0.0, 1.0});
  return std::make_unique<models::GridCaptioner>(c);
}

}  // namespace attn::cli
