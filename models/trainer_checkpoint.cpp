// Trainer checkpoints (trainer.hpp): the model in path.npz, the rest of the
// run in path.trainer.npz, so that training resumes exactly where it stopped.
//
// path.trainer.npz holds float tensors only (it is an .npz), so integers are
// stored exactly: counts as float64 (exact below 2^53), generator states as
// pairs of 32-bit halves.
#include "trainer.hpp"

#include "../nn/checkpoint.hpp"
#include "../nn/npz.hpp"

#include <map>
#include <sstream>

namespace attn::models {

std::vector<std::uint64_t> generator_state(Generator& gen) {
  std::ostringstream os;
  os << gen.engine();  // the standard textual form: every word of the engine's state
  std::istringstream is(os.str());
  std::vector<std::uint64_t> words;
  for (std::uint64_t w; is >> w;) words.push_back(w);
  return words;
}

void set_generator_state(Generator& gen, const std::vector<std::uint64_t>& state) {
  std::ostringstream os;
  for (std::size_t i = 0; i < state.size(); ++i) os << (i ? " " : "") << state[i];
  std::istringstream is(os.str());
  std::mt19937_64 engine;
  if (!(is >> engine)) throw IOError("set_generator_state: not the state of a generator");
  gen.engine() = engine;
}

namespace {

Tensor words_tensor(const std::vector<std::uint64_t>& words) {
  xt::xarray<double> a = xt::zeros<double>({2 * words.size()});
  for (std::size_t i = 0; i < words.size(); ++i) {
    a(2 * i) = static_cast<double>(words[i] >> 32);
    a(2 * i + 1) = static_cast<double>(words[i] & 0xffffffffu);
  }
  return Tensor(a);
}

std::vector<std::uint64_t> tensor_words(const Tensor& t) {
  const xt::xarray<double> a = t.to_array();
  std::vector<std::uint64_t> words;
  for (std::size_t i = 0; i + 1 < a.size(); i += 2)
    words.push_back((static_cast<std::uint64_t>(a.flat(i)) << 32) | static_cast<std::uint64_t>(a.flat(i + 1)));
  return words;
}

Tensor scalar(double value) { return Tensor(xt::xarray<double>({value})); }

}  // namespace

void Trainer::save_checkpoint(const std::string& path) const {
  nn::save(model_, path + ".npz");
  Generator order = gen_;  // a copy: reading a generator's state needs a mutable one
  std::vector<std::pair<std::string, Tensor>> state = {
      {"step", scalar(double(step_))},
      {"lr", scalar(optimizer_->lr)},
      {"epoch_position", scalar(double(epoch_position_))},
      {"epoch_size", scalar(double(epoch_.size()))},
      {"global_generator", words_tensor(generator_state(default_generator()))},
      {"trainer_generator", words_tensor(generator_state(order))},
  };
  if (!epoch_start_.empty()) state.push_back({"epoch_start_generator", words_tensor(epoch_start_)});
  if (schedule_) {
    state.push_back({"schedule.base_lr", scalar(schedule_->base_lr())});
    state.push_back({"schedule.last_epoch", scalar(double(schedule_->last_epoch()))});
  }
  for (auto& [name, t] : optimizer_->state()) state.push_back({"optimizer." + name, t});
  nn::save_npz(path + ".trainer.npz", state);
}

void Trainer::load_checkpoint(const std::string& path) {
  const std::string file = path + ".trainer.npz";
  std::map<std::string, Tensor> state;
  std::vector<std::pair<std::string, Tensor>> optimizer_state;
  // Each array's header is checked against what this trainer needs before any data is read.
  const Shape generator_shape = {2 * generator_state(default_generator()).size()};
  auto spec = [&](const std::string& name) -> std::optional<nn::ArraySpec> {
    if (name.rfind("optimizer.", 0) == 0) return optimizer_->state_spec(name.substr(10));
    if (name.size() > 10 && name.compare(name.size() - 10, 10, "_generator") == 0) return nn::ArraySpec{generator_shape};
    if (name == "step" || name == "lr" || name == "epoch_position" || name == "epoch_size" ||
        name.rfind("schedule.", 0) == 0)
      return nn::ArraySpec{{1}};
    return std::nullopt;  // not this trainer's: left unread
  };
  for (auto& [name, t] : nn::load_npz(file, spec)) {
    if (name.rfind("optimizer.", 0) == 0) optimizer_state.push_back({name.substr(10), t});
    else state[name] = t;
  }
  for (const char* key : {"step", "lr", "epoch_position", "epoch_size", "global_generator", "trainer_generator"})
    if (!state.count(key)) throw IOError(file + ": not a trainer checkpoint (no '" + key + "')");
  if (bool(schedule_) != bool(state.count("schedule.last_epoch")))
    throw IOError(file + ": the checkpoint was saved " + (schedule_ ? "without" : "with") +
                  " a learning-rate schedule, this trainer has " + (schedule_ ? "one" : "none"));

  nn::load(model_, path + ".npz");
  optimizer_->load_state(std::move(optimizer_state));  // kept as read, not copied
  step_ = static_cast<std::size_t>(state.at("step").item());

  // The data: rebuild the current epoch from the generator as it was when the
  // epoch was drawn, then skip the batches already done.
  epoch_.clear();
  epoch_position_ = 0;
  epoch_start_.clear();
  if (state.count("epoch_start_generator")) {
    set_generator_state(gen_, tensor_words(state.at("epoch_start_generator")));
    next_batch();  // draws the epoch exactly as the interrupted run did
    if (epoch_.size() != static_cast<std::size_t>(state.at("epoch_size").item()))
      throw IOError(file + ": the checkpoint's epoch had " + std::to_string(int(state.at("epoch_size").item())) +
                    " batches, this training set gives " + std::to_string(epoch_.size()));
    epoch_position_ = static_cast<std::size_t>(state.at("epoch_position").item());
  }
  set_generator_state(gen_, tensor_words(state.at("trainer_generator")));
  set_generator_state(default_generator(), tensor_words(state.at("global_generator")));

  // The learning rate: replay the schedule, or take the saved value.
  if (schedule_) {
    optimizer_->lr = state.at("schedule.base_lr").item();
    schedule_ = make_schedule_(*optimizer_);
    const long epochs = static_cast<long>(state.at("schedule.last_epoch").item());
    while (schedule_->last_epoch() < epochs) schedule_->step();
  }
  optimizer_->lr = state.at("lr").item();
}

}  // namespace attn::models
