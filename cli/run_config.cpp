#include "run_config.hpp"

#include "parse.hpp"

#include "../core/errors.hpp"
#include "../models/registry.hpp"

namespace attn::cli {

bool trains_in_epochs(const std::string& model) {
  const models::TrainableModel* m = models::find_trainable_model(model);
  return m && (m->family == models::ModelFamily::Speech || m->family == models::ModelFamily::Documents ||
               m->family == models::ModelFamily::Scenes ||
               m->family == models::ModelFamily::LanguageModel);
}

TrainSettings read_train_settings(const nlohmann::json& config, const std::string& where) {
  const Fields top(config, where);
  top.only({"format", "model", "task", "seed", "dtype", "train"});
  top.one_of("format", {"attn-checkpoint"});
  Fields(top.object("model"), where + ": model").text("model");
  Fields(top.object("task"), where + ": task").text("name");
  TrainSettings s;
  s.seed = top.count("seed", 0, kMaxSeed);
  s.dtype = top.one_of("dtype", {"float32", "float64"});
  const bool grid = config.at("model").value("model", "") == "grid";
  const Fields train(top.object("train"), where + ": train");
  if (trains_in_epochs(config.at("model").value("model", ""))) {
    train.only({"epochs", "batch_size", "lr", "clip_norm", "stopped_at_step"});
    if (train.has("stopped_at_step")) train.count("stopped_at_step", 1, kMaxSteps);
    s.epochs = train.count("epochs", 1, kMaxSteps);
    s.batch_size = train.count("batch_size", 1, kMaxBatch);
    s.lr = train.real("lr", Bounds::positive());
    s.clip_norm = train.real_or("clip_norm", 5.0, Bounds::non_negative());
    return s;
  }
  train.only({"steps", "batch_size", "lr", "clip_norm", "label_smoothing", "eval_every", "checkpoint_every",
              "doubly_stochastic", "warmup", "copy_objective", "stopped_at_step"});
  if (train.has("stopped_at_step") && !grid)  // a sequence run stopped by Ctrl-C resumes: it records no stop
    throw ValueError(where + ": train: \"stopped_at_step\" is only in a las, document classifier or grid run "
                     "stopped before those runs resumed; remove the key");
  if (train.has("stopped_at_step")) train.count("stopped_at_step", 1, kMaxSteps);
  s.steps = train.count("steps", 1, kMaxSteps);
  s.batch_size = train.count("batch_size", 1, kMaxBatch);
  s.lr = train.real("lr", Bounds::positive());
  s.clip_norm = train.real_or("clip_norm", grid ? 5.0 : 1.0, Bounds::non_negative());
  s.label_smoothing = train.real_or("label_smoothing", 0.0, {0.0, 1.0, false, true});
  s.eval_every = train.count_or("eval_every", 0, 0, kMaxSteps);
  s.checkpoint_every = train.count_or("checkpoint_every", 0, 0, kMaxSteps);
  s.doubly_stochastic = train.real_or("doubly_stochastic", 0.0, Bounds::non_negative());
  s.warmup = train.count_or("warmup", 0, 0, kMaxSteps);
  if (train.has("copy_objective")) s.copy_objective = train.one_of("copy_objective", {"extended"});
  return s;
}

models::EpochTrainerOptions epoch_trainer_options(const TrainSettings& s) {
  models::EpochTrainerOptions o;
  o.epochs = s.epochs;
  o.steps = s.epochs ? 0 : s.steps;
  o.lr = s.lr;
  o.clip_norm = s.clip_norm;
  o.seed = s.seed;
  return o;
}

}  // namespace attn::cli
