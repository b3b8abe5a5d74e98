#include "bpe.hpp"

#include "../core/errors.hpp"
#include "../data/corpus.hpp"
#include "../data/vocab.hpp"
#include "output.hpp"
#include "parse.hpp"
#include "progress.hpp"
#include "run_dir.hpp"
#include "task.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <atomic>
#include <iostream>
#include <set>
#include <sstream>

namespace attn::cli {

data::Bpe learn_joint(const std::vector<data::Example>& examples, std::size_t merges) {
  std::vector<data::Tokens> sentences;
  sentences.reserve(2 * examples.size());
  for (const data::Example& e : examples) {
    sentences.push_back(e.src);
    sentences.push_back(e.tgt);
  }
  // Thousands of merges over a large corpus take a while: after 2 s a line says how many are learned (the first
  // merges touch most words and the last few, so no time left is guessed from the count).
  std::atomic<std::size_t> learned{0};
  Phase phase("learning " + std::to_string(merges) + " subword merges",
              [&learned, merges] { return std::to_string(learned.load()) + " of " + std::to_string(merges) + " learned"; });
  data::Bpe codes = data::Bpe::learn(sentences, merges, 2, [&learned](std::size_t k) { learned.store(k); });
  phase.done();
  return codes;
}

data::Bpe read_codes(const std::string& path, const std::string& shown) {
  constexpr std::uintmax_t kMaxBytes = 64u << 20;  // a million merges of long words
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxBytes)
    throw IOError(shown + ": " + std::to_string(size) + " bytes, larger than the " + std::to_string(kMaxBytes) +
                  " bytes of a codes file attn reads (not a file attn wrote, or damaged)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(shown + ": cannot open (missing or unreadable)");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw IOError(shown + ": reading failed");
  data::Bpe codes = data::Bpe::from_text(text.str(), shown);  // the format first: its messages name the line
  check_codes_text(text.str(), shown);
  return codes;
}

void check_codes_text(const std::string& text, const std::string& shown) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);  // the header: from_text checks it
  std::set<std::pair<std::string, std::string>> seen;
  std::set<std::string> made;  // the symbols the merges so far make
  // A symbol a merge may use: one character, the end-of-word mark, or what an earlier merge made.
  auto known = [&made](const std::string& symbol) {
    return symbol == data::Bpe::end_of_word || data::split_chars(symbol).size() == 1 || made.count(symbol) > 0;
  };
  for (std::size_t number = 2; std::getline(in, line); ++number) {
    const std::string at = shown + ":" + std::to_string(number) + ": ";
    if (!valid_utf8(line)) throw IOError(at + "not valid UTF-8 text; the codes file is damaged (train the run again)");
    for (char c : line)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        char code[8];
        std::snprintf(code, sizeof code, "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
        throw IOError(at + "holds the control character " + code + (c == '\t' ? " (a TAB)" : c == 0 ? " (NUL)" :
                      c == 0x1b ? " (ESC)" : "") + ", which no subword holds; the codes file is damaged (train the "
                      "run again)");
      }
    const std::size_t space = line.find(' ');
    if (space == std::string::npos) continue;  // from_text names a malformed line
    const std::string a = line.substr(0, space), b = line.substr(space + 1);
    if (!seen.insert({a, b}).second)
      throw IOError(at + "the merge '" + line + "' is listed twice; each merge is learned once: the codes file is "
                    "damaged (train the run again)");
    for (const std::string& symbol : {a, b})
      if (!known(symbol))
        throw IOError(at + "the merge '" + line + "' uses '" + symbol + "' before any line makes it; merges apply in "
                      "the order learned, so the lines are out of order: the codes file is damaged (train the run "
                      "again)");
    made.insert(a + b);
  }
}

std::vector<std::pair<std::size_t, std::size_t>> word_spans(const data::Tokens& pieces) {
  const std::string mark = data::Bpe::continuation;
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  std::size_t first = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const std::string& p = pieces[i];
    const bool continues = p.size() >= mark.size() && p.compare(p.size() - mark.size(), mark.size(), mark) == 0;
    if (!continues || i + 1 == pieces.size()) {  // a word ends here (or the sentence stops mid-word)
      spans.emplace_back(first, i + 1);
      first = i + 1;
    }
  }
  return spans;
}

xt::xarray<double> merge_subword_attention(const xt::xarray<double>& attention, const data::Tokens& row_pieces,
                                           const data::Tokens& col_pieces) {
  if (attention.dimension() != 2 || attention.shape()[0] != row_pieces.size() ||
      attention.shape()[1] != col_pieces.size())
    throw ValueError("merge_subword_attention: expected attention of shape [" + std::to_string(row_pieces.size()) +
                     ", " + std::to_string(col_pieces.size()) + "] (output pieces, source pieces)");
  const auto rows = word_spans(row_pieces), cols = word_spans(col_pieces);
  xt::xarray<double> words = xt::zeros<double>({rows.size(), cols.size()});  // [T words, S words]
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t c = 0; c < cols.size(); ++c) {
      double sum = 0.0;
      for (std::size_t i = rows[r].first; i < rows[r].second; ++i)
        for (std::size_t j = cols[c].first; j < cols[c].second; ++j) sum += attention(i, j);
      words(r, c) = sum / double(rows[r].second - rows[r].first);  // columns summed, rows averaged
    }
  return words;
}

void add_bpe_command(CLI::App& app) {
  struct Options {
    std::string task, out;
    std::uint64_t merges = 0;
    bool lowercase = true, split_punctuation = true, skip_malformed = false, overwrite = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* bpe = app.add_subcommand("bpe", "Byte-pair encoding (Sennrich et al. 2016): learn subword codes");
  bpe->require_subcommand(1);
  CLI::App* cmd = bpe->add_subcommand(
      "learn", "Learn joint codes over both sides of a FILE.tsv (as `train --bpe N` does on its training split)");
  cmd->add_option("--task", o->task, "the FILE.tsv of source<TAB>target lines")->required();
  add_count(cmd, "--merges", o->merges, 1, kMaxMerges, "merges to learn (fewer if no pair occurs twice)")->required();
  cmd->add_option("--out", o->out, "the codes file to write (a new file unless --overwrite)")->required();
  cmd->add_flag("--overwrite", o->overwrite, "replace --out if it exists");
  add_switch(cmd, "--lowercase", "--no-lowercase", o->lowercase, "lowercase both sides first, as train does");
  add_switch(cmd, "--split-punctuation", "--no-split-punctuation", o->split_punctuation,
             "punctuation and French elisions as words of their own, as train does");
  cmd->add_flag("--skip-malformed", o->skip_malformed, "skip malformed lines instead of stopping at the first");
  cmd->callback([o] {
    const Output out{"--out", o->out, o->overwrite};
    const std::vector<Input> inputs = {{o->task, "the corpus it reads"}};
    check_output(out, inputs, {});  // before the work
    data::CorpusOptions options;
    options.lowercase = o->lowercase;
    options.split_punctuation = o->split_punctuation;
    options.skip_malformed = o->skip_malformed;
    // One read of the file: the checks of its encoding and words, then its pairs.
    const data::Corpus corpus = load_corpus(read_checksummed(o->task).bytes, o->task, options, "attn bpe learn");
    if (corpus.pairs.empty()) throw IOError(o->task + ": no sentence pair to learn from");
    const data::Bpe codes = learn_joint(corpus.pairs, o->merges);
    std::set<std::string> words;
    for (const auto& e : corpus.pairs) {
      words.insert(e.src.begin(), e.src.end());
      words.insert(e.tgt.begin(), e.tgt.end());
    }
    write_output(out, codes.to_text(), inputs, {});
    std::cout << "learned " << codes.merges().size() << " merges (of " << o->merges << " asked) from "
              << corpus.pairs.size() << " pairs, " << words.size() << " distinct words on both sides; wrote "
              << o->out << "\n";
  });
}

}  // namespace attn::cli
