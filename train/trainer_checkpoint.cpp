// Trainer checkpoints (trainer.hpp): the model in path.npz, the rest of the
// run in path.trainer.npz, so that training resumes exactly where it stopped.
//
// path.trainer.npz holds float tensors only (it is an .npz), so integers are
// stored exactly: counts as float64 (exact below 2^53), generator states as
// pairs of 32-bit halves.
#include "trainer.hpp"

#include "../io/checkpoint.hpp"
#include "../io/npz.hpp"

#include <cmath>
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

Tensor scalar(double value) { return Tensor(xt::xarray<double>({value})); }

}  // namespace

void Trainer::save_checkpoint(const std::string& path) const {
  io::save(model_, path + ".npz");
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
  io::save_npz(path + ".trainer.npz", state);
}

namespace {

// The entries of a trainer file, each checked before any is used.
struct TrainerFile {
  std::string file;
  std::map<std::string, Tensor> state;

  [[noreturn]] void fail(const std::string& key, const std::string& expected) const {
    throw IOError(file + ": '" + key + "' must be " + expected + " (a damaged or foreign trainer checkpoint)");
  }
  double scalar(const std::string& key) const {
    const Tensor& t = state.at(key);
    if (t.numel() != 1) fail(key, "a single number, got " + std::to_string(t.numel()) + " values");
    const double v = t.item();
    if (!std::isfinite(v)) fail(key, "finite, got " + std::to_string(v));
    return v;
  }
  // Counts are stored as float64: whole, >= `min`, and below 2^53 where float64 is exact.
  long long whole(const std::string& key, long long min) const {
    const double v = scalar(key);
    if (v != std::floor(v) || v < double(min) || v > 9007199254740992.0)
      fail(key, "a whole number >= " + std::to_string(min) + ", got " + std::to_string(v));
    return static_cast<long long>(v);
  }
  std::vector<std::uint64_t> words(const std::string& key) const {
    const xt::xarray<double> a = state.at(key).to_array();
    if (a.size() == 0 || a.size() % 2) fail(key, "pairs of 32-bit halves");
    for (double v : a)
      if (!(v >= 0 && v < 4294967296.0 && v == std::floor(v))) fail(key, "pairs of 32-bit halves, got " + std::to_string(v));
    std::vector<std::uint64_t> w;
    for (std::size_t i = 0; i + 1 < a.size(); i += 2)
      w.push_back((static_cast<std::uint64_t>(a.flat(i)) << 32) | static_cast<std::uint64_t>(a.flat(i + 1)));
    Generator probe;
    try {
      set_generator_state(probe, w);
    } catch (const IOError&) {
      fail(key, "the state of a random generator");
    }
    return w;
  }
};

}  // namespace

void Trainer::load_checkpoint(const std::string& path) {
  TrainerFile f{path + ".trainer.npz", {}};
  const std::string& file = f.file;
  std::vector<std::pair<std::string, Tensor>> optimizer_state;
  // Each array's header is checked against what this trainer needs before any data is read.
  const Shape generator_shape = {2 * generator_state(default_generator()).size()};
  auto spec = [&](const std::string& name) -> std::optional<ArraySpec> {
    if (name.rfind("optimizer.", 0) == 0) return optimizer_->state_spec(name.substr(10));
    if (name.size() > 10 && name.compare(name.size() - 10, 10, "_generator") == 0) return ArraySpec{generator_shape};
    if (name == "step" || name == "lr" || name == "epoch_position" || name == "epoch_size" ||
        name.rfind("schedule.", 0) == 0)
      return ArraySpec{{1}};
    return std::nullopt;  // not this trainer's: left unread
  };
  for (auto& [name, t] : io::load_npz(file, spec)) {
    if (name.rfind("optimizer.", 0) == 0) optimizer_state.push_back({name.substr(10), t});
    else f.state[name] = t;
  }
  for (const char* key : {"step", "lr", "epoch_position", "epoch_size", "global_generator", "trainer_generator"})
    if (!f.state.count(key)) throw IOError(file + ": not a trainer checkpoint (no '" + key + "')");
  if (bool(schedule_) != bool(f.state.count("schedule.last_epoch")))
    throw IOError(file + ": the checkpoint was saved " + (schedule_ ? "without" : "with") +
                  " a learning-rate schedule, this trainer has " + (schedule_ ? "one" : "none"));

  // Every value is checked before anything changes.
  const auto step = static_cast<std::size_t>(f.whole("step", 0));
  const double lr = f.scalar("lr");
  if (lr < 0) f.fail("lr", ">= 0, got " + std::to_string(lr));  // 0 happens: the first step of a warmup
  const auto epoch_size = static_cast<std::size_t>(f.whole("epoch_size", 0));
  const auto epoch_position = static_cast<std::size_t>(f.whole("epoch_position", 0));
  if (epoch_position > epoch_size)
    f.fail("epoch_position", "at most epoch_size " + std::to_string(epoch_size) + ", got " + std::to_string(epoch_position));
  const std::vector<std::uint64_t> order = f.words("trainer_generator"), global = f.words("global_generator");
  const bool mid_epoch = f.state.count("epoch_start_generator") > 0;
  const std::vector<std::uint64_t> epoch_start = mid_epoch ? f.words("epoch_start_generator") : std::vector<std::uint64_t>{};
  double base_lr = 0;
  long long schedule_epochs = 0;
  if (schedule_) {
    if (!f.state.count("schedule.base_lr")) throw IOError(file + ": not a trainer checkpoint (no 'schedule.base_lr')");
    base_lr = f.scalar("schedule.base_lr");
    schedule_epochs = f.whole("schedule.last_epoch", -1);
  }

  io::load(model_, path + ".npz");  // checks every name and shape before it changes the model
  try {
    optimizer_->load_state(std::move(optimizer_state));  // kept as read, not copied
  } catch (const Error& e) {
    throw IOError(file + ": the optimizer's state does not fit this model: " + e.what());
  }
  step_ = step;

  // The data: rebuild the current epoch from the generator as it was when the
  // epoch was drawn, then skip the batches already done.
  epoch_.clear();
  epoch_position_ = 0;
  epoch_start_.clear();
  if (mid_epoch) {
    set_generator_state(gen_, epoch_start);
    next_batch();  // draws the epoch exactly as the interrupted run did
    if (epoch_.size() != epoch_size)
      throw IOError(file + ": the checkpoint's epoch had " + std::to_string(epoch_size) +
                    " batches, this training set gives " + std::to_string(epoch_.size()));
    epoch_position_ = epoch_position;
  }
  set_generator_state(gen_, order);
  set_generator_state(default_generator(), global);

  // The learning rate: replay the schedule, or take the saved value.
  if (schedule_) {
    optimizer_->lr = base_lr;
    schedule_ = make_schedule_(*optimizer_);
    while (schedule_->last_epoch() < schedule_epochs) schedule_->step();
  }
  optimizer_->lr = lr;
}

}  // namespace attn::models
