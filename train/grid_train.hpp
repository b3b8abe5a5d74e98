// Training a GridCaptioner (chapter 4): the loop of train/trainer.hpp, but fed
// feature grids instead of source sentences, and with the loss of grid_loss.hpp
// (the doubly stochastic penalty, and REINFORCE for hard attention).
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
// attention's samples) give the same weights.
#pragma once

#include "../data/grid.hpp"
#include "../data/vocab.hpp"
#include "../models/grid_captioner.hpp"
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

}  // namespace attn::models
