// Chapter 18's document classifiers on the command line (see documents.hpp).
#include "documents.hpp"

#include "commands.hpp"
#include "output.hpp"
#include "parse.hpp"
#include "progress.hpp"
#include "run_config.hpp"

#include "../models/document_baselines.hpp"
#include "../train/document_training.hpp"
#include "../models/han.hpp"
#include "../models/registry.hpp"

#include <xtensor/xview.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <optional>
#include <sstream>

namespace attn::cli {

using nlohmann::json;

namespace {

constexpr std::uint64_t kMaxModelSize = 65536;  // embed_dim, hidden_dim, attention_dim
constexpr std::uint64_t kMaxCut = 100000;       // max_sentences, max_words

data::DocumentOptions cut_options(const Fields& f) {
  data::DocumentOptions o;
  o.max_sentences = f.count_or("max_sentences", 20, 0, kMaxCut);
  o.max_words = f.count_or("max_words", 40, 0, kMaxCut);
  o.lowercase = f.boolean_or("lowercase", true);
  return o;
}

void print_evaluation(const models::ConfusionMatrix& m, const std::vector<std::string>& classes) {
  std::printf("%zu test documents: accuracy %.1f%%, macro-F1 %.3f\n", m.total(), 100 * m.accuracy(), m.macro_f1());
  std::printf("class      documents  precision  recall     F1\n");
  for (std::size_t c = 0; c < classes.size(); ++c)
    std::printf("%-10s %9zu  %9.3f  %6.3f  %5.3f\n", classes[c].c_str(), m.support(c), m.precision(c), m.recall(c),
                m.f1(c));
  std::printf("confusion (rows: true class, columns: predicted)\n%10s", "");
  for (const auto& c : classes) std::printf(" %6s", c.c_str());
  std::printf("\n");
  for (std::size_t g = 0; g < classes.size(); ++g) {
    std::printf("%10s", classes[g].c_str());
    for (std::size_t p = 0; p < classes.size(); ++p) std::printf(" %6zu", m.counts(g, p));
    std::printf("\n");
  }
}

}  // namespace

std::vector<std::string> document_classes(const json& task, const std::string& where) {
  const json& a = Fields(task, where).array("classes");
  std::vector<std::string> out;
  for (const json& c : a) {
    if (!c.is_string()) throw ValueError(where + ": \"classes\" must hold strings, got " + c.dump());
    out.push_back(c.get<std::string>());
  }
  if (out.size() < 2) throw ValueError(where + ": \"classes\" must name at least 2 classes, got " + a.dump());
  return out;
}

const std::vector<std::string>& document_model_names() {
  static const std::vector<std::string> names = [] {  // the registry's documents family
    std::vector<std::string> n;
    for (const models::TrainableModel& m : models::trainable_models())
      if (m.family == models::ModelFamily::Documents) n.push_back(m.name);
    return n;
  }();
  return names;
}

bool is_document_model(const std::string& name) {
  const auto& n = document_model_names();
  return std::find(n.begin(), n.end(), name) != n.end();
}

bool is_document_task_file(const std::string& task) { return models::task_kind(task) == "FILE.jsonl"; }

json default_document_model_config(const std::string& name) {
  if (!is_document_model(name)) throw ValueError("unknown document model '" + name + "' (han, flat-attention, bag-of-words)");
  if (name == "bag-of-words") return {{"model", name}, {"embed_dim", models::BagOfWordsConfig{}.embed_dim}};
  const models::HANConfig c;
  return {{"model", name}, {"embed_dim", c.embed_dim}, {"hidden_dim", c.hidden_dim}, {"attention_dim", c.attention_dim}};
}

json default_document_task_config(const std::string& file) {
  const std::string path = std::filesystem::absolute(file).lexically_normal().string();
  if (!valid_utf8(path))
    throw ValueError("--task: the file name '" + file + "' is not valid UTF-8, and config.json can only store UTF-8 "
                     "text; rename the file");
  return {{"name", "documents"},   {"file", path},           {"max_sentences", 20},   {"max_words", 40},
          {"lowercase", true},     {"test_fraction", 0.2},   {"valid_fraction", 0.125}, {"min_freq", 2}};
}

std::unique_ptr<models::DocumentClassifier> make_document_model(const json& model, std::size_t vocab,
                                                                std::size_t classes, const std::string& where) {
  const std::string name = Fields(model, where).text("model");
  const json defaults = default_document_model_config(name);
  const Fields f(model, where + " (model '" + name + "')");
  std::vector<std::string> known;
  for (const auto& item : defaults.items()) known.push_back(item.key());
  f.only(known);
  const std::size_t embed = f.count_or("embed_dim", defaults.at("embed_dim").get<std::uint64_t>(), 1, kMaxModelSize);
  if (name == "bag-of-words") {
    models::BagOfWordsConfig c;
    c.vocab = vocab;
    c.classes = classes;
    c.embed_dim = embed;
    return std::make_unique<models::BagOfWordsClassifier>(c);
  }
  const std::size_t hidden = f.count_or("hidden_dim", defaults.at("hidden_dim").get<std::uint64_t>(), 1, kMaxModelSize);
  const std::size_t attention = f.count_or("attention_dim", defaults.at("attention_dim").get<std::uint64_t>(), 1, kMaxModelSize);
  // The two recurrent models have the same five sizes.
  auto sized = [&](auto c) {
    c.vocab = vocab;
    c.classes = classes;
    c.embed_dim = embed;
    c.hidden_dim = hidden;
    c.attention_dim = attention;
    return c;
  };
  if (name == "han") return std::make_unique<models::HierarchicalAttentionNetwork>(sized(models::HANConfig{}));
  return std::make_unique<models::FlatAttentionClassifier>(sized(models::FlatAttentionConfig{}));
}

namespace {

// The line of `file` whose document has this "section" (0 if none is found): messages name it.
std::size_t section_line(const std::string& file, const std::string& section) {
  std::ifstream in(file, std::ios::binary);
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const json d = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (d.is_object() && d.contains("section") && d.at("section").is_string() && d.at("section") == section)
      return number;
  }
  return 0;
}

std::string shown(const std::string& text) {  // a name as a message shows it: escaped, and at most 40 bytes
  const std::string escaped = json(text).dump(-1, ' ', false, json::error_handler_t::replace);
  return escaped.size() > 42 ? escaped.substr(0, 40) + "...\"" : escaped;
}

constexpr std::size_t kMaxClassName = 256;  // bytes: a section is "1" or "3perl", not a page of text

}  // namespace

DocumentTask make_document_task(const json& config, std::uint64_t seed, const std::string& where) {
  DocumentTask t;
  t.config = config;
  const Fields f(config, where);
  f.only({"name", "file", "max_sentences", "max_words", "lowercase", "test_fraction", "valid_fraction", "min_freq",
          "checksum", "classes"});
  const std::string file = f.text("file");
  const data::DocumentOptions options = cut_options(f);
  const double test_fraction = f.real_or("test_fraction", 0.2, {0.0, 1.0, true, true});
  const double valid_fraction = f.real_or("valid_fraction", 0.125, {0.0, 1.0, true, true});
  const std::size_t min_freq = f.count_or("min_freq", 2, 1, kMaxExamples);
  // eval rebuilds the held-out split: it must come from this very file.
  const std::string checksum = file_fnv1a64(file, file);
  if (config.contains("checksum") && config.at("checksum") != checksum)
    throw IOError(file + " has changed since the model was trained (checksum " + checksum + ", recorded " +
                  (config.at("checksum").is_string() ? config.at("checksum").get<std::string>() : config.at("checksum").dump()) +
                  "): its held-out documents would not be those of the run");
  t.config["checksum"] = checksum;
  // A large corpus takes a while to read: a line says how far it is after 2 s (a small one says nothing).
  data::DocumentCorpus corpus;
  {
    CountedFile counted(file);
    if (!counted.is_open() || std::filesystem::is_directory(file)) {
      corpus = data::load_documents(file, options);  // refuses it, saying why
    } else {
      Phase phase("reading " + visible_text(file), 0, [&counted] { return counted.fraction(); });
      std::istream in(&counted);
      corpus = data::read_documents(in, file, options);
      phase.done();
    }
  }
  if (corpus.skipped) t.warning = std::to_string(corpus.skipped) + " documents of " + file + " hold no sentence: left out";
  if (corpus.documents.empty())
    throw IOError(file + ": none of its documents holds a sentence (" + std::to_string(corpus.skipped) +
                  " documents with empty paragraphs only); each needs a \"paragraphs\" array with some text");
  // A class name goes into config.json and is printed by eval and classify: text of a line, and short.
  for (const std::string& name : corpus.classes) {
    const std::string bad = control_character(name);
    const std::size_t line = bad.empty() && name.size() <= kMaxClassName ? 0 : section_line(file, name);
    const std::string at = file + (line ? ":" + std::to_string(line) : std::string()) + ": the \"section\" ";
    if (!bad.empty())
      throw IOError(at + shown(name) + " holds " + bad + "; a section is a class name (\"1\", \"3\"), printable "
                    "text only: correct the file");
    if (name.size() > kMaxClassName)
      throw IOError(at + shown(name) + " is " + std::to_string(name.size()) + " bytes long; a section is a class "
                    "name (\"1\", \"3\") of at most " + std::to_string(kMaxClassName) + " bytes: correct the file");
  }
  if (corpus.classes.size() < 2)
    throw IOError(file + ": the documents must have at least 2 classes (\"section\" values) to classify, found " +
                  std::to_string(corpus.classes.size()));
  if (config.contains("classes") && document_classes(config, where) != corpus.classes)
    throw IOError(file + ": its classes differ from those recorded in " + where);
  t.classes = corpus.classes;
  t.config["classes"] = corpus.classes;
  Generator gen(seed);  // the same split for every model of a seed, as chapter 18 draws it
  data::DocumentSplit split = data::stratified_split(corpus.documents, test_fraction, gen);
  data::DocumentSplit tuning = data::stratified_split(split.train, valid_fraction, gen);
  t.train = std::move(tuning.train);
  t.valid = std::move(tuning.test);
  t.test = std::move(split.test);
  if (t.valid.empty() || t.test.empty())
    throw IOError(file + ": too few documents for a " + (t.test.empty() ? "test" : "validation") +
                  " split: every class needs 3 or more (the classes have " + [&] {
                    std::vector<std::size_t> n(corpus.classes.size(), 0);
                    for (const data::Document& d : corpus.documents) ++n[std::size_t(d.label)];
                    std::string s;
                    for (std::size_t c = 0; c < n.size(); ++c) s += (c ? ", " : "") + std::to_string(n[c]);
                    return s;
                  }() + ")");
  {  // a class with fewer than 3 documents gets none in the test or validation split: it would never be measured
    std::vector<std::size_t> n(corpus.classes.size(), 0);
    for (const data::Document& d : corpus.documents) ++n[std::size_t(d.label)];
    for (std::size_t c = 0; c < n.size(); ++c)
      if (n[c] < 3)
        throw IOError(file + ": the class (\"section\") " + shown(corpus.classes[c]) + " has " + std::to_string(n[c]) +
                      (n[c] == 1 ? " document" : " documents") + "; every class needs 3 or more, one each for the "
                      "test and validation splits (remove its documents, or add more)");
  }
  t.vocab = data::Vocab::build(data::document_sentences(t.train), min_freq);
  for (std::size_t id = 0; id < t.vocab.size(); ++id) {
    const std::string& word = t.vocab.token(static_cast<std::int64_t>(id));
    if (!valid_utf8(word))
      throw IOError(file + ": holds a word that is not valid UTF-8, which vocab.json cannot store");
    const std::string bad = control_character(word);
    if (!bad.empty()) {
      std::string document;  // which page holds it, for the user to find
      for (const data::Document& d : t.train)
        for (const data::Tokens& sentence : d.sentences)
          if (document.empty() && std::find(sentence.begin(), sentence.end(), word) != sentence.end()) document = d.name;
      throw IOError(file + ": the document " + shown(document) + " holds a word with " + bad + " (" + shown(word) +
                    "); a page is text: remove the control characters from the file");
    }
  }
  if (t.vocab.size() <= std::size_t(data::Vocab::unk_id) + 1)
    t.warning += (t.warning.empty() ? "" : "; ") + std::string("no word occurs ") + std::to_string(min_freq) +
                 " times in the training documents (--min-freq " + std::to_string(min_freq) +
                 "): every word reads as <unk>, and the model can learn only how common each class is";
  return t;
}

void train_documents_run(json config, const std::string& out, const RunStart& start) {
  std::string where;
  config = epoch_run_config(config, start, "epochs", where);
  const TrainSettings s = read_train_settings(config, where);
  const bool float32 = s.dtype == "float32";
  const std::string model_where = start.resumed ? where + ": model" : "the model's settings (--model, --set)";
  (void)make_document_model(config.at("model"), 8, 2, model_where);  // fail fast
  DocumentTask task = make_document_task(config.at("task"), s.seed,
                                         start.resumed ? where + ": task" : "the task's settings (--task)");
  if (!task.warning.empty()) std::cout << "warning: " << task.warning << std::endl;
  json run_config = config;
  run_config["task"] = task.config;
  manual_seed(s.seed);
  std::unique_ptr<models::DocumentClassifier> model;
  try {
    model = make_document_model(config.at("model"), task.vocab.size(), task.classes.size(), model_where);
  } catch (const std::bad_alloc&) {
    throw ValueError("--set: the model's sizes need more memory than this machine has");
  }
  if (float32) model->to(Dtype::Float32);
  models::EpochTrainerOptions options = epoch_trainer_options(s);
  options.keep_best = true;  // the epoch with the best validation accuracy, as the chapter keeps
  models::EpochTrainer trainer(
      *model, models::document_family(*model, task.train, task.valid, task.vocab, task.classes.size(), s.batch_size),
      options);
  const std::unique_ptr<RunLock> lock = begin_epoch_run(trainer, start, out, vocab_json_text(task.vocab, data::Vocab()));

  const std::string name = config.at("model").at("model");
  // Ctrl-C from here on is read after each step and after each validation (and the line below says training
  // has begun): the run commits a checkpoint it resumes from.
  std::optional<SigintCatcher> catcher(std::in_place);
  std::printf("training %s (%zu parameters, %s) on %s: %zu train / %zu validation / %zu test documents, %zu classes, "
              "%zu words, seed %llu%s\n",
              name.c_str(), model->num_parameters(), float32 ? "float32" : "float64",
              task.config.at("file").get<std::string>().c_str(), task.train.size(), task.valid.size(),
              task.test.size(), task.classes.size(), task.vocab.size(), static_cast<unsigned long long>(s.seed),
              start.resumed ? resumed_text(trainer).c_str() : "");
  std::fflush(stdout);
  const std::size_t first_epoch = trainer.epochs_done();
  const auto write_plots = [&] {
    write_epoch_plot(out + "/loss.svg", trainer, "training loss per epoch", "cross-entropy",
                     {{"train", trainer.epoch_losses()}});
    write_epoch_plot(out + "/validation.svg", trainer, "validation accuracy per epoch", "accuracy",
                     {{"validation", trainer.epoch_validation()}});
  };
  EpochRunView view;
  keep_best_view(view, trainer, "eval, classify and heatmap", [](double accuracy) {
    char text[32];
    std::snprintf(text, sizeof text, "accuracy %.1f%%", 100 * accuracy);
    return std::string(text);
  });
  view.step_accuracy = true;
  view.write_plots = write_plots;
  const double seconds = run_epochs(trainer, out, run_config, task.vocab, data::Vocab(), task.train.size(), s.batch_size,
                                    catcher, view);
  trainer.restore_best();
  std::printf("training time: %zu epochs in %.1f s (with the validation after each); kept epoch %zu (validation "
              "accuracy %.1f%%)\n", s.epochs - first_epoch, seconds, trainer.best_epoch(), 100 * trainer.best_score());
  const models::ConfusionMatrix m = models::classify_documents(*model, task.test, task.vocab, task.classes.size());
  print_evaluation(m, task.classes);

  write_plots();
  std::printf("test accuracy %.1f%%, macro-F1 %.3f  (checkpoint: %s; plots: %s/loss.svg %s/validation.svg)\n",
              100 * m.accuracy(), m.macro_f1(), out.c_str(), out.c_str(), out.c_str());
}

void eval_documents(Run& run, const std::string& predictions_file, bool overwrite, const std::string& dir) {
  const std::string where = run.config_file + ": task";
  DocumentTask task;
  try {
    task = make_document_task(run.config.at("task"), run.config.at("seed").get<std::uint64_t>(), where);
  } catch (const std::exception& e) {
    throw IOError(run.config_file + ": its task cannot be rebuilt: " + e.what());
  }
  if (task.vocab.to_json() != run.src_vocab.to_json()) {
    std::string vocab_file = run.config_file;  // ".../checkpoint/config.json" -> ".../checkpoint/vocab.json"
    vocab_file.replace(vocab_file.size() - std::string("config.json").size(), std::string::npos, "vocab.json");
    throw IOError(vocab_file + ": differs from the vocabulary of the task's documents as they are now");
  }
  std::vector<std::int64_t> predicted;
  const models::ConfusionMatrix m =
      models::classify_documents(*run.classifier, task.test, run.src_vocab, task.classes.size(), &predicted);
  print_evaluation(m, task.classes);
  if (!predictions_file.empty()) {
    std::string text;
    for (std::size_t i = 0; i < task.test.size(); ++i)
      text += task.test[i].name + "\t" + task.classes[std::size_t(task.test[i].label)] + "\t" +
              task.classes[std::size_t(predicted[i])] + "\n";
    write_output(Output{"--predictions", predictions_file, overwrite}, text,
                 {{task.config.at("file").get<std::string>(), "the run's corpus"}}, {dir});
    std::printf("wrote %s\n", predictions_file.c_str());
  }
}

PageReading read_page(Run& run, const std::string& file) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) throw IOError("cannot read the page '" + file + "': not a file");
  constexpr std::uintmax_t kMaxPageBytes = 8u << 20;  // a manual page is a few kB; a book is not a page
  if (std::filesystem::file_size(file, error) > kMaxPageBytes)
    throw IOError(file + ": larger than the 8 MB a page may be");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw IOError("cannot read the page '" + file + "'");
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw IOError(file + ": read error");
  if (!valid_utf8(text.str())) throw IOError(file + ": not UTF-8 text");
  // Paragraphs are separated by blank lines; each is one line of text, as the corpus holds them.
  std::vector<std::string> paragraphs;
  std::string paragraph, line;
  std::istringstream lines(text.str());
  auto flush = [&] {
    if (!paragraph.empty()) paragraphs.push_back(paragraph);
    paragraph.clear();
  };
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) flush();
    else paragraph += (paragraph.empty() ? "" : " ") + line;  // as the corpus joins a paragraph's lines
  }
  flush();
  // Read as the task reads its corpus, one JSON line, so the page is cut and tokenized the same way.
  const Fields f(run.config.at("task"), run.config_file + ": task");
  const json line_of_page = {{"package", ""}, {"page", file}, {"section", "?"}, {"paragraphs", paragraphs}};
  std::istringstream one(line_of_page.dump() + "\n");
  const data::DocumentCorpus c = data::read_documents(one, file, cut_options(f));
  if (c.documents.empty()) throw IOError(file + ": holds no sentence to classify");
  PageReading r;
  r.page = c.documents.front();
  r.page.label = 0;
  std::size_t unknown = 0, words = 0;
  for (const data::Tokens& s : r.page.sentences)
    for (const std::string& w : s) {
      ++words;
      unknown += !run.src_vocab.contains(w);
    }
  if (unknown == words) std::cerr << "note: " << file << ": none of its words is in the model's vocabulary\n";
  no_grad guard;
  run.classifier->eval();
  const data::DocumentBatch batch = data::make_document_batch({r.page}, {0}, run.src_vocab);
  const xt::xarray<double> p = softmax(run.classifier->forward(batch), 1).to_array();  // [1, C]
  r.probabilities.assign(p.begin(), p.end());
  r.predicted = std::size_t(std::max_element(r.probabilities.begin(), r.probabilities.end()) - r.probabilities.begin());
  const auto& a = run.classifier->last_attention();
  if (a.count("sentences")) {
    r.sentence_weights = xt::view(a.at("sentences").to_array(), 0, xt::all());       // [S]
    r.word_weights = xt::view(a.at("words").to_array(), 0, xt::all(), xt::all());    // [S, W]
  } else if (a.count("words")) {
    r.word_weights = xt::view(a.at("words").to_array(), 0, xt::all());               // [T]
  }
  return r;
}

}  // namespace attn::cli
