// The one Trainer: a resumed run equals an uninterrupted one bit for bit,
// progress and evaluation reports, the optimizers' state round trip, bad
// checkpoints, and a model without attention learning a short copy task.
#include "../helpers.hpp"

#include "models/bahdanau.hpp"
#include "nn/attention/alignment_loss.hpp"
#include "data/tasks.hpp"
#include "models/seq2seq_plain.hpp"
#include "train/trainer.hpp"

#include "io/npz.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

using attn::Tensor;
using namespace attn::models;

namespace {

attn::data::Split small_split(attn::data::SequenceTask task, std::size_t n_train, std::size_t max_length) {
  attn::Generator gen(3);
  attn::data::SequenceTaskOptions options;
  options.vocab_size = 6;
  options.min_length = 2;
  options.max_length = max_length;
  return attn::data::sequence_split(task, n_train, 20, options, gen);
}

std::unique_ptr<BahdanauSeq2Seq> small_bahdanau(std::uint64_t seed) {
  attn::manual_seed(seed);
  BahdanauConfig c;
  c.src_vocab = c.tgt_vocab = attn::data::task_vocab(6).size();
  c.embed_dim = 5;
  c.encoder_dim = 4;
  c.decoder_dim = 6;
  c.attention_dim = 5;
  return std::make_unique<BahdanauSeq2Seq>(c);
}

TrainerOptions small_options(std::size_t steps) {
  TrainerOptions o;
  o.steps = steps;
  o.batch_size = 8;  // 50 examples: 7 batches an epoch, the last one short
  o.lr = 1e-2;
  o.label_smoothing = 0.1;
  o.log_every = 0;
  o.seed = 5;
  return o;
}

void with_schedule(Trainer& t) {
  t.set_schedule([](attn::nn::Optimizer& o) { return std::make_unique<attn::nn::StepLR>(o, 4, 0.7); });
}

// A fresh directory for checkpoint files, removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() / ("attn_test_trainer_" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_CASE("Trainer: a run resumed from a checkpoint ends with exactly the weights of an uninterrupted one") {
  const auto split = small_split(attn::data::SequenceTask::reverse, 50, 5);
  const auto vocab = attn::data::task_vocab(6);
  TempDir dir;
  const std::string path = (dir.path / "run").string();

  // Uninterrupted: 30 steps (more than four epochs).
  auto a = small_bahdanau(1);
  Trainer ta(*a, split.train, vocab, vocab, small_options(30));
  with_schedule(ta);
  ta.train();
  const auto generator_after_a = generator_state(attn::default_generator());

  // Interrupted after 13 steps (inside the second epoch), checkpointed...
  auto b = small_bahdanau(1);
  TrainerOptions first = small_options(13);
  first.checkpoint_path = path;
  Trainer tb(*b, split.train, vocab, vocab, first);
  with_schedule(tb);
  tb.train();
  CHECK(std::filesystem::exists(path + ".npz"));
  CHECK(std::filesystem::exists(path + ".trainer.npz"));

  // ...then resumed by a new process-like setup: other initial weights, other global seed.
  auto c = small_bahdanau(99);
  attn::rand({7});  // move the global generator: the checkpoint puts it back
  Trainer tc(*c, split.train, vocab, vocab, small_options(30));
  with_schedule(tc);
  tc.load_checkpoint(path);
  CHECK(tc.step() == 13);
  CHECK(tc.optimizer().lr == tb.optimizer().lr);
  tc.train();
  CHECK(tc.step() == 30);
  CHECK(tc.optimizer().lr == ta.optimizer().lr);

  auto pa = a->named_parameters(), pc = c->named_parameters();
  REQUIRE(pa.size() == pc.size());
  for (std::size_t i = 0; i < pa.size(); ++i) {
    CAPTURE(pa[i].first);
    CHECK(test::allclose(pa[i].second, pc[i].second, 0.0));  // bit for bit
  }
  const auto sa = ta.optimizer().state(), sc = tc.optimizer().state();
  REQUIRE(sa.size() == sc.size());
  for (std::size_t i = 0; i < sa.size(); ++i) CHECK(test::allclose(sa[i].second, sc[i].second, 0.0));
  CHECK(generator_state(attn::default_generator()) == generator_after_a);
}

TEST_CASE("Trainer: progress and evaluation reports") {
  const auto split = small_split(attn::data::SequenceTask::copy, 50, 5);
  const auto vocab = attn::data::task_vocab(6);
  auto model = small_bahdanau(2);
  TrainerOptions o = small_options(20);
  o.log_every = 5;
  o.eval_every = 10;
  Trainer t(*model, split.train, vocab, vocab, o);
  t.set_eval_data(split.test);
  std::vector<Progress> progress;
  std::vector<Evaluation> evaluations;
  t.on_progress = [&](const Progress& p) { progress.push_back(p); };
  t.on_evaluation = [&](const Evaluation& e) { evaluations.push_back(e); };
  t.train();
  REQUIRE(progress.size() == 4);
  CHECK(progress.back().step == 20);
  CHECK(progress.back().total_steps == 20);
  CHECK(progress.back().seconds_left == 0.0);
  for (const Progress& p : progress) {
    CHECK(p.loss > 0.0);
    CHECK(p.accuracy >= 0.0);
    CHECK(p.accuracy <= 1.0);
    CHECK(p.steps_per_second > 0.0);
    CHECK(p.grad_norm > 0.0);
    CHECK(p.lr == 1e-2);
  }
  CHECK(progress.back().loss < progress.front().loss);
  REQUIRE(evaluations.size() == 2);
  CHECK(evaluations[0].step == 10);
  CHECK(evaluations[1].step == 20);
  CHECK(evaluations[1].overall.sentences == 20);
  CHECK(evaluations[1].loss > 0.0);
  CHECK(evaluations[1].alignment.steps > 0);  // copy has a gold alignment, Bahdanau has attention
  std::size_t by_length = 0;
  for (const auto& [length, counts] : evaluations[1].by_length) by_length += counts.sentences;
  CHECK(by_length == 20);
  CHECK(t.last_evaluation().step == 20);
}

TEST_CASE("Trainer: extra_loss is added to the cross-entropy before backward") {
  const auto split = small_split(attn::data::SequenceTask::reverse, 50, 5);
  const auto vocab = attn::data::task_vocab(6);
  // A constant extra term: every loss is 0.5 higher and the weights are those of a run without it, bit for bit.
  auto plain = small_bahdanau(3), shifted = small_bahdanau(3);
  Trainer a(*plain, split.train, vocab, vocab, small_options(6)), b(*shifted, split.train, vocab, vocab, small_options(6));
  std::size_t calls = 0;
  b.extra_loss = [&](const attn::data::Batch& batch) {
    ++calls;
    CHECK(batch.size() > 0);
    return attn::full({}, 0.5);
  };
  for (int i = 0; i < 6; ++i) {
    const auto& batch = attn::data::make_batch(split.train, vocab, vocab);
    CHECK(b.train_step(batch) == doctest::Approx(a.train_step(batch) + 0.5).epsilon(1e-12));
  }
  CHECK(calls == 6);
  const auto pa = plain->parameters(), pb = shifted->parameters();
  for (std::size_t i = 0; i < pa.size(); ++i) CHECK(test::allclose(pa[i], pb[i], 0.0));
  // Supervised attention through the hook pulls the weights onto the gold alignment of reversal.
  auto supervised_model = small_bahdanau(4), control = small_bahdanau(4);
  Trainer sup(*supervised_model, split.train, vocab, vocab, small_options(60)),
      ctl(*control, split.train, vocab, vocab, small_options(60));
  sup.extra_loss = [&](const attn::data::Batch& batch) {
    return 10.0 * attn::nn::supervised_attention_loss(supervised_model->last_attention().at("attention"), batch.alignment);
  };
  sup.train();
  ctl.train();
  const auto test_batch = attn::data::make_batch(split.test, vocab, vocab);
  auto gold_loss = [&](BahdanauSeq2Seq& m) {
    attn::no_grad guard;
    m.forward(test_batch.src, test_batch.src_lengths, test_batch.tgt_in);
    return attn::nn::supervised_attention_loss(m.last_attention().at("attention"), test_batch.alignment).item();
  };
  const double with = gold_loss(*supervised_model), without = gold_loss(*control);
  INFO("held-out -log a_{t,g_t}: " << with << " with supervision, " << without << " without");
  CHECK(with < 0.7 * without);
  // Not a scalar: refused by name.
  control->train();
  ctl.extra_loss = [](const attn::data::Batch&) { return attn::zeros({2}); };
  CHECK_THROWS_WITH_SUBSTR(ctl.train_step(test_batch), attn::ValueError, "extra_loss must return a scalar, got [2]");
}

TEST_CASE("Optimizer state: Adam and SGD round trip, bad state rejected") {
  Tensor w = test::randn({2, 3}, 1), b = test::randn({3}, 2);
  auto step = [&](attn::nn::Optimizer& opt) {
    opt.zero_grad();
    attn::sum(attn::tanh(attn::matmul(w, attn::unsqueeze(b, 1)))).backward();
    opt.step();
  };
  attn::nn::Adam adam({w, b}, 0.1);
  CHECK(adam.state().empty());
  step(adam);
  step(adam);
  const auto saved = adam.state();
  CHECK(saved.size() == 6);  // exp_avg, exp_avg_sq, step for each parameter
  attn::nn::Adam other({w, b}, 0.1);
  other.load_state(saved);
  const auto restored = other.state();
  REQUIRE(restored.size() == saved.size());
  for (std::size_t i = 0; i < saved.size(); ++i) {
    CHECK(restored[i].first == saved[i].first);
    CHECK(test::allclose(restored[i].second, saved[i].second, 0.0));
  }
  CHECK_THROWS_WITH_SUBSTR(other.load_state({{"exp_avg.7", saved[0].second}}), attn::ValueError, "unexpected entry");
  CHECK_THROWS_WITH_SUBSTR(other.load_state({{"exp_avg.1", saved[0].second}}), attn::ValueError, "has shape");

  attn::nn::SGD sgd({w, b}, 0.1, 0.9);
  step(sgd);
  const auto momentum = sgd.state();
  CHECK(momentum.size() == 2);
  attn::nn::SGD sgd2({w, b}, 0.1, 0.9);
  sgd2.load_state(momentum);
  CHECK(test::allclose(sgd2.state()[1].second, momentum[1].second, 0.0));
  attn::nn::SGD plain({w}, 0.1);
  CHECK_THROWS_WITH_SUBSTR(plain.load_state({{"exp_avg.0", w}}), attn::ValueError, "unexpected entry");
}

TEST_CASE("Trainer: bad options and checkpoints") {
  const auto split = small_split(attn::data::SequenceTask::copy, 20, 4);
  const auto vocab = attn::data::task_vocab(6);
  auto model = small_bahdanau(3);
  CHECK_THROWS_WITH_SUBSTR(Trainer(*model, {}, vocab, vocab), attn::ValueError, "training examples");
  TrainerOptions o = small_options(2);
  o.batch_size = 0;
  CHECK_THROWS_WITH_SUBSTR(Trainer(*model, split.train, vocab, vocab, o), attn::ValueError, "batch_size");

  TempDir dir;
  const std::string path = (dir.path / "x").string();
  Trainer t(*model, split.train, vocab, vocab, small_options(2));
  CHECK_THROWS_AS(t.load_checkpoint(path), attn::IOError);  // no such file
  CHECK_THROWS_WITH_SUBSTR(t.evaluate_now(), attn::ValueError, "no eval data");
  t.train();
  t.save_checkpoint(path);
  Trainer scheduled(*model, split.train, vocab, vocab, small_options(2));
  with_schedule(scheduled);
  CHECK_THROWS_WITH_SUBSTR(scheduled.load_checkpoint(path), attn::IOError, "schedule");
  attn::io::save_npz(path + ".trainer.npz", {{"step", attn::ones({1})}});
  CHECK_THROWS_WITH_SUBSTR(t.load_checkpoint(path), attn::IOError, "not a trainer checkpoint");
}

TEST_CASE("Trainer: the model without attention learns to copy short sequences") {
  const auto split = small_split(attn::data::SequenceTask::copy, 2000, 5);
  const auto vocab = attn::data::task_vocab(6);
  attn::manual_seed(4);
  PlainSeq2SeqConfig c;
  c.src_vocab = c.tgt_vocab = vocab.size();
  c.embed_dim = 16;
  c.hidden_dim = 64;
  PlainSeq2Seq model(c);
  model.to(attn::Dtype::Float32);
  TrainerOptions o;
  o.steps = 800;
  o.lr = 5e-3;
  o.log_every = 0;
  Trainer t(model, split.train, vocab, vocab, o);
  t.set_eval_data(split.test);
  t.train();
  CHECK(t.last_evaluation().overall.exact_match() >= 0.9);
  CHECK(t.last_evaluation().alignment.steps == 0);  // nothing to measure without attention
}
