// The epoch loop (train/epoch_trainer.hpp): a run stopped between two steps, in the middle of
// an epoch or at its end, and resumed from its checkpoint ends with exactly the weights (the
// training ones and the best epoch's), the history and the family's state of a run straight
// through; and a trainer file that does not fit is refused by name.
#include "../helpers.hpp"

#include "core/ops.hpp"
#include "io/checkpoint.hpp"
#include "io/npz.hpp"
#include "nn/dropout.hpp"
#include "nn/linear.hpp"
#include "nn/loss.hpp"
#include "train/epoch_trainer.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <numeric>

using attn::Tensor;
using namespace attn::models;

namespace {

// A classifier of 4 features into 3 classes, with dropout: its masks come from the global generator.
class Tiny : public attn::nn::Module {
 public:
  Tiny() : Module("Tiny"), fc1(4, 8), drop(0.3), fc2(8, 3) {
    register_module("fc1", fc1);
    register_module("drop", drop);
    register_module("fc2", fc2);
  }
  Tensor forward(const Tensor& x) { return fc2(drop(attn::relu(fc1(x)))); }
  attn::nn::Linear fc1;
  attn::nn::Dropout drop;
  attn::nn::Linear fc2;
};

// 40 training and 12 held-out points; the class is the largest of the first three features.
struct Data {
  xt::xarray<double> x, valid_x;
  attn::Index y, valid_y;
  Data() {
    attn::Generator gen(11);
    x = attn::randn({40, 4}, attn::Dtype::Float64, gen).to_array();
    valid_x = attn::randn({12, 4}, attn::Dtype::Float64, gen).to_array();
    y = label(x);
    valid_y = label(valid_x);
  }
  static attn::Index label(const xt::xarray<double>& a) {
    attn::Index l = attn::Index::from_shape({a.shape()[0]});
    for (std::size_t i = 0; i < a.shape()[0]; ++i)
      l(i) = a(i, 0) >= a(i, 1) ? (a(i, 0) >= a(i, 2) ? 0 : 2) : (a(i, 1) >= a(i, 2) ? 1 : 2);
    return l;
  }
};

// The family: batches of 6 in a new order each epoch (7 batches, the last of 4), cross-entropy,
// validation accuracy, and a state of its own (a running mean of the losses, as a REINFORCE
// baseline is) that the loss reads.
struct Family {
  std::vector<std::vector<std::size_t>> epoch;
  double running = 0.0;
  EpochFamily make(Tiny& model, const Data& d) {
    EpochFamily f;
    f.draw_epoch = [this](attn::Generator& order) {
      std::vector<std::size_t> idx(40);
      std::iota(idx.begin(), idx.end(), 0);
      std::shuffle(idx.begin(), idx.end(), order.engine());
      epoch.clear();
      for (std::size_t b = 0; b < idx.size(); b += 6)
        epoch.emplace_back(idx.begin() + b, idx.begin() + std::min(idx.size(), b + 6));
      return epoch.size();
    };
    f.step = [this, &model, &d](std::size_t i) {
      const auto& rows = epoch.at(i);
      xt::xarray<double> x = xt::zeros<double>({rows.size(), std::size_t(4)});
      attn::Index y = attn::Index::from_shape({rows.size()});
      for (std::size_t r = 0; r < rows.size(); ++r) {
        for (std::size_t c = 0; c < 4; ++c) x(r, c) = d.x(rows[r], c);
        y(r) = d.y(rows[r]);
      }
      Tensor loss = attn::nn::cross_entropy(model.forward(attn::tensor(x)), y) * (1.0 + 0.01 * running);
      running = 0.9 * running + 0.1 * loss.item();
      return EpochStep{loss};
    };
    f.validate = [&model, &d] {
      attn::no_grad guard;
      model.eval();
      const attn::Index guess = attn::argmax(model.forward(attn::tensor(d.valid_x)), 1);
      double right = 0;
      for (std::size_t i = 0; i < guess.size(); ++i) right += guess(i) == d.valid_y(i);
      return right / double(guess.size());
    };
    f.save_state = [this] { return std::vector<std::pair<std::string, Tensor>>{{"running", attn::tensor({running})}}; };
    f.load_state = [this](const std::map<std::string, Tensor>& s) { running = s.at("running").item(); };
    return f;
  }
};

EpochTrainerOptions options(std::size_t epochs, std::size_t steps = 0) {
  EpochTrainerOptions o;
  o.epochs = epochs;
  o.steps = steps;
  o.lr = 0.05;
  o.clip_norm = 0.5;
  o.seed = 4;
  o.keep_best = epochs > 0;
  return o;
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() / ("attn_test_epoch_trainer_" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

// What a run ends with: its training weights, the weights its checkpoint keeps, the history.
struct Outcome {
  std::vector<xt::xarray<double>> weights, kept;
  std::vector<double> losses, validation;
  std::size_t best_epoch = 0, step = 0;
  double running = 0.0;
};

Outcome outcome(Tiny& model, EpochTrainer& t, const Family& family, const std::string& path) {
  Outcome o;
  for (const Tensor& p : model.parameters()) o.weights.push_back(p.to_array());
  t.save_checkpoint(path);
  for (auto& [name, a] : attn::io::load_npz(path + ".npz")) o.kept.push_back(a.to_array());
  o.losses = t.epoch_losses();
  o.validation = t.epoch_validation();
  o.best_epoch = t.best_epoch();
  o.step = t.step();
  o.running = family.running;
  return o;
}

void check_same(const Outcome& a, const Outcome& b) {
  CHECK(a.step == b.step);
  CHECK(a.best_epoch == b.best_epoch);
  CHECK(a.losses == b.losses);
  CHECK(a.validation == b.validation);
  CHECK(a.running == b.running);
  REQUIRE(a.weights.size() == b.weights.size());
  for (std::size_t i = 0; i < a.weights.size(); ++i) CHECK(a.weights[i] == b.weights[i]);  // bit for bit
  REQUIRE(a.kept.size() == b.kept.size());
  for (std::size_t i = 0; i < a.kept.size(); ++i) CHECK(a.kept[i] == b.kept[i]);
}

// A run straight through to `total` (epochs, or steps when `steps`).
Outcome straight(const Data& d, std::size_t total, bool steps, const std::string& path) {
  attn::manual_seed(2);
  Tiny model;
  Family family;
  EpochTrainer t(model, family.make(model, d), steps ? options(0, total) : options(total));
  CHECK(t.train());
  return outcome(model, t, family, path);
}

// The same run stopped after `stop_after` steps (a checkpoint at that step), then resumed in a new
// process's objects (another initialization, another global generator state) to `total`.
Outcome resumed(const Data& d, std::size_t total, bool steps, std::size_t stop_after, const std::string& path,
                std::size_t* stopped_position = nullptr) {
  {
    attn::manual_seed(2);
    Tiny model;
    Family family;
    EpochTrainer t(model, family.make(model, d), steps ? options(0, total) : options(total));
    t.should_stop = [&t, stop_after] { return t.step() >= stop_after; };
    t.on_checkpoint = [&t, &path] { t.save_checkpoint(path); };
    CHECK_FALSE(t.train());
    CHECK(t.step() == stop_after);
    if (stopped_position) *stopped_position = t.epoch_position();
  }
  attn::manual_seed(99);  // whatever the new process did before: the checkpoint decides
  Tiny model;
  Family family;
  EpochTrainer t(model, family.make(model, d), steps ? options(0, total) : options(total));
  t.load_checkpoint(path);
  CHECK(t.step() == stop_after);
  CHECK(t.train());
  return outcome(model, t, family, path + "_end");
}

}  // namespace

TEST_CASE("EpochTrainer: stopped in the middle of an epoch and resumed, a run ends as one run straight through") {
  const Data d;
  TempDir dir;
  const Outcome a = straight(d, 5, false, (dir.path / "a").string());
  CHECK(a.step == 35);
  CHECK(a.losses.size() == 5);
  CHECK(a.best_epoch >= 1);
  CHECK(a.validation.at(a.best_epoch - 1) == *std::max_element(a.validation.begin(), a.validation.end()));
  // The checkpoint keeps the best epoch's weights, which are not the last ones (unless the last is the best).
  std::size_t position = 0;
  const Outcome b = resumed(d, 5, false, 10, (dir.path / "b").string(), &position);
  CHECK(position == 3);  // epoch 2, after its third batch
  check_same(a, b);
}

TEST_CASE("EpochTrainer: stopped at the end of an epoch, and resumed to more epochs than the run had") {
  const Data d;
  TempDir dir;
  const Outcome a = straight(d, 4, false, (dir.path / "a").string());
  std::size_t position = 99;
  const Outcome b = resumed(d, 4, false, 14, (dir.path / "b").string(), &position);
  CHECK(position == 0);  // two epochs done, the third not drawn
  check_same(a, b);

  // A run of 2 epochs, continued to 4.
  const std::string path = (dir.path / "c").string();
  {
    attn::manual_seed(2);
    Tiny model;
    Family family;
    EpochTrainer t(model, family.make(model, d), options(2));
    t.on_checkpoint = [&] { t.save_checkpoint(path); };
    CHECK(t.train());
  }
  Tiny model;
  Family family;
  EpochTrainer t(model, family.make(model, d), options(2));
  t.load_checkpoint(path);
  CHECK(t.finished());
  t.set_epochs(4);
  CHECK(t.train());
  check_same(a, outcome(model, t, family, path + "_end"));
}

TEST_CASE("EpochTrainer: a run in steps (no validation) resumes in the middle of its second epoch") {
  const Data d;
  TempDir dir;
  const Outcome a = straight(d, 17, true, (dir.path / "a").string());
  CHECK(a.step == 17);
  CHECK(a.losses.size() == 2);  // two whole epochs of 7 batches, and 3 batches of the third
  const Outcome b = resumed(d, 17, true, 9, (dir.path / "b").string());
  check_same(a, b);
}

TEST_CASE("EpochTrainer: restore_best puts the best epoch's weights back; the checkpoint's .npz holds them") {
  const Data d;
  TempDir dir;
  const std::string path = (dir.path / "best").string();
  attn::manual_seed(2);
  Tiny model;
  Family family;
  EpochTrainer t(model, family.make(model, d), options(6));
  t.train();
  t.save_checkpoint(path);
  t.restore_best();
  std::size_t i = 0;
  for (auto& [name, a] : attn::io::load_npz(path + ".npz")) CHECK(a.to_array() == model.parameters().at(i++).to_array());
  CHECK(t.best_score() == *std::max_element(t.epoch_validation().begin(), t.epoch_validation().end()));
}

TEST_CASE("EpochTrainer: a trainer file that does not fit is refused, naming the file and the entry") {
  const Data d;
  TempDir dir;
  const std::string path = (dir.path / "run").string();
  attn::manual_seed(2);
  Tiny model;
  Family family;
  {
    EpochTrainer t(model, family.make(model, d), options(2));
    t.should_stop = [&t] { return t.step() >= 3; };
    t.on_checkpoint = [&] { t.save_checkpoint(path); };
    t.train();
  }
  // A trainer that keeps no best epoch reads a file that holds training weights apart.
  EpochTrainerOptions steps = options(0, 20);
  EpochTrainer other(model, family.make(model, d), steps);
  CHECK_THROWS_WITH_AS(other.load_checkpoint(path), doctest::Contains("holds training weights apart"), attn::IOError);
  // The family's state is missing.
  Family no_state;
  EpochFamily without = no_state.make(model, d);
  without.save_state = [] { return std::vector<std::pair<std::string, Tensor>>{{"other", attn::tensor({0.0})}}; };
  EpochTrainer t2(model, without, options(2));
  CHECK_THROWS_WITH_AS(t2.load_checkpoint(path), doctest::Contains("'family.running' is not a state this training keeps"),
                       attn::IOError);
  // A count that is not whole.
  auto entries = attn::io::load_npz(path + ".trainer.npz");
  for (auto& [name, t] : entries)
    if (name == "epoch_position") t = attn::tensor({2.5});
  attn::io::save_npz(path + ".trainer.npz", entries);
  EpochTrainer t3(model, family.make(model, d), options(2));
  CHECK_THROWS_WITH_AS(t3.load_checkpoint(path),
                       doctest::Contains((path + ".trainer.npz: 'epoch_position' must be a whole number").c_str()), attn::IOError);
  // Not a trainer file at all.
  attn::io::save_npz(path + ".trainer.npz", {{"step", attn::tensor({1.0})}});
  EpochTrainer t4(model, family.make(model, d), options(2));
  CHECK_THROWS_WITH_AS(t4.load_checkpoint(path), doctest::Contains("not a trainer checkpoint (no 'lr')"), attn::IOError);
}
