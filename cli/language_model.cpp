// Language models on the command line (see language_model.hpp).
#include "language_model.hpp"

#include "commands.hpp"
#include "output.hpp"
#include "parse.hpp"
#include "progress.hpp"
#include "run_config.hpp"

#include "../decode/generate.hpp"
#include "../models/registry.hpp"
#include "../train/lm_training.hpp"

#include <xtensor/xview.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

namespace attn::cli {

using nlohmann::json;

namespace {

constexpr std::uint64_t kMaxLength = 4096;        // predictions in a chunk: a window, not a book
constexpr std::uint64_t kMaxGenerated = 100000;   // tokens one generate writes
constexpr std::size_t kMaxPromptBytes = 1 << 20;  // a prompt is a sentence or a page

// A text file the user names, read once and checked (data/text_file.hpp), with a progress bar.
data::TextFile read_text(const std::string& file, data::TextUnit unit) {
  std::atomic<double> fraction{0.0};
  Phase phase("reading " + visible_text(file), 0, [&fraction] { return fraction.load(); });
  data::TextFile text = data::read_text_file(file, unit, &fraction);
  phase.done();
  return text;
}

std::string number_text(double x) {  // 0.1 -> "0.1"
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

// Text a model wrote, for a terminal: its lines kept, every other control character made visible.
std::string visible_text_lines(const std::string& text) {
  std::string out, line;
  std::istringstream lines(text);
  for (bool first = true; std::getline(lines, line); first = false) out += (first ? "" : "\n") + visible_text(line);
  return out;
}

// The share of the chunks' targets (every token but a chunk's first) that read as <unk>: a perplexity over
// text with many unknown words is mostly the unknown word's, which is easy to guess.
double unknown_share(const std::vector<data::Tokens>& chunks, const data::Vocab& vocab) {
  std::size_t unknown = 0, targets = 0;
  for (const data::Tokens& chunk : chunks)
    for (std::size_t i = 1; i < chunk.size(); ++i, ++targets) unknown += vocab.id(chunk[i]) == data::Vocab::unk_id;
  return targets ? double(unknown) / double(targets) : 0.0;
}

// "649 words (38.2% <unk>), perplexity 143.20 (4.964 nats per word)", with bits per character for characters.
std::string score_text(const models::LanguageModelScore& s, double unknown, data::TextUnit unit) {
  char text[200];
  const bool words = unit == data::TextUnit::Words;
  std::snprintf(text, sizeof text, "%s %s (%.1f%% <unk>), ", with_commas(s.tokens).c_str(),
                words ? (s.tokens == 1 ? "word" : "words") : (s.tokens == 1 ? "character" : "characters"), 100 * unknown);
  std::string out = text;
  if (words)
    std::snprintf(text, sizeof text, "perplexity %.2f (%.3f nats per word)", s.perplexity(), s.cross_entropy());
  else
    std::snprintf(text, sizeof text, "%.3f bits per character (%.3f nats; perplexity %.2f)", s.bits_per_token(),
                  s.cross_entropy(), s.perplexity());
  return out + text;
}

// visit(chunk, t, log_probs) for every target t of every chunk, in order, with the model's log p of every token
// after chunk[0..t]: a few chunks at a time, since a batch's distributions are B x T x V numbers.
template <class Visit>
void visit_targets(models::LanguageModel& model, const std::vector<data::Tokens>& chunks, const data::Vocab& vocab,
                   Visit visit) {
  constexpr std::size_t kChunks = 4;
  for (std::size_t begin = 0; begin < chunks.size(); begin += kChunks) {
    std::vector<std::size_t> indices;
    for (std::size_t i = begin; i < std::min(chunks.size(), begin + kChunks); ++i) indices.push_back(i);
    const data::LMBatch batch = data::make_lm_batch(chunks, indices, vocab);
    const xt::xarray<double> logp = model.next_log_probs(batch.inputs);  // [B, T, V]
    for (std::size_t b = 0; b < batch.size(); ++b)
      for (std::size_t t = 0; t < batch.lengths[b]; ++t)
        visit(indices[b], t, xt::xarray<double>(xt::view(logp, b, t, xt::all())), std::size_t(batch.targets(b, t)));
  }
}

// What score reports of a text's chunks, from one pass over them a batch at a time: the model's score, the
// targets that read as <unk> (the share a score line gives), the text's tokens outside the vocabulary (the
// note; a written <unk> is no unknown word) and, with per_token, each target's -log p in stream order (target
// k is the stream's token k + 1: chunks of one stream overlap by one token, so each token but the first is a
// target once). The model is in eval mode, as load_run leaves it.
struct ChunksScore {
  models::LanguageModelScore score;  // without per_token
  std::size_t unknown_targets = 0, unknown_tokens = 0;
  std::vector<double> nll;
};
ChunksScore score_chunks(models::LanguageModel& model, const std::vector<data::Tokens>& chunks,
                         const data::Vocab& vocab, bool per_token) {
  ChunksScore out;
  const std::string& first = chunks.front().front();  // read, never predicted
  out.unknown_tokens = vocab.id(first) == data::Vocab::unk_id && first != data::Vocab::unk_token;
  // evaluate_language_model's batches (its default size, -log p summed per batch: the perplexity eval prints), or
  // visit_targets' for the log p of every token (a batch's distributions are B x T x V numbers).
  const std::size_t batch_size = per_token ? 4 : 32;
  for (std::size_t begin = 0; begin < chunks.size(); begin += batch_size) {
    std::vector<std::size_t> indices;
    for (std::size_t i = begin; i < std::min(chunks.size(), begin + batch_size); ++i) indices.push_back(i);
    const data::LMBatch batch = data::make_lm_batch(chunks, indices, vocab);
    for (std::size_t b = 0; b < batch.size(); ++b)
      for (std::size_t t = 0; t < batch.lengths[b]; ++t) {
        const bool unknown = batch.targets(b, t) == data::Vocab::unk_id;
        out.unknown_targets += unknown;
        out.unknown_tokens += unknown && chunks[indices[b]][t + 1] != data::Vocab::unk_token;
      }
    if (!per_token) {
      std::size_t n = 0;
      out.score.nll += model.nll_sum(batch.inputs, batch.targets, &n);
      out.score.tokens += n;
      continue;
    }
    const xt::xarray<double> logp = model.next_log_probs(batch.inputs);  // [B, T, V]
    for (std::size_t b = 0; b < batch.size(); ++b)
      for (std::size_t t = 0; t < batch.lengths[b]; ++t) out.nll.push_back(-logp(b, t, std::size_t(batch.targets(b, t))));
  }
  return out;
}

data::TextUnit unit_of(const Run& run) {
  return data::text_unit(Fields(run.config.at("task"), run.config_file + ": task").one_of("unit", {"words", "characters"}));
}

std::size_t chunk_length(const Run& run) {
  return Fields(run.config.at("task"), run.config_file + ": task").count("length", 1, kMaxLength);
}

// A note on standard error, when a text the user gives (a prompt, a file to score) holds `unknown` of its
// `tokens` outside the model's vocabulary.
void note_unknown(const std::string& what, std::size_t unknown, std::size_t tokens) {
  if (unknown)
    std::cerr << "note: " << what << ": " << with_commas(unknown) << " of its " << with_commas(tokens)
              << " tokens " << (unknown == 1 ? "is" : "are") << " not in the model's vocabulary and read as <unk>\n";
}

// A text the user gives as the run's tokens, with note_unknown.
std::vector<std::int64_t> encode_text(const Run& run, const data::Tokens& tokens, const std::string& what) {
  std::size_t unknown = 0;
  std::vector<std::int64_t> ids;
  for (const std::string& t : tokens) {
    const std::int64_t id = run.src_vocab.id(t);
    unknown += id == data::Vocab::unk_id && t != data::Vocab::unk_token;
    ids.push_back(id);
  }
  note_unknown(what, unknown, tokens.size());
  return ids;
}

Run load_language_model_run(const std::string& dir, const std::string& command) {
  Run run = load_run(dir);
  if (!run.is_language_model())
    throw ValueError(command + ": " + dir + " holds a " + run.model_name() + " model, not a language model (" +
                     "pointer-sentinel or transformer-lm)");
  return run;
}

}  // namespace

bool is_text_task_file(const std::string& task) { return models::task_kind(task) == "FILE.txt"; }

void check_text_unit(const json& config, const std::string& where) {
  const std::string model = config.at("model").at("model").get<std::string>();
  const std::string unit = Fields(config.at("task"), where + ": task").one_of("unit", {"words", "characters"});
  if (unit != models::language_model_unit(model))
    throw IOError(where + ": task: key 'unit' is \"" + unit + "\", but a " + model + " model reads " +
                  models::language_model_unit(model) + " (the unit is the model's)");
}

void refuse_language_model(const Run& run, const std::string& command, const std::string& dir) {
  if (run.is_language_model())
    throw ValueError(command + ": " + dir + " holds a language model (" + run.model_name() + "), which reads no source " +
                     "to decode: write text with attn generate --checkpoint " + shell_word(dir) +
                     ", or score a text with attn score --checkpoint " + shell_word(dir) + " FILE.txt");
}

json default_text_task_config(const std::string& file, const std::string& model) {
  const std::string path = std::filesystem::absolute(file).lexically_normal().string();
  if (!valid_utf8(path))
    throw ValueError("--task: the file name '" + file + "' is not valid UTF-8, and config.json can only store UTF-8 "
                     "text; rename the file");
  const std::string unit = models::language_model_unit(model);
  // Words seen fewer than 3 times read as <unk>, as chapter 20's: <unk> is then a word the model learns, not
  // one it meets only in the held-out lines (where any copy of an earlier <unk> would score as a right guess).
  return {{"name", "text"},        {"file", path},          {"unit", unit},
          {"length", unit == "words" ? 64 : 32},             {"valid_fraction", 0.1},
          {"test_fraction", 0.1},  {"min_freq", unit == "words" ? 3 : 1}, {"max_vocab", 0}};
}

TextTask make_text_task(const json& config, const std::string& where) {
  TextTask t;
  t.config = config;
  const Fields f(config, where);
  f.only({"name", "file", "unit", "length", "valid_fraction", "test_fraction", "min_freq", "max_vocab", "checksum"});
  f.one_of("name", {"text"});
  const std::string file = f.text("file");
  t.unit = data::text_unit(f.one_of("unit", {"words", "characters"}));
  const std::size_t length = f.count("length", 1, kMaxLength);
  const double valid_fraction = f.real_or("valid_fraction", 0.1, {0.0, 1.0, true, true});
  const double test_fraction = f.real_or("test_fraction", 0.1, {0.0, 1.0, true, true});
  if (valid_fraction + test_fraction >= 1)
    throw ValueError(where + ": valid_fraction + test_fraction must be below 1 (some lines must train), got " +
                     number_text(valid_fraction) + " + " + number_text(test_fraction));
  const std::size_t min_freq = f.count_or("min_freq", 1, 1, kMaxExamples);
  const std::size_t max_vocab = f.count_or("max_vocab", 0, 0, 10000000);
  // eval and --resume rebuild the held-out lines: they must come from this very file.
  const data::TextFile text = read_text(file, t.unit);
  const std::vector<std::string>& lines = text.lines;
  const std::string& checksum = text.checksum;
  if (config.contains("checksum") && config.at("checksum") != checksum)
    throw IOError(file + " has changed since the model was trained (checksum " + checksum + ", recorded " +
                  (config.at("checksum").is_string() ? config.at("checksum").get<std::string>() : config.at("checksum").dump()) +
                  "): its held-out lines would not be those of the run");
  t.config["checksum"] = checksum;
  try {
    t.split = data::split_text(lines, t.unit, valid_fraction, test_fraction);
  } catch (const ValueError&) {
    std::size_t with_text = 0;
    for (const std::string& line : lines) with_text += !data::line_tokens(line, data::TextUnit::Words).empty();
    throw IOError(file + ": " + std::to_string(with_text) + " lines with text are too few to train a language model "
                  "on and hold lines out for validation and test (the last " + number_text(test_fraction) +
                  " of them and the " + number_text(valid_fraction) + " before): it needs 3 lines at the very least");
  }
  // <eos> is a special token, always in the vocabulary: counted with the words it would take one of max_vocab's places.
  data::Tokens words;
  for (const std::string& token : t.split.train)
    if (token != data::Vocab::eos_token) words.push_back(token);
  t.vocab = data::Vocab::build({words}, min_freq, max_vocab);
  // A word is a key of vocab.json and is printed by generate: printable text (read_text_lines checked it).
  if (t.vocab.size() <= std::size_t(data::Vocab::unk_id) + 1)
    t.warning = "no token occurs " + std::to_string(min_freq) + " times in the training lines (--min-freq " +
                std::to_string(min_freq) + "): every token reads as <unk>";
  t.train = data::lm_chunks({t.split.train}, length);
  t.valid = data::lm_chunks({t.split.valid}, length);
  t.test = data::lm_chunks({t.split.test}, length);
  if (t.train.empty() || t.valid.empty() || t.test.empty())
    throw IOError(file + ": a part of the text holds fewer than 2 tokens (train " + std::to_string(t.split.train.size()) +
                  ", validation " + std::to_string(t.split.valid.size()) + ", test " + std::to_string(t.split.test.size()) +
                  "): give a longer text, or larger --valid-fraction");
  return t;
}

void train_language_model_run(json config, const std::string& out, const RunStart& start) {
  std::string where;
  config = epoch_run_config(config, start, "epochs", where);
  const TrainSettings s = read_train_settings(config, where);
  const std::string model_where = start.resumed ? where + ": model" : "the model's settings (--model, --set)";
  (void)build_language_model(config.at("model"), 8, model_where);  // the settings fail fast, before any reading
  check_text_unit(config, where);
  if (!start.resumed) check_out_folder(out, start.overwrite);
  TextTask task = make_text_task(config.at("task"), start.resumed ? where + ": task" : "the task's settings (--task)");
  if (!task.warning.empty()) std::cout << "warning: " << task.warning << std::endl;
  json run_config = config;
  run_config["task"] = task.config;
  manual_seed(s.seed);
  std::unique_ptr<models::LanguageModel> model = build_language_model(config.at("model"), task.vocab.size(), model_where);
  if (s.dtype == "float32") model->module().to(Dtype::Float32);
  if (model->max_length() && task.config.at("length").get<std::size_t>() > model->max_length())
    throw ValueError(model_where + ": max_len " + std::to_string(model->max_length()) + " is shorter than the task's "
                     "chunks of " + task.config.at("length").dump() + " tokens (--set max_len=N)");
  models::EpochTrainerOptions options = epoch_trainer_options(s);
  options.keep_best = true;  // the epoch with the lowest validation perplexity
  options.lower_is_better = true;
  models::EpochTrainer trainer(model->module(),
                               models::language_model_family(*model, task.train, task.valid, task.vocab, s.batch_size),
                               options);
  const std::unique_ptr<RunLock> lock = begin_epoch_run(trainer, start, out, vocab_json_text(task.vocab, data::Vocab()));

  const std::string name = config.at("model").at("model");
  const char* unit = task.unit == data::TextUnit::Words ? "words" : "characters";
  // Ctrl-C from here on is read after each step and after each validation: the run commits a checkpoint.
  std::optional<SigintCatcher> catcher(std::in_place);
  const std::size_t min_freq = task.config.at("min_freq").get<std::size_t>();
  std::printf("training %s (%s parameters, %s) on %s: %s lines for training (%s %s and line ends), %s to choose the "
              "epoch (%s), %s held out (%s); %s chunks of %s; a vocabulary of %s (%s seen %s in training), seed "
              "%llu%s\n",
              name.c_str(), with_commas(model->module().num_parameters()).c_str(), s.dtype.c_str(),
              visible_text(task.config.at("file").get<std::string>()).c_str(), with_commas(task.split.train_lines).c_str(),
              with_commas(task.split.train.size()).c_str(), unit, with_commas(task.split.valid_lines).c_str(),
              with_commas(task.split.valid.size()).c_str(), with_commas(task.split.test_lines).c_str(),
              with_commas(task.split.test.size()).c_str(), with_commas(task.train.size()).c_str(),
              task.config.at("length").dump().c_str(), with_commas(task.vocab.size()).c_str(), unit,
              min_freq == 1 ? "once or more" : (std::to_string(min_freq) + " times or more").c_str(),
              static_cast<unsigned long long>(s.seed), start.resumed ? resumed_text(trainer).c_str() : "");
  std::fflush(stdout);
  const std::size_t first_epoch = trainer.epochs_done();
  const auto write_plot = [&] {
    std::vector<double> valid_nats;  // validation perplexity as nats per token, on the loss's scale
    for (double p : trainer.epoch_validation()) valid_nats.push_back(std::log(p));
    write_epoch_plot(out + "/loss.svg", trainer, "training loss and validation cross-entropy per epoch",
                     std::string("nats per ") + (task.unit == data::TextUnit::Words ? "word" : "character"),
                     {{"training loss", trainer.epoch_losses()}, {"validation", valid_nats}});
  };
  EpochRunView view;
  keep_best_view(view, trainer, "eval, generate and score", [](double perplexity) {
    char text[32];
    std::snprintf(text, sizeof text, "perplexity %.2f", perplexity);
    return std::string(text);
  });
  view.write_plots = write_plot;
  const double seconds = run_epochs(trainer, out, run_config, task.vocab, data::Vocab(), task.train.size(), s.batch_size,
                                    catcher, view);
  trainer.restore_best();
  std::printf("training time: %zu %s in %.1f s (with the validation after each); kept epoch %zu (validation "
              "perplexity %.2f)\n", s.epochs - first_epoch, s.epochs - first_epoch == 1 ? "epoch" : "epochs", seconds,
              trainer.best_epoch(), trainer.best_score());
  const models::LanguageModelScore test = models::evaluate_language_model(*model, task.test, task.vocab, s.batch_size);
  write_plot();
  std::printf("held-out lines: %s  (checkpoint: %s; plot: %s/loss.svg)\n",
              score_text(test, unknown_share(task.test, task.vocab), task.unit).c_str(), out.c_str(), out.c_str());
}

void eval_language_model(Run& run, const std::string& predictions_file, bool overwrite, const std::string& dir) {
  TextTask task;
  try {
    task = make_text_task(run.config.at("task"), run.config_file + ": task");
  } catch (const std::exception& e) {
    throw IOError(run.config_file + ": its task cannot be rebuilt: " + e.what());
  }
  if (task.vocab.to_json() != run.src_vocab.to_json()) {
    std::string vocab_file = run.config_file;  // ".../checkpoint/config.json" -> ".../checkpoint/vocab.json"
    vocab_file.replace(vocab_file.size() - std::string("config.json").size(), std::string::npos, "vocab.json");
    throw IOError(vocab_file + ": differs from the vocabulary of the task's text as it is now");
  }
  const models::LanguageModelScore test = models::evaluate_language_model(*run.language_model, task.test, run.src_vocab);
  std::printf("held-out lines: %s\n", score_text(test, unknown_share(task.test, run.src_vocab), task.unit).c_str());
  if (predictions_file.empty()) return;
  // One line per held-out token: its position, the token as the model read it (a word it lacks is <unk>, the
  // token log_prob scores), log p, and the token the model found most likely there.
  std::string text;
  std::size_t position = 0;
  visit_targets(*run.language_model, task.test, run.src_vocab,
                [&](std::size_t, std::size_t, const xt::xarray<double>& logp, std::size_t target) {
                  std::size_t best = 0;
                  for (std::size_t v = 1; v < logp.size(); ++v)
                    if (logp(v) > logp(best)) best = v;
                  char lp[32];
                  std::snprintf(lp, sizeof lp, "%.4f", logp(target));
                  text += std::to_string(++position) + "\t" + visible_text(run.src_vocab.token(std::int64_t(target))) +
                          "\t" + lp + "\t" + visible_text(run.src_vocab.token(std::int64_t(best))) + "\n";
                });
  write_output(Output{"--predictions", predictions_file, overwrite}, text,
               {{task.config.at("file").get<std::string>(), "the run's text"}}, {dir});
  std::printf("wrote %s\n", predictions_file.c_str());
}

void add_generate_command(CLI::App& app) {
  struct Options {
    std::string dir, prompt;
    std::uint64_t tokens = 100, top_k = 0, seed = 1, context = 0;
    double temperature = 1.0;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("generate", "Write text with a language model's checkpoint (pointer-sentinel, transformer-lm)");
  cmd->add_option("--checkpoint", o->dir, "a run of --model pointer-sentinel or transformer-lm")->required();
  cmd->add_option("--prompt", o->prompt, "the text it continues (it begins a line; default: none, a new line)");
  add_count(cmd, "--tokens", o->tokens, 1, kMaxGenerated, "tokens to write (words or characters, as the model reads)");
  add_real(cmd, "--temperature", o->temperature, Bounds::non_negative(),
           "divides the log-probabilities before drawing: below 1 surer, above 1 more varied, 0 the most likely token");
  add_count(cmd, "--top-k", o->top_k, 0, 10000000, "draw from the k most likely tokens only (0: all)");
  add_count(cmd, "--context", o->context, 0, 1000000,
            "read at most the last N tokens (default 0: the run's chunk length, what the model trained on)");
  add_count(cmd, "--seed", o->seed, 0, kMaxSeed, "seeds the draws (the same seed, the same text)");
  cmd->callback([o, cmd] {
    if (o->prompt.size() > kMaxPromptBytes)
      throw ValueError("--prompt: " + std::to_string(o->prompt.size()) + " bytes, more than the " +
                       std::to_string(kMaxPromptBytes) + " a prompt may be");
    if (!valid_utf8(o->prompt)) throw ValueError("--prompt: not valid UTF-8 text");
    std::string prompt = o->prompt;
    for (char& c : prompt)
      if (c == '\t') c = ' ';
    const std::string bad = control_character(prompt);
    if (!bad.empty()) throw ValueError("--prompt: holds " + bad + "; a prompt is one line of printable text");
    if (o->top_k > 0 && o->temperature == 0)
      throw ValueError("--top-k: --temperature 0 writes the most likely token; --top-k applies to drawing (a temperature above 0)");
    Run run = load_language_model_run(o->dir, "generate");
    const data::TextUnit unit = unit_of(run);
    const std::vector<std::int64_t> prompt_ids = encode_text(run, data::line_tokens(o->prompt, unit), "--prompt");
    models::GenerateOptions options;
    options.max_tokens = o->tokens;
    options.temperature = o->temperature;
    options.top_k = o->top_k;
    options.context = o->context ? o->context : chunk_length(run);
    if (run.language_model->max_length() && options.context > run.language_model->max_length())
      std::cerr << "note: --context " << options.context << ": the model reads at most " << run.language_model->max_length()
                << " tokens (its max_len), so it reads the last " << run.language_model->max_length() << "\n";
    Generator gen(o->seed);
    const models::Generated g = models::generate(*run.language_model, prompt_ids, options, gen);
    data::Tokens written;
    for (std::int64_t id : g.ids) written.push_back(run.src_vocab.token(id));
    // The prompt as given, then what the model wrote, shown safely (the vocabulary's words are the user's text).
    std::string text = o->prompt;
    const std::string continuation = data::tokens_text(written, unit);
    if (unit == data::TextUnit::Words && !text.empty() && !continuation.empty() && continuation.front() != '\n') text += " ";
    text += continuation;
    std::cout << visible_text_lines(text) << (text.empty() || text.back() != '\n' ? "\n" : "") << std::flush;
    double total = 0;
    for (double lp : g.log_probs) total += lp;
    std::fprintf(stderr, "%zu tokens written, mean log p %.3f (temperature %g%s, seed %llu)\n", g.ids.size(),
                 g.ids.empty() ? 0.0 : total / double(g.ids.size()), o->temperature,
                 o->top_k ? (", top-k " + std::to_string(o->top_k)).c_str() : "",
                 static_cast<unsigned long long>(o->seed));
  });
}

void add_score_command(CLI::App& app) {
  struct Options {
    std::string dir;
    std::vector<std::string> files;
    bool per_line = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("score", "The perplexity a language model's checkpoint gives text files");
  cmd->add_option("--checkpoint", o->dir, "a run of --model pointer-sentinel or transformer-lm")->required();
  cmd->add_flag("--per-line", o->per_line, "also print each line's tokens and nats per token");
  cmd->add_option("files", o->files, "UTF-8 text files, read as the run reads its text (a line, a sentence)")->required();
  cmd->callback([o] {
    Run run = load_language_model_run(o->dir, "score");
    const data::TextUnit unit = unit_of(run);
    const std::size_t length = chunk_length(run);
    for (const std::string& file : o->files) {
      const std::vector<std::string> lines = read_text(file, unit).lines;
      // The file as the run reads its text (data::text_stream): one stream of each line with a sentence and its
      // <eos>, cut into chunks of the run's length. Each line's tokens are counted as it is cut, for --per-line.
      data::Tokens stream;
      std::vector<std::size_t> line_sizes(lines.size(), 0);  // 0: no sentence, no tokens
      for (std::size_t i = 0; i < lines.size(); ++i) {
        if (!data::has_sentence(lines[i])) continue;
        const data::Tokens tokens = data::line_tokens(lines[i], unit);
        line_sizes[i] = tokens.size() + 1;
        stream.insert(stream.end(), tokens.begin(), tokens.end());
        stream.push_back(data::Vocab::eos_token);
      }
      if (stream.size() < 2) throw IOError(file + ": holds no text to score (fewer than 2 tokens)");
      const std::vector<data::Tokens> chunks = data::lm_chunks({stream}, length);
      const ChunksScore scored = score_chunks(*run.language_model, chunks, run.src_vocab, o->per_line);
      note_unknown(file, scored.unknown_tokens, stream.size());
      const double unknown = double(scored.unknown_targets) / double(stream.size() - 1);
      if (!o->per_line) {
        std::printf("%s: %s\n", visible_text(file).c_str(), score_text(scored.score, unknown, unit).c_str());
        continue;
      }
      // Each target's -log p summed per line: a line's tokens and its <eos>.
      const std::vector<double>& nll = scored.nll;
      std::size_t k = 0, number = 0;
      models::LanguageModelScore all;
      std::printf("%s\nline\ttokens\tnats_per_token\ttext\n", visible_text(file).c_str());
      for (const std::string& line : lines) {
        ++number;
        if (!line_sizes[number - 1]) continue;  // as text_stream reads the file: no sentence, no tokens
        const std::size_t n = line_sizes[number - 1] - 1;
        models::LanguageModelScore s;
        for (std::size_t i = 0; i < n + 1; ++i) {  // the line's tokens and its <eos>
          if (k + i == 0) continue;                // the very first token is not predicted
          s.nll += nll.at(k + i - 1);
          ++s.tokens;
        }
        k += n + 1;
        all.nll += s.nll;
        all.tokens += s.tokens;
        std::printf("%zu\t%zu\t%.3f\t%s\n", number, s.tokens, s.cross_entropy(), visible_text(line).c_str());
      }
      std::printf("%s: %s\n", visible_text(file).c_str(), score_text(all, unknown, unit).c_str());
    }
  });
}

}  // namespace attn::cli
