#include "task.hpp"

#include "bpe.hpp"
#include "grid.hpp"
#include "multi_source.hpp"
#include "parse.hpp"
#include "../models/registry.hpp"
#include "run_dir.hpp"

#include <algorithm>
#include <filesystem>
#include <istream>
#include <streambuf>

namespace attn::cli {

namespace {
constexpr std::uint64_t kMaxTestExamples = 1000000;
constexpr std::uint64_t kMaxLength = 10000;   // tokens in a sequence
constexpr std::uint64_t kMaxSymbols = 100000;  // distinct symbols of copy/reverse/sort
bool char_level(const nlohmann::json& config) {
  const std::string name = config.at("name");
  return name == "dates" || (name == "tsv" && config.value("char_level", false));
}

// A view of bytes as a stream, for data::read_tsv: the bytes read once are parsed without a copy.
struct BytesBuffer : std::streambuf {
  explicit BytesBuffer(const std::string& bytes) {
    char* begin = const_cast<char*>(bytes.data());  // only read: a streambuf's get area is char*
    setg(begin, begin, begin + bytes.size());
  }
};

// Reads a corpus file once: its checksum is recorded under `key` (or checked against the one recorded), and the
// checks and the pairs then come from these bytes, so a run's checksum is always that of the pairs it read.
std::string read_unchanged(nlohmann::json& config, const std::string& key, const std::string& path) {
  ChecksummedFile file = read_checksummed(path);
  const std::string& now = file.checksum;  // eval rebuilds the held-out split: it must be this file
  if (config.contains(key) && config.at(key) != now)
    throw IOError(path + " has changed since the model was trained (checksum " + now + ", recorded " +
                  config.at(key).get<std::string>() + "): its held-out pairs would not be those of the run");
  config[key] = now;
  return std::move(file.bytes);
}

// The line of a corpus (its `bytes`) that the pair `index` came from: read_tsv keeps the pairs in file
// order, skipping empty lines and (with skip_malformed) the malformed ones, so the lines are counted
// again as it counts them. Only asked when a message needs it.
std::size_t line_of_pair(const std::string& bytes, const std::vector<std::size_t>& malformed, std::size_t index) {
  BytesBuffer buffer(bytes);
  std::istream in(&buffer);
  std::string line;
  std::size_t number = 0, pair = 0;
  while (std::getline(in, line)) {
    ++number;
    if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // byte-order mark
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || std::find(malformed.begin(), malformed.end(), number) != malformed.end()) continue;
    if (pair++ == index) return number;
  }
  return 0;
}

// The pairs of a multi-source corpus with their sources packed (cli/multi_source.hpp), those with a
// source or target longer than part_length (0: any) counted in too_long and dropped. A pair without
// its sources is an error naming `file` and its line (found in `bytes`, the file's that the corpus was
// read from), or with skip_malformed is dropped; returns how many were (and the line of the first in
// `first_unsplit_line`).
std::size_t pack_corpus(data::Corpus& corpus, std::size_t sources, std::size_t part_length, bool skip_malformed,
                        const std::string& file, const std::string& bytes, std::size_t* first_unsplit_line = nullptr) {
  std::vector<data::Example> kept;
  std::size_t unsplit = 0;
  for (std::size_t index = 0; index < corpus.pairs.size(); ++index) {
    data::Example& pair = corpus.pairs[index];
    data::Tokens packed;
    try {
      packed = pack_separators(pair.src, sources, file);
    } catch (const ValueError&) {
      if (!skip_malformed) {
        const std::size_t line = line_of_pair(bytes, corpus.malformed_lines, index);
        try {  // the same message, with the line
          (void)pack_separators(pair.src, sources, line ? file + ":" + std::to_string(line) : file);
        } catch (const ValueError& e) {
          throw IOError(std::string(e.what()) + " (a line with other sources may be skipped with --skip-malformed)");
        }
      }
      if (unsplit++ == 0 && first_unsplit_line) *first_unsplit_line = line_of_pair(bytes, corpus.malformed_lines, index);
      continue;
    }
    bool fits = !part_length || pair.tgt.size() <= part_length;
    std::size_t part = 0;
    for (const std::string& token : packed) {
      part = token == data::kSeparator ? 0 : part + 1;
      fits = fits && (!part_length || part <= part_length);
    }
    if (!fits) {
      ++corpus.too_long;
      continue;
    }
    pair.src = std::move(packed);
    kept.push_back(std::move(pair));
  }
  corpus.pairs = std::move(kept);
  return unsplit;
}

// Words outside a word-level vocabulary of the training pairs within max_length words:
// how many pairs a run without codes would train on, and how many of them hold an <unk>.
std::pair<std::size_t, std::size_t> word_level_counts(const std::vector<data::Example>& train, std::size_t max_length,
                                                      std::size_t min_freq, std::size_t max_vocab) {
  std::vector<data::Example> kept;
  for (const auto& e : train)
    if (!max_length || (e.src.size() <= max_length && e.tgt.size() <= max_length)) kept.push_back(e);
  const data::Vocab src = data::Vocab::build(data::sources(kept), min_freq, max_vocab);
  const data::Vocab tgt = data::Vocab::build(data::targets(kept), min_freq, max_vocab);
  std::size_t unknown = 0;
  for (const auto& e : kept) {
    bool known = true;
    for (const auto& w : e.src) known = known && src.contains(w);
    for (const auto& w : e.tgt) known = known && tgt.contains(w);
    unknown += known ? 0 : 1;
  }
  return {kept.size(), unknown};
}

// The corpus' words into subwords: the codes learned from the training split (or the
// checkpoint's), both splits encoded, then pairs longer than max_length subwords dropped.
void apply_bpe(TaskData& t, std::size_t merges, std::size_t max_length, std::size_t min_freq, std::size_t max_vocab,
               const std::string& file, const data::Bpe* codes) {
  const auto [word_pairs, with_unknown] = word_level_counts(t.split.train, max_length, min_freq, max_vocab);
  const std::size_t train_pairs = t.split.train.size(), test_pairs = t.split.test.size();
  t.has_bpe = true;
  t.bpe = codes ? *codes : learn_joint(t.split.train, merges);
  std::size_t dropped_train = 0, dropped_test = 0;
  for (auto* part : {&t.split.train, &t.split.test}) {
    std::vector<data::Example> kept;
    for (data::Example& e : *part) {
      try {
        e.src = t.bpe.encode(e.src);
        e.tgt = t.bpe.encode(e.tgt);
      } catch (const ValueError& error) {
        throw IOError(file + ": " + error.what() + " (a word of the corpus ending with '@@' cannot go through --bpe)");
      }
      if (max_length && (e.src.size() > max_length || e.tgt.size() > max_length)) {
        ++(part == &t.split.train ? dropped_train : dropped_test);
        continue;
      }
      kept.push_back(std::move(e));
    }
    *part = std::move(kept);
  }
  const std::string limit = max_length ? std::to_string(max_length) : "";
  if (t.split.train.empty() || t.split.test.empty())
    throw IOError(file + ": with --bpe " + std::to_string(merges) + ", no " + (t.split.train.empty() ? "training" : "held-out") +
                  " pair is at most " + limit + " subwords long (--max-length counts subwords with --bpe)");
  t.bpe_summary = "bpe: " + std::to_string(t.bpe.merges().size()) + " merges" +
                  (codes ? " (the checkpoint's codes)" : " learned from the " + std::to_string(train_pairs) + " training pairs") +
                  "; training pairs kept " + std::to_string(t.split.train.size()) + " of " + std::to_string(train_pairs) +
                  (max_length ? " (" + std::to_string(dropped_train) + " longer than " + limit + " subwords)" : "") +
                  ", held out " + std::to_string(t.split.test.size()) + " of " + std::to_string(test_pairs) +
                  "; without --bpe: " + std::to_string(word_pairs) + " training pairs" +
                  (max_length ? " of at most " + limit + " words" : "") + ", " + std::to_string(with_unknown) +
                  " of them with a word outside the vocabularies (read as <unk>)";
}
}  // namespace

data::Corpus load_corpus(const std::string& bytes, const std::string& path, const data::CorpusOptions& options,
                         const std::string& command) {
  data::check_text_encoding(bytes.substr(0, 64 * 1024), path);  // UTF-16 or CR-only lines named as such, not as their first odd byte
  data::check_word_lengths(bytes, path);                          // before the tokenizer meets a megabyte-long word
  try {
    BytesBuffer buffer(bytes);
    std::istream in(&buffer);
    return data::read_tsv(in, path, options);
  } catch (const IOError& e) {  // name the command line's flag, not the library's option
    std::string message = e.what();
    const auto hint = message.find("skip_malformed skips");
    if (hint != std::string::npos) message.replace(hint, 14, command + " --skip-malformed");
    throw IOError(message);
  }
}

nlohmann::json default_task_config(const std::string& task) {
  if (task == "copy" || task == "reverse" || task == "sort")
    return {{"name", task}, {"vocab_size", 10}, {"min_length", 5}, {"max_length", 15}, {"n_train", 20000}, {"n_test", 500}};
  if (task == "dates") return {{"name", "dates"}, {"n_train", 20000}, {"n_test", 1000}};
  if (models::task_kind(task) == "FILE.tsv" || models::task_kind(task) == "FILE.txt") {  // absolute: eval may run from another folder
    const std::string file = std::filesystem::absolute(task).lexically_normal().string();
    if (!valid_utf8(file))
      throw ValueError("--task: the file name '" + task + "' is not valid UTF-8, and config.json can only store "
                       "UTF-8 text; rename the file (or link it under a UTF-8 name)");
    for (char c : file)  // config.json holds printable text only (io/json_file.hpp)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        throw ValueError("--task: the file name '" + task + "' holds a control character, which config.json cannot "
                         "store; rename the file");
    return {{"name", "tsv"},         {"file", file},      {"char_level", false}, {"lowercase", true},
            {"split_punctuation", true}, {"max_length", 12}, {"test_fraction", 0.05}, {"test_file", ""},
            {"min_freq", 1},         {"max_vocab", 0},    {"skip_malformed", false}};
  }
  if (task == "grid") return default_grid_task_config();
  throw ValueError("unknown task '" + task + "' (tasks: " + models::task_list() + ")");  // the registry's list
}

TaskData make_task(const nlohmann::json& config, std::uint64_t seed, const std::string& where,
                   const data::Bpe* codes) {
  TaskData t;
  t.config = config;
  Generator gen(seed);
  const Fields f(config, where);
  const std::string name = f.text("name");
  if (name == "dates") {
    f.only({"name", "n_train", "n_test"});
    const std::size_t n_train = f.count("n_train", 1, kMaxExamples), n_test = f.count("n_test", 1, kMaxTestExamples);
    t.split = data::date_split(n_train, n_test, data::DateTaskOptions{}, gen);
    t.src_vocab = data::date_source_vocab();
    t.tgt_vocab = data::date_target_vocab();
  } else if (name == "tsv") {
    f.only({"name", "file", "char_level", "lowercase", "split_punctuation", "max_length", "test_fraction", "test_file",
            "min_freq", "max_vocab", "skip_malformed", "checksum", "test_checksum", "bpe", "sources"});
    const std::string file = f.text("file");
    const std::string test_file = f.has("test_file") ? f.text("test_file") : std::string();
    data::CorpusOptions options;
    options.char_level = f.boolean_or("char_level", false);
    options.lowercase = f.boolean_or("lowercase", true);
    options.max_length = f.count_or("max_length", 0, 0, kMaxLength);
    options.skip_malformed = f.boolean_or("skip_malformed", false);
    options.split_punctuation = f.boolean_or("split_punctuation", false);  // runs from before it existed: off
    const double fraction = f.real_or("test_fraction", 0.05, {0.0, 1.0, true, true});
    const std::size_t min_freq = f.count_or("min_freq", 1, 1, kMaxExamples);
    const std::size_t max_vocab = f.count_or("max_vocab", 0, 0, kMaxSymbols);
    const std::size_t merges = f.has("bpe") ? f.count("bpe", 1, kMaxMerges) : 0;
    // Several sources (cli/multi_source.hpp): "a ||| b" on the source side, each part within max_length.
    const std::size_t sources = f.count_or("sources", 1, 1, 16);
    if (sources > 1 && (merges || options.char_level))
      throw ValueError(where + ": a task of " + std::to_string(sources) + " sources reads words (no \"bpe\", no char_level)");
    const std::size_t part_length = sources > 1 ? options.max_length : 0;
    if (sources > 1) options.max_length = 0;
    if (merges && options.char_level)
      throw ValueError(where + ": \"bpe\" splits words into subwords; it does not go with char_level (--char-level)");
    const std::size_t max_length = options.max_length;
    if (merges) options.max_length = 0;  // counted in subwords, once the codes are known
    const std::string bytes = read_unchanged(t.config, "checksum", file);
    data::Corpus corpus = load_corpus(bytes, file, options, "attn train");
    std::size_t unsplit = 0;  // multi-source pairs without their sources (skipped with skip_malformed)
    const std::size_t read = corpus.pairs.size() + corpus.too_long;  // well-formed pairs, before any length limit
    std::size_t first_unsplit = 0;
    if (sources > 1)
      unsplit = pack_corpus(corpus, sources, part_length, options.skip_malformed, file, bytes, &first_unsplit);
    if (corpus.malformed)
      t.warning = std::to_string(corpus.malformed) + " malformed lines skipped (the first: line " +
                  std::to_string(corpus.malformed_lines.front()) + ")";
    if (unsplit)
      t.warning += (t.warning.empty() ? "" : "; ") + std::to_string(unsplit) + " pairs without " +
                   std::to_string(sources) + " sources skipped" +
                   (first_unsplit ? " (the first: line " + std::to_string(first_unsplit) + ")" : "");
    const std::size_t limit = sources > 1 ? part_length : options.max_length;
    if (corpus.pairs.size() < 2)
      throw IOError(file + ": fewer than 2 usable sentence pairs in " + std::to_string(corpus.lines) + " lines (" +
                    std::to_string(corpus.too_long) + " dropped as longer than max_length " + std::to_string(limit) +
                    " tokens" + (sources > 1 ? " a source" : "") + (limit ? ", see --max-length" : "") + ", " +
                    std::to_string(corpus.malformed + unsplit) + " malformed lines skipped)");
    // Say what the length limit drops: a default limit would otherwise leave pairs out unseen.
    if (!merges) {  // with codes, apply_bpe counts the pairs in subwords and says so
      t.filter_summary = file + ": " + std::to_string(corpus.pairs.size()) + " of " + std::to_string(read - unsplit) +
                         " sentence pairs kept";
      if (corpus.too_long)
        t.filter_summary += ", " + std::to_string(corpus.too_long) + " dropped as longer than " +
                            std::to_string(limit) + " tokens" + (sources > 1 ? " in a source or the target" : " on a side") +
                            " (max_length " + std::to_string(limit) + "; --max-length N keeps longer pairs)";
    }
    // A seeded shuffle, then the last test_fraction of the pairs is the test set
    // (none when a test file is given: it is the test set).
    std::vector<std::size_t> order(corpus.pairs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (std::size_t i = order.size(); i-- > 1;) std::swap(order[i], order[gen.randint(0, i + 1)]);
    const std::size_t n_test =
        test_file.empty()
            ? std::min(order.size() - 1, std::max<std::size_t>(1, static_cast<std::size_t>(fraction * order.size())))
            : 0;
    for (std::size_t i = 0; i < order.size(); ++i)
      (i + n_test < order.size() ? t.split.train : t.split.test).push_back(corpus.pairs[order[i]]);
    if (!test_file.empty()) {
      const std::string test_bytes = read_unchanged(t.config, "test_checksum", test_file);
      data::Corpus test = load_corpus(test_bytes, test_file, options, "attn train");
      if (sources > 1) pack_corpus(test, sources, part_length, options.skip_malformed, test_file, test_bytes);
      t.split.test = std::move(test.pairs);
      if (t.split.test.empty()) throw IOError(test_file + ": no usable sentence pair for the test set");
    }
    if (merges) apply_bpe(t, merges, max_length, min_freq, max_vocab, file, codes);
    t.src_vocab = data::Vocab::build(data::sources(t.split.train), min_freq, max_vocab);
    t.tgt_vocab = data::Vocab::build(data::targets(t.split.train), min_freq, max_vocab);
    if (merges)
      t.bpe_summary += "; vocabularies of " + std::to_string(t.src_vocab.size()) + " source and " +
                       std::to_string(t.tgt_vocab.size()) + " target subwords";
    for (const data::Vocab* v : {&t.src_vocab, &t.tgt_vocab})
      for (std::size_t id = 0; id < v->size(); ++id)
        if (!valid_utf8(v->token(static_cast<std::int64_t>(id))))
          throw IOError(file + ": holds text that is not valid UTF-8 (a token '" + v->token(static_cast<std::int64_t>(id)) +
                        "'), and vocab.json can only store UTF-8; convert the file first, e.g. iconv -f latin1 -t utf-8");
  } else if (name == "grid") {
    throw ValueError("task 'grid' goes with --model grid (the captioner of chapter 4), not with a sequence model");
  } else if (name == "copy" || name == "reverse" || name == "sort") {
    f.only({"name", "vocab_size", "min_length", "max_length", "n_train", "n_test"});
    data::SequenceTaskOptions options;
    options.vocab_size = f.count("vocab_size", 1, kMaxSymbols);
    options.min_length = f.count("min_length", 1, kMaxLength);
    options.max_length = f.count("max_length", 1, kMaxLength);
    if (options.min_length > options.max_length)
      throw ValueError(where + ": min_length " + std::to_string(options.min_length) + " is more than max_length " +
                       std::to_string(options.max_length) + " (--min-length, --max-length)");
    const std::size_t n_train = f.count("n_train", 1, kMaxExamples), n_test = f.count("n_test", 1, kMaxTestExamples);
    t.split = data::sequence_split(data::sequence_task_from_name(name), n_train, n_test, options, gen);
    t.src_vocab = t.tgt_vocab = data::task_vocab(options.vocab_size);
  } else {
    f.fail("name", "one of \"copy\", \"reverse\", \"sort\", \"dates\", \"tsv\", \"grid\"");
  }
  return t;
}

data::Tokens tokenize(const nlohmann::json& task_config, const std::string& text, const data::Bpe* bpe) {
  std::string s = text;
  if (task_config.at("name") == "tsv" && task_config.value("lowercase", true)) s = data::to_lower(s);
  if (char_level(task_config)) return data::split_chars(s);
  const data::Tokens words =
      task_config.value("split_punctuation", false) ? data::split_words(s) : data::split_whitespace(s);
  const std::size_t sources = Fields(task_config, "task").count_or("sources", 1, 1, 16);
  if (sources > 1) return pack_separators(words, sources, "the sentence '" + text + "'");
  return bpe ? bpe->encode(words) : words;
}

std::string detokenize(const nlohmann::json& task_config, const data::Tokens& tokens) {
  if (Fields(task_config, "task").count_or("sources", 1, 1, 16) > 1) {  // <sep> reads as the ||| a user types
    data::Tokens shown = tokens;
    std::replace(shown.begin(), shown.end(), data::kSeparator, kSourceSeparator);
    return data::join(shown, " ");
  }
  return data::join(tokens, char_level(task_config) ? "" : " ");
}

}  // namespace attn::cli
