// Training a GridCaptioner (chapter 4): the epoch loop of train/epoch_trainer.hpp fed
// feature grids, with the loss of grid_loss.hpp (the doubly stochastic penalty, and
// REINFORCE for hard attention).
//
//   GridTrainOptions opt;
//   opt.steps = 1500;
//   opt.loss.doubly_stochastic = 0.1;
//   train_grid_captioner(model, split.train, vocab, opt, [](const Progress& p) {
//     std::cout << p.step << " " << p.loss << " " << p.accuracy << "\n";
//   });
//
// One step: the next batch of the shuffled training set, forward_all, caption_loss,
// backward, clip the joint gradient norm, Adam. Reproducible: the same seeds
// (options.seed for the order, attn::manual_seed for the weights and hard
// attention's samples) give the same weights. grid_family() is the same training as
// an EpochFamily, for an EpochTrainer that checkpoints and resumes (the command line's).
#pragma once

#include "../data/grid.hpp"
#include "../data/vocab.hpp"
#include "../models/grid_captioner.hpp"
#include "epoch_trainer.hpp"
#include "grid_loss.hpp"
#include "trainer.hpp"

#include <functional>

namespace attn::models {

struct GridTrainOptions {
  std::size_t steps = 1000;     // optimizer updates
  std::size_t batch_size = 32;
  double lr = 1e-3;             // Adam's
  double clip_norm = 5.0;       // max joint gradient norm; 0 turns clipping off
  std::uint64_t seed = 0;       // the order of the training examples
  std::size_t log_every = 50;   // steps between progress reports (0: never)
  CaptionLossOptions loss;
};

// Trains in place (the model must already have its final dtype) and returns the
// last progress report: loss and teacher-forced accuracy averaged over the last
// log_every steps (or every step, if log_every is 0).
Progress train_grid_captioner(GridCaptioner& model, const std::vector<data::GridExample>& examples,
                              const data::Vocab& vocab, const GridTrainOptions& options = {},
                              const std::function<void(const Progress&)>& on_progress = {});

// The captioner's batches (made in the model's dtype) and loss for an EpochTrainer: a step's shown
// loss is the captions' NLL per token, its accuracy teacher-forced; its own state is the REINFORCE
// baseline ("baseline": [value, started]). The model and examples must outlive the family.
EpochFamily grid_family(GridCaptioner& model, const std::vector<data::GridExample>& examples,
                        const data::Vocab& vocab, std::size_t batch_size, const CaptionLossOptions& loss = {});

}  // namespace attn::models
