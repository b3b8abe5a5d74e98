// Measuring a trained ShowAttendTell on rendered scenes (data/scene_captions.hpp): the loss and
// next-word accuracy under teacher forcing, the generated captions against the gold ones (exact
// match, BLEU), and where the attention looked (eval/attention_share.hpp), along the gold captions
// and along the generated ones.
//
//   SceneEvalOptions o;
//   o.beam_size = 3;                                     // 1: greedy
//   SceneEvaluation e = evaluate_scene_captioner(model, set.test, vocab, o);
//   e.overall.exact_match();                             // captions right in full
//   e.bleu.score;                                        // corpus BLEU-4 of the generated captions, in [0, 1]
//   e.decoded_share.object_words().ratio();              // in-mask share / the masks' coverage
//
// Everything runs in eval mode (batch norm's running statistics; hard attention reads the most
// probable cell) under no_grad, and the model's mode is restored.
#pragma once

#include "../data/scene_captions.hpp"
#include "../data/vocab.hpp"
#include "../models/show_attend_tell.hpp"
#include "accuracy.hpp"
#include "attention_share.hpp"
#include "bleu.hpp"

#include <vector>

namespace attn::models {

struct SceneEvalOptions {
  std::size_t batch_size = 64;
  std::size_t beam_size = 1;  // 1: greedy captions
  std::size_t max_len = 0;    // words a caption may have (<eos> included); 0: the longest gold caption + 5
};

struct SceneEvaluation {
  double loss = 0.0;                     // teacher-forced cross-entropy per caption token (<eos> included)
  double teacher_forced_accuracy = 0.0;  // argmax of forward() against the gold next word
  Counts overall;                        // generated captions against the gold ones
  Bleu bleu;                             // corpus BLEU-4 of the generated captions (one reference each)
  AttentionShareMeter teacher_forced_share;  // along the gold captions (teacher forcing)
  AttentionShareMeter decoded_share;         // along the generated captions
  std::vector<data::Tokens> captions;        // the generated captions, in the scenes' order
};

// The scenes in their order, in batches of options.batch_size. ValueError for no scenes or a batch size
// or beam size of 0.
SceneEvaluation evaluate_scene_captioner(ShowAttendTell& model, const std::vector<data::Scene>& scenes,
                                         const data::Vocab& vocab, const SceneEvalOptions& options = {});

}  // namespace attn::models
