#include "task.hpp"

#include "grid.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace attn::cli {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool char_level(const nlohmann::json& config) {
  const std::string name = config.at("name");
  return name == "dates" || (name == "tsv" && config.value("char_level", false));
}

// FNV-1a over a file's bytes, in hex: eval rebuilds the held-out split from the
// file, so it must be the file the model was trained on.
std::string file_checksum(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError("load_tsv: cannot open '" + path + "'");
  std::uint64_t h = 14695981039346656037ull;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0)
    for (std::streamsize i = 0; i < in.gcount(); ++i) h = (h ^ static_cast<unsigned char>(buffer[i])) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

// Records the file's checksum under `key`, or checks it against the one recorded.
void check_unchanged(nlohmann::json& config, const std::string& key, const std::string& path) {
  const std::string now = file_checksum(path);
  if (config.contains(key) && config.at(key) != now)
    throw IOError(path + " has changed since the model was trained (checksum " + now + ", recorded " +
                  config.at(key).get<std::string>() + "): its held-out pairs would not be those of the run");
  config[key] = now;
}

data::Corpus load_corpus(const std::string& path, const data::CorpusOptions& options) {
  try {
    return data::load_tsv(path, options);
  } catch (const IOError& e) {  // name the command line's flag, not the library's option
    std::string message = e.what();
    const auto hint = message.find("skip_malformed skips");
    if (hint != std::string::npos) message.replace(hint, 14, "attn train --skip-malformed");
    throw IOError(message);
  }
}
}  // namespace

nlohmann::json default_task_config(const std::string& task) {
  if (task == "copy" || task == "reverse" || task == "sort")
    return {{"name", task}, {"vocab_size", 10}, {"min_length", 5}, {"max_length", 15}, {"n_train", 20000}, {"n_test", 500}};
  if (task == "dates") return {{"name", "dates"}, {"n_train", 20000}, {"n_test", 1000}};
  if (ends_with(task, ".tsv") || ends_with(task, ".txt"))  // absolute: eval may run from another folder
    return {{"name", "tsv"},         {"file", std::filesystem::absolute(task).lexically_normal().string()},
            {"char_level", false},      {"lowercase", true}, {"split_punctuation", true}, {"max_length", 12},
            {"test_fraction", 0.05},    {"test_file", ""},   {"min_freq", 1}, {"max_vocab", 0},
            {"skip_malformed", false}};
  if (task == "grid") return default_grid_task_config();
  throw ValueError("unknown task '" + task + "' (tasks: copy, reverse, sort, dates, grid, or a FILE.tsv)");
}

TaskData make_task(const nlohmann::json& config, std::uint64_t seed) {
  TaskData t;
  t.config = config;
  Generator gen(seed);
  const std::string name = config.at("name");
  if (name == "dates") {
    t.split = data::date_split(config.at("n_train"), config.at("n_test"), data::DateTaskOptions{}, gen);
    t.src_vocab = data::date_source_vocab();
    t.tgt_vocab = data::date_target_vocab();
  } else if (name == "tsv") {
    data::CorpusOptions options;
    options.char_level = config.value("char_level", false);
    options.lowercase = config.value("lowercase", true);
    options.max_length = config.value("max_length", 0);
    options.skip_malformed = config.value("skip_malformed", true);
    options.split_punctuation = config.value("split_punctuation", false);  // runs from before it existed: off
    const std::string file = config.at("file"), test_file = config.value("test_file", "");
    check_unchanged(t.config, "checksum", file);
    data::Corpus corpus = load_corpus(file, options);
    if (corpus.malformed)
      t.warning = std::to_string(corpus.malformed) + " malformed lines skipped (the first: line " +
                  std::to_string(corpus.malformed_lines.front()) + ")";
    if (corpus.pairs.size() < 2)
      throw IOError(file + ": fewer than 2 usable sentence pairs (" + std::to_string(corpus.malformed) +
                    " malformed lines skipped)");
    // A seeded shuffle, then the last test_fraction of the pairs is the test set
    // (none when a test file is given: it is the test set).
    std::vector<std::size_t> order(corpus.pairs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (std::size_t i = order.size(); i-- > 1;) std::swap(order[i], order[gen.randint(0, i + 1)]);
    const double fraction = config.value("test_fraction", 0.05);
    if (!(fraction > 0 && fraction < 1))
      throw ValueError("the held-out fraction must be above 0 and below 1, got " + std::to_string(fraction));
    const std::size_t n_test =
        test_file.empty() ? std::max<std::size_t>(1, static_cast<std::size_t>(fraction * order.size())) : 0;
    for (std::size_t i = 0; i < order.size(); ++i)
      (i + n_test < order.size() ? t.split.train : t.split.test).push_back(corpus.pairs[order[i]]);
    if (!test_file.empty()) {
      check_unchanged(t.config, "test_checksum", test_file);
      t.split.test = load_corpus(test_file, options).pairs;
      if (t.split.test.empty()) throw IOError(test_file + ": no usable sentence pair for the test set");
    }
    t.src_vocab = data::Vocab::build(data::sources(t.split.train), config.value("min_freq", 1), config.value("max_vocab", 0));
    t.tgt_vocab = data::Vocab::build(data::targets(t.split.train), config.value("min_freq", 1), config.value("max_vocab", 0));
  } else if (name == "grid") {
    throw ValueError("task 'grid' goes with --model grid (the captioner of chapter 4), not with a sequence model");
  } else {
    data::SequenceTaskOptions options;
    options.vocab_size = config.at("vocab_size");
    options.min_length = config.at("min_length");
    options.max_length = config.at("max_length");
    t.split = data::sequence_split(data::sequence_task_from_name(name), config.at("n_train"), config.at("n_test"),
                                   options, gen);
    t.src_vocab = t.tgt_vocab = data::task_vocab(options.vocab_size);
  }
  return t;
}

data::Tokens tokenize(const nlohmann::json& task_config, const std::string& text) {
  std::string s = text;
  if (task_config.at("name") == "tsv" && task_config.value("lowercase", true)) s = data::to_lower(s);
  if (char_level(task_config)) return data::split_chars(s);
  return task_config.value("split_punctuation", false) ? data::split_words(s) : data::split_whitespace(s);
}

std::string detokenize(const nlohmann::json& task_config, const data::Tokens& tokens) {
  return data::join(tokens, char_level(task_config) ? "" : " ");
}

}  // namespace attn::cli
