// A model on a held-out set: greedy outputs scored against the gold targets
// (overall and by source length), the teacher-forced loss, and, when the task
// knows its alignment and the model has attention, how often the attention
// peak hits the gold source position (chapter 9).
//
//   Evaluation e = evaluate(model, split.test, vocab, vocab);
//   e.overall.exact_match();        // sentences right in full
//   e.by_length.at(12).exact_match();
//   e.alignment.hit_rate();
//   bleu_from_stats(e.bleu).score;  // corpus BLEU of the greedy outputs, on the examples' words
#pragma once

#include "bleu.hpp"
#include "../data/batch.hpp"
#include "alignment_accuracy.hpp"
#include "../models/seq2seq.hpp"

#include <map>
#include <vector>

namespace attn::models {

struct EvaluateOptions {
  std::size_t batch_size = 64;
  std::size_t max_len = 0;  // tokens decoded at most; 0: 2 * S + 10 for a batch of sources of length <= S
  bool keep_predictions = false;  // fill Evaluation::predictions
};

// One decoded example: examples[index] and the words the model wrote.
struct Prediction {
  std::size_t index = 0;
  data::Tokens hypothesis;
};

struct Evaluation {
  std::size_t step = 0;                   // the training step it was made at (set by the trainer)
  double loss = 0.0;                      // teacher-forced cross-entropy per target token (<eos> included)
  double teacher_forced_accuracy = 0.0;   // argmax of forward() against the gold next token
  Counts overall;                         // greedy outputs against the gold sentences
  std::map<std::size_t, Counts> by_length;  // the same per source length
  AlignmentStats alignment;               // teacher-forced attention vs the gold alignment (steps = 0 if none)
  BleuStats bleu;                         // the greedy outputs' words against the gold words (bleu.hpp)
  std::map<std::size_t, BleuStats> bleu_by_length;
  std::vector<Prediction> predictions;    // in the order decoded, with keep_predictions
};

// Examples are batched in order of source length (no randomness), decoded under
// no_grad in eval mode (the model's mode is restored). A copying model (models::CopyingModel
// with copies(): conv-copy, copynet) is scored over each batch's extended vocabulary
// (models/extended_source.hpp): it may write source words the target vocabulary lacks, and the
// loss and accuracies count such a reference word as its source copy's id, not as <unk>.
Evaluation evaluate(Seq2Seq& model, const std::vector<data::Example>& examples, const data::Vocab& src_vocab,
                    const data::Vocab& tgt_vocab, const EvaluateOptions& options = {});

// Every row of a [B, T] alignment Index, -1 where there is no gold position.
std::vector<Ids> alignment_rows(const Index& alignment);

}  // namespace attn::models
