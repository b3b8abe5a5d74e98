// Training Show, Attend and Tell on rendered scenes (models/show_attend_tell.hpp) with the
// one epoch loop of train/epoch_trainer.hpp: a family gives its batches, its loss and its
// validation, the trainer does the rest (order, Adam, clipping, keeping the best epoch,
// checkpoints a run resumes from bit for bit).
//
//   data::SceneCaptions set = data::make_scene_captions(5000, 500, 500, seed);
//   CaptionLossOptions loss;
//   loss.doubly_stochastic = 1.0;                            // Xu et al.'s lambda
//   EpochTrainerOptions o;
//   o.epochs = 10;
//   o.keep_best = true;                                      // the epoch with the best validation BLEU
//   EpochTrainer trainer(model, scene_family(model, set.train, set.valid, data::scene_vocab(), 32, loss), o);
//   trainer.train();
//
// One step: a batch of scenes is made (data::make_scene_batch: the pixels of an epoch are never all
// in memory), forward_all, caption_loss (the captions' NLL, the doubly stochastic penalty, and for
// hard attention the REINFORCE terms with their moving-average baseline), backward. The step's shown
// loss is the NLL per caption token, its accuracy the teacher-forced next-word accuracy. After each
// epoch the validation scenes are captioned greedily in eval mode and scored by corpus BLEU-4 (the
// paper's measure). The family's own state is the REINFORCE baseline ("baseline": [value, started]).
#pragma once

#include "../data/scene_captions.hpp"
#include "../data/vocab.hpp"
#include "../models/show_attend_tell.hpp"
#include "epoch_trainer.hpp"
#include "grid_loss.hpp"

#include <vector>

namespace attn::models {

// The model and the scenes must outlive the family. `valid` may be empty: then no validation.
// ValueError for no training scenes or a batch size of 0.
EpochFamily scene_family(ShowAttendTell& model, const std::vector<data::Scene>& train,
                         const std::vector<data::Scene>& valid, const data::Vocab& vocab, std::size_t batch_size,
                         const CaptionLossOptions& loss = {});

}  // namespace attn::models
