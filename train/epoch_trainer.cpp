// The epoch loop (epoch_trainer.hpp) and its checkpoints.
#include "epoch_trainer.hpp"

#include "state_file.hpp"
#include "trainer.hpp"

#include "../io/checkpoint.hpp"
#include "../io/npz.hpp"

#include <optional>

namespace attn::models {

namespace {

// A copy of a tensor's values (a parameter's, to keep an epoch's weights).
Tensor copy_of(const Tensor& t) {
  return t.dtype() == Dtype::Float32 ? Tensor(xt::xarray<float>(t.data<float>()))
                                     : Tensor(xt::xarray<double>(t.data<double>()));
}

// Writes `from`'s values into `to` in place (handles held elsewhere, the optimizer's, see them).
void assign(Tensor& to, const Tensor& from) {
  if (to.dtype() == Dtype::Float32) to.data<float>() = xt::cast<float>(from.to_array());
  else to.data<double>() = from.to_array();
}

Tensor history_tensor(const std::vector<double>& values) {
  xt::xarray<double> a = xt::zeros<double>({values.size()});
  for (std::size_t i = 0; i < values.size(); ++i) a(i) = values[i];
  return Tensor(a);
}

constexpr const char* kScalars[] = {"step", "lr", "epochs_done", "epoch_position", "epoch_size", "epoch_loss_sum",
                                    "epoch_correct", "epoch_counted", "best_epoch", "best_score"};

}  // namespace

EpochTrainer::EpochTrainer(nn::Module& model, EpochFamily family, EpochTrainerOptions options)
    : model_(model),
      family_(std::move(family)),
      options_(options),
      optimizer_(model.parameters(), options.lr),
      order_(options.seed) {
  if (!family_.draw_epoch || !family_.step) throw ValueError("EpochTrainer: the family needs draw_epoch and step");
  if (options_.epochs == 0 && options_.steps == 0)
    throw ValueError("EpochTrainer: give options.epochs or options.steps (both are 0)");
  if (!(options_.clip_norm >= 0) || !std::isfinite(options_.clip_norm))
    throw ValueError("EpochTrainer: clip_norm must be finite and >= 0 (0 turns clipping off), got " +
                     std::to_string(options_.clip_norm));
  if (!(options_.lr > 0) || !std::isfinite(options_.lr))
    throw ValueError("EpochTrainer: lr must be finite and > 0, got " + std::to_string(options_.lr));
  if (options_.keep_best && !family_.validate)
    throw ValueError("EpochTrainer: keep_best needs the family's validate");
}

bool EpochTrainer::finished() const {
  return options_.epochs ? epochs_done_ >= options_.epochs : step_ >= options_.steps;
}

void EpochTrainer::start_epoch() {
  epoch_start_ = generator_state(order_);
  epoch_size_ = family_.draw_epoch(order_);
  if (epoch_size_ == 0) throw ValueError("EpochTrainer: the family drew an epoch of no batches");
  position_ = 0;
  epoch_loss_sum_ = epoch_correct_ = epoch_counted_ = 0.0;
}

void EpochTrainer::one_step() {
  model_.train();
  optimizer_.zero_grad();
  EpochStep s = family_.step(position_);
  if (!s.loss.defined() || s.loss.dim() != 0)
    throw ValueError("EpochTrainer: the family's step must return a scalar loss");
  s.loss.backward();
  const double norm = nn::clip_grad_norm_(optimizer_.params(), options_.clip_norm > 0 ? options_.clip_norm : INFINITY);
  optimizer_.step();
  ++step_;
  ++position_;
  const double shown = std::isnan(s.shown) ? s.loss.item() : s.shown;
  epoch_loss_sum_ += shown;
  epoch_correct_ += s.correct;
  epoch_counted_ += s.counted;
  if (!on_step) return;
  EpochProgress p;
  p.step = step_;
  p.epoch = epochs_done_ + 1;
  p.batch = position_;
  p.batches = epoch_size_;
  p.loss = shown;
  if (s.counted > 0) p.accuracy = s.correct / s.counted;
  p.epoch_loss = epoch_loss_sum_ / double(position_);
  if (epoch_counted_ > 0) p.epoch_accuracy = epoch_correct_ / epoch_counted_;
  p.grad_norm = norm;
  p.lr = optimizer_.lr;
  on_step(p);
}

void EpochTrainer::end_epoch() {
  EpochReport r;
  r.epoch = epochs_done_ + 1;
  r.step = step_;
  r.loss = epoch_loss_sum_ / double(epoch_size_);
  if (family_.validate) {
    r.validation = family_.validate();
    model_.train();
    // A score that is not finite (a diverged run's perplexity) is never the best.
    const bool better = options_.lower_is_better ? r.validation < best_score_ : r.validation > best_score_;
    if (options_.keep_best && std::isfinite(r.validation) && (best_epoch_ == 0 || better)) {
      best_score_ = r.validation;
      best_epoch_ = r.epoch;
      best_.clear();
      for (const Tensor& p : model_.parameters()) best_.push_back(copy_of(p));
      r.best = true;
    }
  }
  ++epochs_done_;
  epoch_size_ = position_ = 0;
  epoch_loss_sum_ = epoch_correct_ = epoch_counted_ = 0.0;
  history_loss_.push_back(r.loss);
  if (family_.validate) history_valid_.push_back(r.validation);
  if (on_epoch) on_epoch(r);
}

void EpochTrainer::checkpoint() {
  if (!on_checkpoint || checkpointed_at_ == step_) return;
  on_checkpoint();
  checkpointed_at_ = step_;
}

bool EpochTrainer::train() {
  while (!finished()) {
    if (position_ == epoch_size_) start_epoch();
    one_step();
    const bool epoch_ended = position_ == epoch_size_;
    if (epoch_ended) end_epoch();
    if (finished()) break;
    if ((options_.checkpoint_every && step_ % options_.checkpoint_every == 0) || (epoch_ended && options_.epochs))
      checkpoint();
    if (should_stop && should_stop()) {
      checkpoint();
      return false;
    }
  }
  checkpoint();
  return true;
}

void EpochTrainer::restore_best() {
  if (best_.empty()) return;
  std::vector<Tensor> params = model_.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) assign(params[i], best_[i]);
}

void EpochTrainer::save_checkpoint(const std::string& path) const {
  const bool best_apart = options_.keep_best && !best_.empty();
  if (best_apart) {  // the weights to evaluate: the best epoch's, by the module's names and order (io::save's)
    std::vector<std::pair<std::string, Tensor>> kept;
    const auto named = model_.named_parameters();
    for (std::size_t i = 0; i < named.size(); ++i) kept.push_back({named[i].first, best_[i]});
    for (auto& b : model_.named_buffers()) kept.push_back(b);
    io::save_npz(path + ".npz", kept);
  } else {
    io::save(model_, path + ".npz");
  }
  Generator order = order_;  // a copy: reading a generator's state needs a mutable one
  std::vector<std::pair<std::string, Tensor>> state = {
      {"step", count_tensor(double(step_))},
      {"lr", count_tensor(optimizer_.lr)},
      {"epochs_done", count_tensor(double(epochs_done_))},
      {"epoch_position", count_tensor(double(position_))},
      {"epoch_size", count_tensor(double(epoch_size_))},
      {"epoch_loss_sum", count_tensor(epoch_loss_sum_)},
      {"epoch_correct", count_tensor(epoch_correct_)},
      {"epoch_counted", count_tensor(epoch_counted_)},
      {"best_epoch", count_tensor(double(best_epoch_))},
      {"best_score", count_tensor(best_score_)},
      {"global_generator", words_tensor(generator_state(default_generator()))},
      {"trainer_generator", words_tensor(generator_state(order))},
  };
  if (position_ < epoch_size_) state.push_back({"epoch_start_generator", words_tensor(epoch_start_)});
  if (!history_loss_.empty()) state.push_back({"history.loss", history_tensor(history_loss_)});
  if (!history_valid_.empty()) state.push_back({"history.validation", history_tensor(history_valid_)});
  if (options_.keep_best)  // the weights training goes on from (path.npz holds the best epoch's)
    for (const auto& [name, p] : model_.named_parameters()) state.push_back({"weights." + name, p});
  if (family_.save_state)
    for (auto& [name, t] : family_.save_state()) state.push_back({"family." + name, t});
  for (auto& [name, t] : optimizer_.state()) state.push_back({"optimizer." + name, t});
  io::save_npz(path + ".trainer.npz", state);
}

void EpochTrainer::load_checkpoint(const std::string& path) {
  const std::string file = path + ".trainer.npz";
  // First the counts, which give the shapes of the rest (the history has one value per epoch done).
  StateEntries counts{file, {}};
  auto scalar_spec = [](const std::string& name) -> std::optional<ArraySpec> {
    for (const char* key : kScalars)
      if (name == key) return ArraySpec{{1}};
    return std::nullopt;
  };
  for (auto& [name, t] : io::load_npz(file, scalar_spec)) counts.state[name] = t;
  for (const char* key : kScalars) counts.require(key);
  const auto epochs_done = static_cast<std::size_t>(counts.whole("epochs_done", 0));

  // Then every entry, each against the shape this trainer needs, before any value is read.
  const Shape generator_shape = {2 * generator_state(default_generator()).size()};
  std::map<std::string, Shape> parameter_shapes, family_shapes;
  for (const auto& [name, p] : model_.named_parameters()) parameter_shapes[name] = p.shape();
  std::vector<std::pair<std::string, Tensor>> family_now;
  if (family_.save_state) family_now = family_.save_state();
  for (const auto& [name, t] : family_now) family_shapes[name] = t.shape();
  auto spec = [&](const std::string& name) -> std::optional<ArraySpec> {
    if (name.rfind("optimizer.", 0) == 0) return optimizer_.state_spec(name.substr(10));
    if (name.size() > 10 && name.compare(name.size() - 10, 10, "_generator") == 0) return ArraySpec{generator_shape};
    if (name == "history.loss" || name == "history.validation") return ArraySpec{{epochs_done}};
    if (name.rfind("weights.", 0) == 0) {
      const auto it = parameter_shapes.find(name.substr(8));
      if (it == parameter_shapes.end()) throw IOError(file + ": '" + name + "' is not a weight of this model");
      return ArraySpec{it->second};
    }
    if (name.rfind("family.", 0) == 0) {
      const auto it = family_shapes.find(name.substr(7));
      if (it == family_shapes.end()) throw IOError(file + ": '" + name + "' is not a state this training keeps");
      return ArraySpec{it->second};
    }
    return scalar_spec(name);
  };
  StateEntries f{file, {}};
  std::vector<std::pair<std::string, Tensor>> optimizer_state;
  std::map<std::string, Tensor> family_state;
  std::map<std::string, Tensor> weights;
  for (auto& [name, t] : io::load_npz(file, spec)) {
    if (name.rfind("optimizer.", 0) == 0) optimizer_state.push_back({name.substr(10), t});
    else if (name.rfind("weights.", 0) == 0) weights[name.substr(8)] = t;
    else if (name.rfind("family.", 0) == 0) family_state[name.substr(7)] = t;
    else f.state[name] = t;
  }

  // Every value is checked before anything changes.
  for (const char* key : {"global_generator", "trainer_generator"}) f.require(key);
  const auto step = static_cast<std::size_t>(f.whole("step", 0));
  const double lr = f.scalar("lr");
  if (lr <= 0) f.fail("lr", "> 0, got " + std::to_string(lr));
  const auto epoch_size = static_cast<std::size_t>(f.whole("epoch_size", 0));
  const auto position = static_cast<std::size_t>(f.whole("epoch_position", 0));
  if (position > epoch_size || (epoch_size > 0 && position == epoch_size))
    f.fail("epoch_position", "below epoch_size " + std::to_string(epoch_size) + " (or both 0), got " +
                                 std::to_string(position));
  const double loss_sum = f.scalar("epoch_loss_sum"), correct = f.scalar("epoch_correct"),
               counted = f.scalar("epoch_counted");
  const auto best_epoch = static_cast<std::size_t>(f.whole("best_epoch", 0));
  const double best_score = f.scalar("best_score");
  if (best_epoch > epochs_done) f.fail("best_epoch", "at most epochs_done " + std::to_string(epochs_done));
  if (best_epoch && !options_.keep_best)
    throw IOError(file + ": the checkpoint kept a best epoch, this training keeps none");
  const std::vector<std::uint64_t> order = f.words("trainer_generator"), global = f.words("global_generator");
  const bool mid_epoch = position < epoch_size;
  if (mid_epoch) f.require("epoch_start_generator");
  const std::vector<std::uint64_t> epoch_start = mid_epoch ? f.words("epoch_start_generator") : std::vector<std::uint64_t>{};
  std::vector<double> history_loss, history_valid;
  if (epochs_done) {
    f.require("history.loss");
    const xt::xarray<double> a = f.state.at("history.loss").to_array();
    history_loss.assign(a.begin(), a.end());
    if (family_.validate) {
      f.require("history.validation");
      const xt::xarray<double> v = f.state.at("history.validation").to_array();
      history_valid.assign(v.begin(), v.end());
    }
  }
  if (options_.keep_best && weights.size() != parameter_shapes.size())
    throw IOError(file + ": holds " + std::to_string(weights.size()) + " of the model's " +
                  std::to_string(parameter_shapes.size()) + " training weights ('weights.<name>')");
  if (!options_.keep_best && !weights.empty())
    throw IOError(file + ": holds training weights apart ('weights.<name>'), as a run that keeps its best epoch; "
                         "this training keeps none");
  for (const auto& [name, t] : family_now)
    if (!family_state.count(name)) throw IOError(file + ": not a trainer checkpoint of this training (no 'family." + name + "')");

  io::load(model_, path + ".npz");  // the weights to evaluate; checks every name and shape before it changes the model
  try {
    optimizer_.load_state(std::move(optimizer_state));
  } catch (const Error& e) {
    throw IOError(file + ": the optimizer's state does not fit this model: " + e.what());
  }
  best_.clear();
  if (options_.keep_best) {
    if (best_epoch)  // path.npz holds the best epoch's weights, and training goes on from weights.*
      for (const Tensor& p : model_.parameters()) best_.push_back(copy_of(p));
    for (auto& [name, p] : model_.named_parameters()) assign(p, weights.at(name));
  }
  best_epoch_ = best_epoch;
  best_score_ = best_score;
  history_loss_ = history_loss;
  history_valid_ = history_valid;
  step_ = step;
  epochs_done_ = epochs_done;

  // The data: draw the epoch under way again from the generator as it was, then skip the batches done.
  epoch_size_ = position_ = 0;
  epoch_start_.clear();
  if (mid_epoch) {
    set_generator_state(order_, epoch_start);
    start_epoch();
    if (epoch_size_ != epoch_size)
      throw IOError(file + ": the checkpoint's epoch had " + std::to_string(epoch_size) +
                    " batches, this training set gives " + std::to_string(epoch_size_));
    position_ = position;
  }
  epoch_loss_sum_ = loss_sum;
  epoch_correct_ = correct;
  epoch_counted_ = counted;
  set_generator_state(order_, order);
  set_generator_state(default_generator(), global);
  optimizer_.lr = lr;
  if (family_.load_state) family_.load_state(family_state);
  checkpointed_at_ = step_;
}

}  // namespace attn::models
