// ONE loop for the models that do not read a source sentence: the grid captioner (chapter 4),
// Listen, Attend and Spell (16) and the document classifiers (18). A model family gives only
// its batches, its loss and, if it validates, its evaluation; the loop does the rest: epochs
// (or a number of steps), the batch order from its own seeded generator, Adam, gradient
// clipping, validation after each epoch and keeping the best epoch's weights, progress,
// stopping between two steps when asked, and checkpoints a run resumes from bit for bit.
//
//   EpochFamily family;
//   family.draw_epoch = [&](Generator& order) { batches = data::make_document_batches(docs, vocab, o, order);
//                                               return batches.size(); };
//   family.step = [&](std::size_t i) { return EpochStep{nn::cross_entropy(model.forward(batches[i]), ...)}; };
//   family.validate = [&] { return accuracy_on(valid); };      // optional
//   EpochTrainerOptions opt;
//   opt.epochs = 12;
//   opt.keep_best = true;                                       // the best validated epoch's weights are kept
//   EpochTrainer trainer(model, family, opt);
//   trainer.on_epoch = [](const EpochReport& r) { std::cout << r.epoch << " " << r.validation << "\n"; };
//   trainer.train();
//
// Why a trainer apart from models::Trainer (trainer.hpp): that one is built around a Seq2Seq
// and data::Example sentences (teacher forcing, copying, greedy evaluation with BLEU); these
// families have batches of another kind (feature grids, spectrograms, documents), their own
// losses, and count epochs. What both keep to resume exactly is the same, and stored the same
// way (train/state_file.hpp): the optimizer's state, the step, the position in the epoch and the
// generators.
//
// One step: model.train(), zero the gradients, loss = family.step(batch), backward, clip the
// joint gradient norm, Adam. An epoch is drawn from the trainer's generator (options.seed) when
// the last one is done; after its last batch, family.validate() runs (if given), then on_epoch.
//
// Checkpoints (save_checkpoint): path.npz holds the weights to evaluate (with keep_best, the best
// validated epoch's; before any, the weights as they are) and path.trainer.npz everything else:
// the optimizer's state, the step, the epochs done, the epoch under way (the generator as it was
// when it was drawn, and how many of its batches are done, so it is drawn again identically), the
// trainer's and the global generator, the training weights (with keep_best), the best score and
// epoch, each epoch's mean loss and validation score, and the family's own state (e.g. the
// REINFORCE baseline). A run resumed from it (load_checkpoint) takes exactly the steps an
// uninterrupted run takes (docs/checkpoint-format.md, tests/train/test_epoch_trainer.cpp).
#pragma once

#include "../core/random.hpp"
#include "../nn/module.hpp"
#include "../nn/optim.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attn::models {

// What a family's step gives back for one batch.
struct EpochStep {
  Tensor loss;                  // the scalar backward() is called on
  double shown = std::nan("");  // the step's loss as progress shows it (NaN: loss.item()), e.g. without a penalty
  double correct = 0.0;         // right predictions in the batch ...
  double counted = 0.0;         // ... of how many (0: the family reports no accuracy)
};

struct EpochFamily {
  // Draws the next epoch's batches in a new order from `order` and keeps them; returns how many (> 0).
  std::function<std::size_t(Generator& order)> draw_epoch;
  // The loss of batch i (0-based) of the epoch drawn last; the model is in training mode.
  std::function<EpochStep(std::size_t i)> step;
  // Optional: the model's score on held-out data after each epoch (for keep_best: the highest, or the
  // lowest with options.lower_is_better).
  // The loop puts the model back in training mode afterwards.
  std::function<double()> validate;
  // Optional: state of the family's own that a resumed run needs (e.g. a running baseline), as named
  // tensors of fixed shapes; load_state gets them back, as saved.
  std::function<std::vector<std::pair<std::string, Tensor>>()> save_state;
  std::function<void(const std::map<std::string, Tensor>&)> load_state;
};

struct EpochTrainerOptions {
  std::size_t epochs = 0;       // passes over the training set; 0: train for `steps` instead
  std::size_t steps = 0;        // optimizer updates, when epochs is 0 (epochs are then drawn as needed)
  double lr = 1e-3;             // Adam's
  double clip_norm = 1.0;       // max joint gradient norm; 0 turns clipping off
  std::uint64_t seed = 0;       // the order of the batches
  bool keep_best = false;       // keep the weights of the epoch with the best validation score
  bool lower_is_better = false; // the best score is the lowest (a perplexity), not the highest (an accuracy)
  std::size_t checkpoint_every = 0;  // steps between checkpoints (0: none on the way); epochs: also after each
};

// What on_step receives after every step.
struct EpochProgress {
  std::size_t step = 0;                  // optimizer steps done in all
  std::size_t epoch = 0, batch = 0, batches = 0;  // the epoch under way (1-based), its batches done, of how many
  double loss = 0.0;                     // this step's (EpochStep::shown)
  double accuracy = std::nan("");        // this step's (NaN without one)
  double epoch_loss = 0.0;               // the mean loss of the epoch's steps so far
  double epoch_accuracy = std::nan("");  // the accuracy over the epoch's batches so far
  double grad_norm = 0.0;                // before clipping
  double lr = 0.0;
};

// What on_epoch receives after each epoch (its validation done).
struct EpochReport {
  std::size_t epoch = 0, step = 0;
  double loss = 0.0;                  // the mean of the epoch's step losses
  double validation = std::nan("");   // family.validate() (NaN without it)
  bool best = false;                  // keep_best: the best so far (its weights are kept)
};

class EpochTrainer {
 public:
  // The model must already have its final dtype (the optimizer holds its parameters).
  EpochTrainer(nn::Module& model, EpochFamily family, EpochTrainerOptions options);

  std::function<void(const EpochProgress&)> on_step;
  std::function<void(const EpochReport&)> on_epoch;
  // Called at each checkpoint (options.checkpoint_every, after each epoch when counting epochs,
  // when stopped, at the end); e.g. save_checkpoint into a unit committed with other files.
  std::function<void()> on_checkpoint;
  // Asked after each step and each validation: true stops training there (after a checkpoint).
  std::function<bool()> should_stop;

  // Trains to options.epochs (or options.steps). Returns true at the end, false when should_stop
  // stopped it first. Either way the last thing done is a checkpoint (if on_checkpoint is set).
  bool train();
  bool finished() const;

  // path + ".npz" and path + ".trainer.npz" (see above). load_checkpoint checks every entry (whole,
  // finite, in range, the shapes of the weights and the optimizer's state) before it changes anything
  // but the weights; an IOError names the file and the entry.
  void save_checkpoint(const std::string& path) const;
  void load_checkpoint(const std::string& path);

  // keep_best: puts the kept epoch's weights into the model (the end of a run does; nothing if none yet).
  void restore_best();

  // A new total, for a resumed run: epochs when counting epochs, else steps.
  void set_epochs(std::size_t epochs) { options_.epochs = epochs; }
  void set_steps(std::size_t steps) { options_.steps = steps; }

  std::size_t step() const { return step_; }
  std::size_t epochs_done() const { return epochs_done_; }
  std::size_t epoch_position() const { return position_; }  // batches of the epoch under way done
  std::size_t epoch_size() const { return epoch_size_; }    // its batches (0: none drawn)
  bool has_best() const { return best_epoch_ > 0; }
  std::size_t best_epoch() const { return best_epoch_; }
  double best_score() const { return best_score_; }
  const std::vector<double>& epoch_losses() const { return history_loss_; }       // one per epoch done
  const std::vector<double>& epoch_validation() const { return history_valid_; }  // with validate
  nn::Optimizer& optimizer() { return optimizer_; }
  const EpochTrainerOptions& options() const { return options_; }

 private:
  void start_epoch();
  void one_step();
  void end_epoch();
  void checkpoint();

  nn::Module& model_;
  EpochFamily family_;
  EpochTrainerOptions options_;
  nn::Adam optimizer_;
  Generator order_;
  std::vector<std::uint64_t> epoch_start_;  // order_'s state when the epoch under way was drawn
  std::size_t step_ = 0, epochs_done_ = 0, epoch_size_ = 0, position_ = 0;
  double epoch_loss_sum_ = 0.0, epoch_correct_ = 0.0, epoch_counted_ = 0.0;
  std::vector<Tensor> best_;  // keep_best: the best epoch's parameters (copies)
  std::size_t best_epoch_ = 0;
  double best_score_ = 0.0;
  std::vector<double> history_loss_, history_valid_;
  std::size_t checkpointed_at_ = static_cast<std::size_t>(-1);  // the step of the last checkpoint
};

}  // namespace attn::models
