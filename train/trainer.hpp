// ONE trainer for every chapter's model: teacher forcing, cross-entropy that
// ignores <pad>, Adam (or any optimizer), gradient clipping, an optional
// learning-rate schedule, periodic evaluation with greedy decoding, progress
// reports, and checkpoints a run can resume from bit for bit.
//
//   TrainerOptions opt;
//   opt.steps = 2000;
//   opt.eval_every = 500;
//   Trainer trainer(model, split.train, vocab, vocab, opt);
//   trainer.set_eval_data(split.test);
//   trainer.on_progress = [](const Progress& p) { std::cout << p.step << " " << p.loss << "\n"; };
//   trainer.train();
//   trainer.last_evaluation().overall.exact_match();
//
// One step: take the next batch, logits = model.forward(src, src_lengths, tgt_in),
// loss = cross_entropy(logits, tgt_out, ignore <pad>, label smoothing) (+ extra_loss), backward,
// clip the joint gradient norm, optimizer step, schedule step. A copying model (models::CopyingModel
// with copies()) is trained over each batch's extended vocabulary instead: forward_extended() with
// the targets of models::extended_batch(), so a target word the vocabulary lacks but the source holds
// is learned as a copy of it, not as <unk>.
//
// Batches: each epoch shuffles the training set (the trainer's own generator,
// seeded by options.seed) into batches of similar source length. A checkpoint
// keeps the generator as it was when the epoch began and how many of the
// epoch's batches are done, with the optimizer's state, the step and the global
// generator (dropout): a run resumed from it reaches exactly the weights of an
// uninterrupted run.
#pragma once

#include "../nn/optim.hpp"
#include "../nn/schedule.hpp"
#include "../data/batch.hpp"
#include "../eval/evaluate.hpp"
#include "../models/seq2seq.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attn::models {

struct TrainerOptions {
  std::size_t steps = 1000;          // optimizer updates in all (a resumed run continues to it)
  std::size_t batch_size = 32;
  double lr = 1e-3;                  // Adam's, unless make_optimizer is set
  double clip_norm = 1.0;            // max joint gradient norm; 0 turns clipping off
  double label_smoothing = 0.0;
  std::size_t sort_buckets = 8;      // batches from buckets of similar length (data::BatchOptions)
  std::uint64_t seed = 0;            // the order of the training examples
  std::size_t log_every = 50;        // steps between on_progress calls (0: never)
  std::size_t eval_every = 0;        // steps between evaluations (0: only at the end, if there is eval data)
  EvaluateOptions eval;
  std::size_t checkpoint_every = 0;  // steps between checkpoints (0: only at the end, if a path is set)
  std::string checkpoint_path;       // "runs/bahdanau" -> runs/bahdanau.npz + runs/bahdanau.trainer.npz
};

// What on_progress receives.
struct Progress {
  std::size_t step = 0, total_steps = 0;
  double loss = 0.0;               // mean training loss since the last report
  double accuracy = 0.0;           // teacher-forced token accuracy on those batches
  double grad_norm = 0.0;          // before clipping, at the last step
  double lr = 0.0;
  double steps_per_second = 0.0;   // since the last report
  double seconds_left = 0.0;       // at that pace
};

class Trainer {
 public:
  // The model must already have its final dtype (the optimizer holds its parameters).
  Trainer(Seq2Seq& model, std::vector<data::Example> train, data::Vocab src_vocab, data::Vocab tgt_vocab,
          TrainerOptions options = {});

  // Replaces the default Adam(parameters, options.lr). Call before train().
  void set_optimizer(std::unique_ptr<nn::Optimizer> optimizer);
  // A schedule built on the trainer's optimizer, e.g.
  //   trainer.set_schedule([](nn::Optimizer& o) { return std::make_unique<nn::StepLR>(o, 500, 0.5); });
  void set_schedule(const std::function<std::unique_ptr<nn::LRScheduler>(nn::Optimizer&)>& make_schedule);
  void set_eval_data(std::vector<data::Example> examples) { eval_data_ = std::move(examples); }

  // When set, its scalar (a 0-dim tensor) is added to the cross-entropy before backward, e.g. a loss on the attention
  // weights of the forward just run (chapter 19):
  //   trainer.extra_loss = [&](const data::Batch& b) {
  //     return nn::supervised_attention_loss(model.last_attention().at("attention"), b.alignment); };
  // Progress::loss is then the sum.
  std::function<Tensor(const data::Batch&)> extra_loss;

  std::function<void(const Progress&)> on_progress;
  std::function<void(const Evaluation&)> on_evaluation;
  // When set, called at each checkpoint instead of save_checkpoint(options.checkpoint_path),
  // e.g. to write the trainer's files with others as one unit (the command line does).
  std::function<void()> on_checkpoint;

  // Trains until options.steps, evaluating and checkpointing on the way.
  void train();
  // One update on one batch made from the training examples (a copying model reads their words); returns the loss.
  double train_step(const data::Batch& batch);
  // The model on the eval data (set_eval_data) now.
  Evaluation evaluate_now();

  // path + ".npz": the model (io::save); path + ".trainer.npz": optimizer state,
  // step, data position, generators. load_checkpoint restores both. It checks
  // every value of the trainer file (whole, finite, in range: an IOError naming
  // the file and the entry) and every weight's name and shape before it changes
  // anything; only an optimizer state that does not fit is found after the
  // weights are loaded.
  void save_checkpoint(const std::string& path) const;
  void load_checkpoint(const std::string& path);

  std::size_t step() const { return step_; }
  nn::Optimizer& optimizer() { return *optimizer_; }
  const Evaluation& last_evaluation() const { return last_evaluation_; }
  const TrainerOptions& options() const { return options_; }

 private:
  const data::Batch& next_batch();  // the next batch of the epoch, starting a new epoch if needed
  void report(std::chrono::steady_clock::time_point& since, std::size_t& since_step);

  Seq2Seq& model_;
  std::vector<data::Example> train_, eval_data_;
  data::Vocab src_vocab_, tgt_vocab_;
  TrainerOptions options_;
  std::unique_ptr<nn::Optimizer> optimizer_;
  std::function<std::unique_ptr<nn::LRScheduler>(nn::Optimizer&)> make_schedule_;
  std::unique_ptr<nn::LRScheduler> schedule_;

  std::size_t step_ = 0;
  Generator gen_;                     // the order of the training examples
  std::vector<std::uint64_t> epoch_start_;  // gen_'s state when the current epoch was drawn
  std::vector<data::Batch> epoch_;    // the current epoch's batches
  std::size_t epoch_position_ = 0;    // how many of them are done
  double loss_sum_ = 0.0, accuracy_sum_ = 0.0, last_grad_norm_ = 0.0;
  std::size_t loss_count_ = 0;
  Evaluation last_evaluation_;
};

// The state of a generator as 64-bit words, and back (for checkpoints).
std::vector<std::uint64_t> generator_state(Generator& gen);
void set_generator_state(Generator& gen, const std::vector<std::uint64_t>& state);

}  // namespace attn::models
