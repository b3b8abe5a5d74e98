// Chapter 16's Listen, Attend and Spell on the command line (see speech.hpp).
#include "speech.hpp"

#include "commands.hpp"
#include "output.hpp"
#include "parse.hpp"
#include "progress.hpp"
#include "run_config.hpp"

#include "../decode/decode.hpp"
#include "../eval/error_rate.hpp"
#include "../train/speech_training.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <stdlib.h>
#include <unistd.h>

namespace attn::cli {

using nlohmann::json;

namespace {

constexpr std::uint64_t kMaxModelSize = 65536;
constexpr std::size_t kMaxCharacters = 200;  // a transcript's characters at most (the digits' are under 30)
// Utterances of a split at most: 100,000 take about 20 minutes to speak on two cores, and gigabytes of memory
// (also refused when they would fill half of it).
constexpr std::uint64_t kMaxUtterances = 100000;

// The characters of a decode, specials dropped, as text.
std::string text_of(const models::Hypothesis& h, const data::Vocab& vocab) {
  std::string text;
  for (std::int64_t id : h.tokens)
    if (!data::Vocab::is_special(id)) text += vocab.token(id);
  return text;
}

data::SpeechOptions speech_options(const Fields& f, const std::string& where) {
  data::SpeechOptions o;
  o.min_words = f.count_or("min_words", o.min_words, 1, 100);
  o.max_words = f.count_or("max_words", o.max_words, 1, 100);
  if (o.min_words > o.max_words)
    throw ValueError(where + ": min_words " + std::to_string(o.min_words) + " is more than max_words " +
                     std::to_string(o.max_words));
  return o;
}

}  // namespace

json default_speech_model_config() {
  models::LASConfig c;
  return {{"model", "las"},
          {"listener_dim", c.listener_dim},
          {"pyramid_layers", c.pyramid_layers},
          {"embed_dim", c.embed_dim},
          {"speller_dim", c.speller_dim},
          {"speller_layers", c.speller_layers},
          {"attention_dim", c.attention_dim},
          {"sampling_probability", 0.1}};  // the paper's and the chapter's
}

json default_speech_task_config() {
  const data::SpeechOptions o;
  return {{"name", "speech"}, {"n_train", 2000},         {"n_valid", 200},
          {"n_test", 200},    {"min_words", o.min_words}, {"max_words", o.max_words}};
}

std::unique_ptr<models::ListenAttendSpell> make_speech_model(const json& model, const std::string& where) {
  const json defaults = default_speech_model_config();
  const Fields f(model, where + " (model 'las')");
  std::vector<std::string> known;
  for (const auto& item : defaults.items()) known.push_back(item.key());
  f.only(known);
  models::LASConfig c;
  c.vocab = data::speech_vocab().size();
  c.n_mels = data::speech_log_mel_options().n_mels;
  c.listener_dim = f.count_or("listener_dim", c.listener_dim, 1, kMaxModelSize);
  c.pyramid_layers = f.count_or("pyramid_layers", c.pyramid_layers, 0, 8);
  c.embed_dim = f.count_or("embed_dim", c.embed_dim, 1, kMaxModelSize);
  c.speller_dim = f.count_or("speller_dim", c.speller_dim, 1, kMaxModelSize);
  c.speller_layers = f.count_or("speller_layers", c.speller_layers, 1, 16);
  c.attention_dim = f.count_or("attention_dim", c.attention_dim, 1, kMaxModelSize);
  c.sampling_probability = f.real_or("sampling_probability", 0.1, {0.0, 1.0});
  return std::make_unique<models::ListenAttendSpell>(c);
}

namespace {

// What speaking `n` utterances of the task costs: a few utterances of its mean length are spoken first and
// timed (about 25 ms each; the work is shared by attn's threads, as many as the cores other programs leave
// free), and their features measured.
struct SpeakingCost {
  double seconds = 0;
  double bytes = 0;  // the features of all `n` (doubles), and as much again for the batches built from them
};
SpeakingCost speaking_cost(std::size_t n, const data::SpeechOptions& options) {
  constexpr std::size_t kTimed = 3;
  std::string text;
  for (std::size_t w = 0; w < (options.min_words + options.max_words + 1) / 2; ++w)
    text += (w ? " " : "") + data::digit_words()[w % 10];
  const auto start = std::chrono::steady_clock::now();
  double feature_bytes = 0;
  for (std::size_t i = 0; i < kTimed; ++i)
    feature_bytes += double(data::speak_example(text, audio::Voice{}, options).features.size() * sizeof(double));
  const double each = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / kTimed;
  double load = 0;  // the cores other programs keep busy (a minute's mean), which attn's threads do not get
  if (::getloadavg(&load, 1) != 1) load = 0;
  const double cores = std::max(1.0, std::min(double(get_num_threads()),
                                              double(std::thread::hardware_concurrency()) - load));
  return {each * double(n) / cores, 2 * feature_bytes / kTimed * double(n)};
}

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  return text;
}

}  // namespace

data::SpeechSplit speech_split(const json& task, std::uint64_t seed, const std::string& where) {
  const Fields f(task, where);
  f.only({"name", "n_train", "n_valid", "n_test", "min_words", "max_words"});
  f.one_of("name", {"speech"});  // las hears only the spoken digits: another name is another run's config
  const data::SpeechOptions options = speech_options(f, where);
  const std::size_t n_train = f.count_or("n_train", 2000, 1, kMaxUtterances),
                    n_valid = f.count_or("n_valid", 200, 1, kMaxUtterances),
                    n_test = f.count_or("n_test", 200, 1, kMaxUtterances);
  const std::size_t n = n_train + n_valid + n_test;
  // The utterances are all kept in memory: refused before speaking if they would fill more than half of it.
  const SpeakingCost cost = speaking_cost(n, options);
  const double memory = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGE_SIZE));
  if (memory > 0 && cost.bytes > memory / 2) {
    const double each = cost.bytes / double(n);
    const double fit = memory / 2 / each - double(n_valid + n_test);
    throw ValueError(where + ": " + std::to_string(n) + " utterances would take about " + gigabytes(cost.bytes) +
                     " of memory (their features, about " + std::to_string(std::lround(each / 1e3)) + " kB each, "
                     "and the batches made of them), more than half of this machine's " + gigabytes(memory) +
                     "; give n_train (--n-train) at most " + std::to_string(std::max<long>(1, std::lround(fit))) +
                     " here");
  }
  // Speaking takes a while (2,400 utterances: half a minute): a line says so, with the time it will take.
  Phase phase("speaking " + std::to_string(n) + " utterances with espeak-ng", cost.seconds);
  data::SpeechSplit split = data::spoken_digits(n_train, n_valid, n_test, seed, options);
  phase.done();
  return split;
}

void train_speech_run(json config, const std::string& out, const RunStart& start) {
  std::string where;
  config = epoch_run_config(config, start, "epochs", where);
  const TrainSettings s = read_train_settings(config, where);
  const std::string model_where = start.resumed ? where + ": model" : "the model's settings (--model, --set)";
  const std::string task_where = start.resumed ? where + ": task" : "the task's settings";
  (void)make_speech_model(config.at("model"), model_where);  // the settings fail fast, before any speaking
  speech_options(Fields(config.at("task"), task_where), task_where);
  if (!start.resumed) check_out_folder(out, start.overwrite);
  const auto spoken = std::chrono::steady_clock::now();
  const data::SpeechSplit split =
      speech_split(config.at("task"), s.seed, start.resumed ? task_where : "the task's settings (--task speech, --n-train)");
  const double speaking = std::chrono::duration<double>(std::chrono::steady_clock::now() - spoken).count();
  const data::Vocab vocab = data::speech_vocab();
  manual_seed(s.seed);  // the weights, and the sampled characters of training
  std::unique_ptr<models::ListenAttendSpell> model;
  try {
    model = make_speech_model(config.at("model"), model_where);
  } catch (const std::bad_alloc&) {
    throw ValueError("--set: the model's sizes need more memory than this machine has");
  }
  if (s.dtype == "float32") model->to(Dtype::Float32);
  models::EpochTrainerOptions options = epoch_trainer_options(s);
  models::EpochTrainer trainer(*model, models::speech_family(*model, split.train, split.valid, vocab, s.batch_size),
                               options);
  const std::unique_ptr<RunLock> lock = begin_epoch_run(trainer, start, out, vocab_json_text(data::Vocab(), vocab));

  // Ctrl-C from here on is read after each step and after each validation (and the line below says training
  // has begun): the run commits a checkpoint it resumes from.
  std::optional<SigintCatcher> catcher(std::in_place);
  std::printf("training las (%zu parameters, %s) on speech: %zu train / %zu valid / %zu test utterances (the test "
              "spoken by %zu voices never heard in training), spoken in %.1f s, seed %llu%s\n",
              model->num_parameters(), s.dtype.c_str(), split.train.size(), split.valid.size(), split.test.size(),
              data::held_out_variants().size(), speaking, static_cast<unsigned long long>(s.seed),
              start.resumed ? resumed_text(trainer).c_str() : "");
  std::fflush(stdout);
  const std::size_t first_epoch = trainer.epochs_done();
  const auto write_plot = [&] {
    write_epoch_plot(out + "/loss.svg", trainer, "training loss and validation CER per epoch", "",
                     {{"training loss (nats per character)", trainer.epoch_losses()},
                      {"validation CER (greedy)", trainer.epoch_validation()}});
  };
  EpochRunView view;
  view.validation = [](const models::EpochReport& r) {
    char text[64];
    std::snprintf(text, sizeof text, "validation CER %.1f%% (greedy)", 100 * r.validation);
    return std::string(text);
  };
  view.write_plots = write_plot;
  const double seconds = run_epochs(trainer, out, config, data::Vocab(), vocab, split.train.size(), s.batch_size, catcher,
                                    view);
  std::printf("training time: %zu epochs in %.1f s (with the validation after each)\n", s.epochs - first_epoch, seconds);
  const std::vector<std::string> hyp =
      models::transcribe_speech(*model, split.test, vocab, 1, models::speech_decode_length(split.test));
  const std::vector<std::string> refs = models::speech_texts(split.test);
  const double cer = models::character_error_rate(hyp, refs).rate();
  const double wer = models::word_error_rate(hyp, refs).rate();

  write_plot();
  std::printf("held-out voices (%zu utterances, greedy): CER %.1f%%, WER %.1f%%  (checkpoint: %s; plot: %s/loss.svg)\n",
              split.test.size(), 100 * cer, 100 * wer, out.c_str(), out.c_str());
}

void eval_speech(Run& run, std::size_t beam, const std::string& predictions_file, bool overwrite,
                 const std::string& dir) {
  // Each split has its own generator (data/speech.hpp): the test utterances are the run's with
  // one training and one validation utterance spoken instead of all of them.
  json task = run.config.at("task");
  task["n_train"] = 1;
  task["n_valid"] = 1;
  const data::SpeechSplit split = speech_split(task, run.config.at("seed").get<std::uint64_t>(), run.config_file + ": task");
  const std::vector<std::string> hyp =
      models::transcribe_speech(*run.speller, split.test, run.tgt_vocab, beam, models::speech_decode_length(split.test));
  const std::vector<std::string> refs = models::speech_texts(split.test);
  const models::ErrorRate c = models::character_error_rate(hyp, refs), w = models::word_error_rate(hyp, refs);
  std::printf("%zu test utterances, spoken by %zu voices never heard in training; %s: CER %.1f%%, WER %.1f%%\n",
              split.test.size(), data::held_out_variants().size(),
              beam > 1 ? ("beam search " + std::to_string(beam)).c_str() : "greedy", 100 * c.rate(), 100 * w.rate());
  std::printf("words: %zu substitutions, %zu deletions, %zu insertions of %zu\n", w.substitutions, w.deletions,
              w.insertions, w.reference_length);
  if (!predictions_file.empty()) {
    std::string text;
    for (std::size_t i = 0; i < split.test.size(); ++i)
      text += refs[i] + "\t" + audio::voice_name(split.test[i].voice) + "\t" + hyp[i] + "\n";
    write_output(Output{"--predictions", predictions_file, overwrite}, text, {}, {dir});
    std::printf("wrote %s\n", predictions_file.c_str());
  }
}

namespace {

// The names `espeak-ng --voices[=variant]` lists (variants: their file's name; languages: every name
// -v accepts), or nothing if espeak-ng cannot be run (speaking then fails with its own message).
std::set<std::string> espeak_names(const std::string& listing, bool file_column) {
  std::set<std::string> names;
  FILE* pipe = ::popen(("espeak-ng " + listing + " 2>/dev/null").c_str(), "r");
  if (!pipe) return names;
  char buffer[512];
  for (bool header = true; std::fgets(buffer, sizeof buffer, pipe); header = false) {
    if (header) continue;
    std::string text(buffer);
    for (std::size_t at; (at = text.find(")(")) != std::string::npos;) text.replace(at, 2, ") (");  // "(en-gb 3)(en 5)"
    std::istringstream line(text);
    std::string priority, language, gender, name, file;
    if (!(line >> priority >> language >> gender >> name >> file)) continue;
    names.insert(file.substr(file.rfind('/') + 1));
    if (file_column) continue;
    names.insert(language);  // and the names espeak-ng also accepts: the file, "(en 2)" other languages
    names.insert(file);
    for (std::string other; line >> other;)
      if (other.size() > 1 && other.front() == '(') names.insert(other.substr(1));
  }
  ::pclose(pipe);
  return names;
}

// espeak-ng speaks its default voice for a language or variant it does not know, while attn would name the
// one asked for: refuse it instead.
void check_voice(const audio::Voice& voice, const std::string& voice_text) {
  const std::set<std::string> languages = espeak_names("--voices", false);
  if (!languages.empty() && !languages.count(voice.language))
    throw ValueError("--voice '" + voice_text + "': espeak-ng has no language '" + voice.language +
                     "' (espeak-ng --voices lists them, e.g. en-us, en-gb-scotland, fr-fr)");
  if (voice.variant.empty()) return;
  const std::set<std::string> variants = espeak_names("--voices=variant", true);
  if (!variants.empty() && !variants.count(voice.variant))
    throw ValueError("--voice '" + voice_text + "': espeak-ng has no variant '" + voice.variant +
                     "' (espeak-ng --voices=variant lists them, e.g. f2, m3, Alex)");
}

}  // namespace

Transcription transcribe_text(Run& run, const std::string& text, const std::string& voice_text, std::size_t beam) {
  audio::Voice voice;
  voice.variant = data::held_out_variants().front();  // a voice the model never heard
  if (!voice_text.empty()) {
    const auto plus = voice_text.find('+');
    voice.language = voice_text.substr(0, plus);
    voice.variant = plus == std::string::npos ? "" : voice_text.substr(plus + 1);
    if (voice.language.empty() || (plus != std::string::npos && voice.variant.empty()))
      throw ValueError("--voice '" + voice_text + "': expected LANGUAGE or LANGUAGE+VARIANT, e.g. en-us+f2");
    check_voice(voice, voice_text);
  }
  if (text.find_first_not_of(" \t\n") == std::string::npos) throw ValueError("a text to speak is empty");  // the command prefixes its name
  // Speaking and hearing grow with the text (10,000 words: over a minute and gigabytes), and the transcript
  // stops at kMaxCharacters: a longer text could only come back cut.
  if (text.size() > kMaxCharacters)
    throw ValueError("las transcribes at most " + std::to_string(kMaxCharacters) + " characters (it was "
                     "trained on a few spoken digits); this text has " + std::to_string(text.size()) +
                     ": give it in shorter parts");
  Transcription t;
  t.spoken = data::speak_example(text, voice);
  const data::SpeechBatch b = data::make_speech_batch({t.spoken}, {0}, run.tgt_vocab, run.speller->dtype());
  models::DecodeOptions options;
  options.max_len = std::min(kMaxCharacters, 2 * text.size() + 10);
  options.beam_size = beam;
  no_grad guard;
  models::DecoderState state = run.speller->start(b.features, b.lengths);
  const models::Hypothesis h = (beam > 1 ? models::beam_search(*run.speller, state, options)
                                         : models::greedy_decode(*run.speller, state, options)).front();
  t.transcript = text_of(h, run.tgt_vocab);
  if (!h.finished)  // the speller wrote no end: what is printed is cut, and the user should know
    std::cerr << "note: the transcript of \"" << visible_text(text) << "\" stopped unfinished at the "
              << options.max_len << " characters it may have (twice the text's length and 10, at most "
              << kMaxCharacters << ")\n";
  for (std::int64_t id : h.tokens) t.characters.push_back(run.tgt_vocab.token(id));
  t.attention = models::attention_matrix(h, "attention").to_array();  // [L, U]
  t.hypothesis = h;
  return t;
}

}  // namespace attn::cli
