// Captioning grids with a trained GridCaptioner (chapter 4), and measuring it.
//
//   std::vector<Hypothesis> caps = greedy_caption(model, features);  // features [B, 9, D]
//   vocab.decode(caps[0].tokens);               // {"red", "square", "top", "left"}
//   attention_grid(caps[0]);                    // [T, 3, 3]: where the model looked for each word
//
//   GridEvaluation e = evaluate_grid_captioner(model, split.test, vocab);
//   e.overall.exact_match();                    // captions right in full
//   e.alignment.hit_rate();                     // attention peak on the cell the word describes
//
// With hard attention, decoding (eval mode) looks at the single most probable
// cell: the weights of every word are one-hot.
#pragma once

#include "data/batch.hpp"
#include "decode.hpp"
#include "grid_captioner.hpp"
#include "metrics.hpp"

#include <vector>

namespace attn::models {

// One hypothesis per grid, decoded greedily under no_grad in eval mode (the mode
// is restored). attention["attention"][t] is the [N] weights that made c_t for
// tokens[t] (one-hot for hard attention); attention["alpha"][t] the distribution a_t.
// Only options.max_len and the special ids are used.
std::vector<Hypothesis> greedy_caption(GridCaptioner& model, const Tensor& features, const DecodeOptions& options = {});

// The weights of every generated word as grids: [T, rows, N / rows] (rows = 3: [T, 3, 3]).
Tensor attention_grid(const Hypothesis& hypothesis, std::size_t rows = 3, const std::string& name = "attention");

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
