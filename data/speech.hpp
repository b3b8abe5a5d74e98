// Spoken digits made on the machine, for Listen, Attend and Spell (Chan et al. 2016): espeak-ng
// says strings of digit words in many voices, and a model reads their log-mel features and
// spells the transcript character by character.
//
//   SpeechSplit s = spoken_digits(2000, 200, 200, /*seed=*/1);
//   s.train[0].text;       // "three six four two two": 1..5 words from "zero" .. "nine"
//   s.train[0].voice;      // {"en-gb-scotland", "iven4", 145, 51}: accent, variant, speed, pitch
//   s.train[0].features;   // [T, 40]: 40 log-mel bands every 10 ms, normalized per utterance
//   Vocab v = speech_vocab();   // the specials, " " and the 15 letters of the ten words
//   SpeechBatch b = make_speech_batch(s.train, {0, 1, 2}, v);   // b.features [3, T_max, 40]
//   SpeechExample mine = speak_example("nine one one", {"en-us", "f2", 150, 60});
//
// Speakers. A speaker is an espeak-ng accent of English (speech_languages()) and a voice
// variant (espeak-ng --voices=variant): the variant changes the pitch range and the formants,
// roughly who is speaking, and the accent how the words are pronounced. Each utterance also
// gets a speed (words per minute) and a pitch drawn from the generator.
//
// Held-out voices. The test split is spoken only by held_out_variants(), six variants (three
// female, three male) that never speak in train or valid: it measures how the model does on
// voices it has never heard, as a speech test set has new speakers. valid has new utterances
// from the training variants. Accents are drawn alike for every split.
//
// Features. 22,050 Hz audio (espeak-ng's rate) in 25 ms windows (551 samples) every 10 ms (220
// samples), n_fft 1024, 40 mel bands from 0 Hz to 8 kHz (as LAS's 40 bands of 16 kHz audio),
// and before and after:
//   trim:   the samples before the first and after the last sample within trim_db (60 dB) of
//           the loudest are dropped: espeak-ng ends every utterance with about 0.35 s of digital
//           silence, which says nothing about the words. T = 1 + (S - 1024) / 220 frames for
//           the S samples kept.
//   floor:  values more than floor_db (80 dB) below the utterance's loudest are raised to that
//           level (librosa's power_to_db(top_db=80)): the pauses between words are digital
//           silence too, whose log would otherwise be log_floor, far below any speech.
//   CMVN:   each band minus its mean over the utterance, divided by its standard deviation
//           (cepstral mean and variance normalization, per utterance): a speaker's loudness and
//           the average colour of their voice (timbre) add a constant to a log band, so they are
//           removed, and every band reaches the model on one scale. A band that is constant
//           (standard deviation below 1e-10) is only centred.
//
// Reproducible. The same seed gives the same data set, bit for bit: every random choice is
// drawn first, in order, on the calling thread; then the utterances are spoken on attn's
// threads (attn::set_num_threads), each one's features computed on one thread, so that the
// numbers do not depend on how many threads there are. The names of the variants are fixed
// in the source, not read from the machine's espeak-ng, so every machine draws the same texts
// and voices (and the same audio with the same espeak-ng, 1.51 here). Each split has its own
// generator seeded from `seed`, so the test set does not change with n_train.
//
// Cost: about 23 ms of CPU an utterance, nearly half of it espeak-ng starting up and most of
// the rest log_mel's FFTs; 2000 + 200 + 200 utterances take about half a minute on two free
// cores.
//
// Needs espeak-ng (tools/setup.sh installs it): without it every function that
// speaks throws an IOError naming the program.
#pragma once

#include "../audio/log_mel.hpp"
#include "../audio/speak.hpp"
#include "../core/random.hpp"
#include "batch.hpp"
#include "vocab.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::data {

// The log-mel options above: 22,050 Hz, window 551, hop 220, n_fft 1024, 40 bands, 0 .. 8 kHz.
audio::LogMelOptions speech_log_mel_options();

struct SpeechOptions {
  std::size_t min_words = 1;  // words per utterance, drawn uniformly from min_words .. max_words
  std::size_t max_words = 5;
  int min_speed = 130;        // words per minute, uniform in min_speed .. max_speed
  int max_speed = 190;
  int min_pitch = 30;         // espeak-ng's 0 .. 99, uniform in min_pitch .. max_pitch
  int max_pitch = 70;
  audio::LogMelOptions features = speech_log_mel_options();
  double trim_db = 60.0;      // drop leading and trailing samples this far below the loudest; 0: keep all
  double floor_db = 80.0;     // raise log-mel values this far below the loudest; 0: no floor
  bool normalize = true;      // CMVN: each band of each utterance to mean 0, standard deviation 1
  std::string program = "espeak-ng";
};

struct SpeechExample {
  std::string text;              // the words joined by single spaces: "three seven one"
  audio::Voice voice;
  xt::xarray<double> features;   // [T, n_mels]
};

struct SpeechSplit {
  std::vector<SpeechExample> train;  // training variants
  std::vector<SpeechExample> valid;  // training variants, other utterances
  std::vector<SpeechExample> test;   // held-out variants only
};

// "zero", "one", ..., "nine": word k is digit k.
const std::vector<std::string>& digit_words();
// The espeak-ng accents: en-us, en-gb, en-gb-scotland, en-gb-x-rp, en-gb-x-gbclan,
// en-gb-x-gbcwmd, en-029.
const std::vector<std::string>& speech_languages();
// espeak-ng 1.51's variants by file name (what -v en-us+<name> takes), without the robots,
// echoes, whispers and duplicates; held_out_variants() are not among training_variants().
const std::vector<std::string>& training_variants();
const std::vector<std::string>& held_out_variants();

// One utterance of any text (a learner's own), with the data set's features. ValueError when
// the audio is shorter than one frame or options do not fit; IOError from espeak-ng.
SpeechExample speak_example(const std::string& text, const audio::Voice& voice, const SpeechOptions& options = {});
// The samples from the first to the last whose magnitude is within trim_db of the peak's
// (trim_db 0: all of them; none when all are silent).
xt::xarray<double> trim_silence(const xt::xarray<double>& samples, double trim_db);
// The features of samples at options.features.sample_rate: trimmed, log-mel, floored,
// normalized. [T, n_mels], T = 0 when fewer than n_fft samples are kept.
xt::xarray<double> speech_features(const xt::xarray<double>& samples, const SpeechOptions& options = {});

// The three splits, n_train + n_valid + n_test utterances. ValueError on options out of
// range (words, speeds, pitches, trim_db, floor_db); IOError naming the program when
// espeak-ng is missing.
SpeechSplit spoken_digits(std::size_t n_train, std::size_t n_valid, std::size_t n_test, std::uint64_t seed,
                          const SpeechOptions& options = {});

// The specials, then " " and the letters of the ten words in alphabetical order: a fixed
// vocabulary (20 tokens), the same for every data set.
Vocab speech_vocab();

// A batch for a listener and a speller: features zero-padded to the longest utterance (after
// CMVN 0 is every band's mean), the transcripts as characters, <bos> + text in tgt_in and
// text + <eos> in tgt_out (data/batch.hpp's convention).
struct SpeechBatch {
  Tensor features;                        // [B, T, n_mels], T the longest utterance
  std::vector<std::size_t> lengths;       // frames of each utterance
  Index tgt_in;                           // [B, U] <bos> c_1 .. c_n, padded
  Index tgt_out;                          // [B, U] c_1 .. c_n <eos>, padded
  std::vector<std::size_t> tgt_lengths;   // n + 1
  std::vector<std::size_t> indices;       // which examples, as positions in the list given

  std::size_t size() const { return lengths.size(); }  // B
};

// examples[indices[0]], examples[indices[1]], ...; characters the vocabulary does not know
// become <unk>. ValueError for an empty list, an index out of range, or an utterance of no frames;
// ShapeError when the utterances have different numbers of bands.
SpeechBatch make_speech_batch(const std::vector<SpeechExample>& examples, const std::vector<std::size_t>& indices,
                              const Vocab& vocab, Dtype dtype = Dtype::Float64);
// One epoch of batches in batch_order (data/batch.hpp); sort_buckets sorts by frames.
std::vector<SpeechBatch> make_speech_batches(const std::vector<SpeechExample>& examples, const Vocab& vocab,
                                             const BatchOptions& options, Generator& gen,
                                             Dtype dtype = Dtype::Float64);

}  // namespace attn::data
