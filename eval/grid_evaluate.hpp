// Measuring a trained GridCaptioner (chapter 4): loss, accuracy and where it looked.
//
//   GridEvaluation e = evaluate_grid_captioner(model, split.test, vocab);
//   e.overall.exact_match();                    // captions right in full
//   e.alignment.hit_rate();                     // attention peak on the cell the word describes
#pragma once

#include "../data/grid.hpp"
#include "../data/vocab.hpp"
#include "../models/grid_captioner.hpp"
#include "accuracy.hpp"
#include "alignment_accuracy.hpp"

#include <vector>

namespace attn::models {

struct GridEvaluation {
  double loss = 0.0;                     // teacher-forced cross-entropy per caption token (<eos> included)
  double teacher_forced_accuracy = 0.0;  // argmax of forward() against the gold next word
  Counts overall;                        // greedy captions against the gold ones
  AlignmentStats alignment;              // teacher-forced: peak of the weights vs the gold cell of each word
  AlignmentStats decoded_alignment;      // the same along the greedy captions (step t vs gold word t)
};

// The examples in their order, in batches of batch_size, in eval mode (restored).
// max_len = 0: the longest gold caption + 5.
GridEvaluation evaluate_grid_captioner(GridCaptioner& model, const std::vector<data::GridExample>& examples,
                                       const data::Vocab& vocab, std::size_t batch_size = 64, std::size_t max_len = 0);

}  // namespace attn::models
