#include "task.hpp"

#include "grid.hpp"

#include <filesystem>

namespace attn::cli {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool char_level(const nlohmann::json& config) {
  const std::string name = config.at("name");
  return name == "dates" || (name == "tsv" && config.value("char_level", false));
}
}  // namespace

nlohmann::json default_task_config(const std::string& task) {
  if (task == "copy" || task == "reverse" || task == "sort")
    return {{"name", task}, {"vocab_size", 10}, {"min_length", 5}, {"max_length", 15}, {"n_train", 20000}, {"n_test", 500}};
  if (task == "dates") return {{"name", "dates"}, {"n_train", 20000}, {"n_test", 1000}};
  if (ends_with(task, ".tsv") || ends_with(task, ".txt"))  // absolute: eval may run from another folder
    return {{"name", "tsv"},    {"file", std::filesystem::absolute(task).lexically_normal().string()},
            {"char_level", false}, {"lowercase", true}, {"max_length", 12}, {"test_fraction", 0.05},
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
    data::Corpus corpus;
    try {
      corpus = data::load_tsv(config.at("file"), options);
    } catch (const IOError& e) {  // name the command line's flag, not the library's option
      std::string message = e.what();
      const auto hint = message.find("skip_malformed skips");
      if (hint != std::string::npos) message.replace(hint, 14, "attn train --skip-malformed");
      throw IOError(message);
    }
    if (corpus.malformed)
      t.warning = std::to_string(corpus.malformed) + " malformed lines skipped (the first: line " +
                  std::to_string(corpus.malformed_lines.front()) + ")";
    if (corpus.pairs.size() < 2)
      throw IOError(std::string(config.at("file")) + ": fewer than 2 usable sentence pairs (" +
                    std::to_string(corpus.malformed) + " malformed lines skipped)");
    // A seeded shuffle, then the last test_fraction of the pairs is the test set.
    std::vector<std::size_t> order(corpus.pairs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (std::size_t i = order.size(); i-- > 1;) std::swap(order[i], order[gen.randint(0, i + 1)]);
    const double fraction = config.value("test_fraction", 0.05);
    const std::size_t n_test = std::max<std::size_t>(1, static_cast<std::size_t>(fraction * order.size()));
    for (std::size_t i = 0; i < order.size(); ++i)
      (i + n_test < order.size() ? t.split.train : t.split.test).push_back(corpus.pairs[order[i]]);
    t.src_vocab = data::Vocab::build(data::sources(t.split.train));
    t.tgt_vocab = data::Vocab::build(data::targets(t.split.train));
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
  return char_level(task_config) ? data::split_chars(s) : data::split_whitespace(s);
}

std::string detokenize(const nlohmann::json& task_config, const data::Tokens& tokens) {
  return data::join(tokens, char_level(task_config) ? "" : " ");
}

}  // namespace attn::cli
