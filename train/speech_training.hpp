// Training chapter 16's Listen, Attend and Spell with the epoch loop of epoch_trainer.hpp, as the
// chapter does: utterances of similar length batched together in a new order each epoch,
// cross-entropy per character (<pad> ignored), and the greedy character error rate on the
// validation utterances after each epoch (reported; the last epoch's weights are kept).
//
//   EpochTrainerOptions o;
//   o.epochs = 12;
//   EpochTrainer trainer(model, speech_family(model, split.train, split.valid, vocab, 32), o);
//   trainer.on_epoch = [](const EpochReport& r) { std::cout << "CER " << r.validation << "\n"; };
//   trainer.train();
#pragma once

#include "epoch_trainer.hpp"

#include "../data/speech.hpp"
#include "../models/las.hpp"

#include <string>
#include <vector>

namespace attn::models {

// The transcripts of `examples`, decoded in batches of 50 without gradients: greedily (beam 1) or
// by beam search, at most max_len characters each, specials dropped.
std::vector<std::string> transcribe_speech(ListenAttendSpell& model, const std::vector<data::SpeechExample>& examples,
                                           const data::Vocab& vocab, std::size_t beam, std::size_t max_len);

// The reference texts of `examples`, and a decoding length long enough for every one of them:
// twice the longest, plus <eos> (at most 200).
std::vector<std::string> speech_texts(const std::vector<data::SpeechExample>& examples);
std::size_t speech_decode_length(const std::vector<data::SpeechExample>& examples);

// The batches (in the model's dtype), loss and validation (the greedy CER on `valid`, a rate in
// [0, 1]: lower is better, so not for keep_best). The model and utterances must outlive the family.
EpochFamily speech_family(ListenAttendSpell& model, const std::vector<data::SpeechExample>& train,
                          const std::vector<data::SpeechExample>& valid, const data::Vocab& vocab,
                          std::size_t batch_size);

}  // namespace attn::models
