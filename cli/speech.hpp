// Chapter 16's Listen, Attend and Spell on the command line: spoken digit strings made on this
// machine by espeak-ng (data/speech.hpp), transcribed character by character.
//
//   attn train --model las --task speech --out runs/las            # 2000 utterances, 12 epochs
//   attn eval --checkpoint runs/las [--beam 4]                     # CER and WER on voices never heard
//   attn translate --checkpoint runs/las "nine one one"            # spoken by espeak-ng, then transcribed
//   attn translate --checkpoint runs/las --voice en-gb-scotland+f2 "four two"
//   attn heatmap --checkpoint runs/las "four two" --out a.svg      # the alignment over the spectrogram
//
// The task {"name": "speech", "n_train": 2000, "n_valid": 200, "n_test": 200, "min_words": 1,
// "max_words": 5} is spoken again from the run's seed whenever it is needed (the same seed gives
// the same utterances, bit for bit, with the same espeak-ng); the test split is spoken only by
// voices that never speak in training. Training runs in epochs (Adam, clipping, batches of
// similar length), printing the validation CER after each; the last epoch's weights are kept,
// as in the chapter (train/speech_training.hpp, with the loop of train/epoch_trainer.hpp). A checkpoint
// is committed after every epoch and at the step where Ctrl-C stops: --resume continues the run bit
// for bit (--epochs: a new total).
//
// Where a run differs from the chapter's: it trains in float32 unless --dtype float64 (the chapter:
// float64), and --seed also orders the batches (the chapter: a generator of its own, seeded 2), so
// its error rates are not the chapter's to the digit. The audio is espeak-ng's: eval speaks the test
// utterances again, and another espeak-ng version than the run's may say them differently.
#pragma once

#include "run_dir.hpp"

#include "../data/speech.hpp"
#include "../models/las.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace attn::cli {

// {"model": "las", "listener_dim": 64, "pyramid_layers": 3, "embed_dim": 32, "speller_dim": 128,
//  "speller_layers": 1, "attention_dim": 64, "sampling_probability": 0.1}
nlohmann::json default_speech_model_config();
nlohmann::json default_speech_task_config();

// The speller of `model` (unknown or mistyped fields: ValueError naming `where` and the field).
std::unique_ptr<models::ListenAttendSpell> make_speech_model(const nlohmann::json& model, const std::string& where);

// The task's three splits, spoken with `seed` (ValueError naming `where` and a bad field).
data::SpeechSplit speech_split(const nlohmann::json& task, std::uint64_t seed, const std::string& where);

// Trains into `out` (new or empty unless start.overwrite), or resumes the run there (start.resumed);
// everything is checked first.
struct RunStart;
void train_speech_run(nlohmann::json config, const std::string& out, const RunStart& start);

// CER and WER of the held-out voices, greedy or with beam search; with `predictions`, also
// reference<TAB>voice<TAB>transcript lines for that file.
void eval_speech(Run& run, std::size_t beam, const std::string& predictions_file, bool overwrite,
                 const std::string& dir);

// `text` spoken by `voice` ("en-us+f2"; "" for a held-out voice) and transcribed greedily (or
// with beam search of size `beam`).
struct Transcription {
  data::SpeechExample spoken;
  std::string transcript;
  std::vector<std::string> characters;  // the characters written, <eos> included
  xt::xarray<double> attention;         // [L, U]: each character's weights over the listener states
  models::Hypothesis hypothesis;        // as decoded: its steps and beam for `heatmap --html`
};
Transcription transcribe_text(Run& run, const std::string& text, const std::string& voice, std::size_t beam = 1);

}  // namespace attn::cli
