// `attn corpus gettext`: an English -> French (or any language) corpus from the
// message catalogs installed with the system's programs (data/gettext.hpp).
#include "commands.hpp"
#include "output.hpp"
#include "parse.hpp"

#include "../data/gettext.hpp"
#include "../data/multi_source.hpp"
#include "multi_source.hpp"

#include <iostream>
#include <set>

namespace attn::cli {

namespace {

// Words, distinct words and mean length of one side of the pairs, as the
// training tokenizes it by default (lowercased, punctuation split).
struct SideStats {
  std::size_t words = 0;
  std::set<std::string> vocabulary;
};

void print_summary(const data::GettextCorpus& c, const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::printf("read %zu catalogs, %zu messages\n", c.catalogs, c.entries);
  std::printf("kept %zu pairs; dropped:", pairs.size());
  for (const auto& [reason, count] : c.dropped) std::printf(" %zu %s,", count, reason.c_str());
  std::printf("\n");
  SideStats src, tgt;
  for (const auto& [s, t] : pairs) {
    for (const auto& [text, stats] : {std::pair{&s, &src}, std::pair{&t, &tgt}}) {
      const data::Tokens tokens = data::split_words(data::to_lower(*text));
      stats->words += tokens.size();
      stats->vocabulary.insert(tokens.begin(), tokens.end());
    }
  }
  const double n = double(std::max<std::size_t>(pairs.size(), 1));
  std::printf("tokens (lowercased, punctuation split): source %zu types, mean length %.2f; target %zu types, mean length %.2f\n",
              src.vocabulary.size(), double(src.words) / n, tgt.vocabulary.size(), double(tgt.words) / n);
}

}  // namespace

void add_corpus_command(CLI::App& app) {
  struct Options {
    std::string lang = "fr", second, out, locale_dir = "/usr/share/locale";
    std::uint64_t min_words = 3, max_words = 12;
    std::uint64_t seed = 1;
    bool overwrite = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* corpus = app.add_subcommand("corpus", "Build a translation corpus from data on this machine");
  corpus->require_subcommand(1);
  CLI::App* cmd = corpus->add_subcommand(
      "gettext", "English -> LANG pairs from the installed message catalogs (<locale-dir>/LANG/LC_MESSAGES/*.mo)");
  cmd->add_option("--lang", o->lang, "the target language, as named in the locale folder")->capture_default_str();
  cmd->add_option("--second", o->second,
                  "also a second source language: lines 'english ||| second<TAB>target' of the messages both "
                  "languages translate, for --model multi-source (chapter 17: --lang fr --second de)");
  cmd->add_option("--out", o->out, "the FILE.tsv to write (source<TAB>target lines; a new file unless --overwrite)")
      ->required();
  cmd->add_flag("--overwrite", o->overwrite, "replace --out if it exists");
  cmd->add_option("--locale-dir", o->locale_dir, "where the catalogs are")->capture_default_str();
  add_count(cmd, "--min-words", o->min_words, 1, 10000, "fewest words on either side (default 3)");
  add_count(cmd, "--max-words", o->max_words, 1, 10000, "most words on either side (default 12)");
  add_count(cmd, "--seed", o->seed, 0, kMaxSeed, "the order of the pairs (a seeded shuffle)");
  cmd->callback([o, cmd] {
    const bool two = cmd->count("--second") > 0;
    for (const std::string* lang : {&o->lang, &o->second}) {
      if (lang == &o->second && !two) continue;
      const std::string flag = lang == &o->lang ? "--lang" : "--second";
      if (lang->empty())
        throw ValueError("corpus gettext: " + flag + " is empty; give a language as its folder in " + o->locale_dir +
                         " names it, e.g. " + flag + (lang == &o->lang ? " fr" : " de"));
      if (lang->find('/') != std::string::npos || *lang == "." || *lang == "..")
        throw ValueError("corpus gettext: " + flag + " '" + *lang + "' is not a language name (a folder name in " +
                         o->locale_dir + ", such as fr or pt_BR)");
    }
    if (two && o->second == o->lang)
      throw ValueError("corpus gettext: --second " + o->second + " is the target language too; give another (e.g. de)");
    const std::vector<std::string> files = data::mo_files(o->locale_dir, o->lang);
    const std::vector<std::string> second_files = two ? data::mo_files(o->locale_dir, o->second) : std::vector<std::string>{};
    std::vector<Input> inputs;
    for (const auto& f : files) inputs.push_back({f, "one of the catalogs it reads"});
    for (const auto& f : second_files) inputs.push_back({f, "one of the catalogs it reads"});
    const Output out{"--out", o->out, o->overwrite};
    check_output(out, inputs, {});
    data::GettextOptions options;
    options.min_words = o->min_words;
    options.max_words = o->max_words;
    // One language's catalogs, read and cleaned; a damaged catalog (the reader says how) is skipped
    // while others are usable, refused when none is.
    auto read_language = [&](const std::string& lang, const std::vector<std::string>& lang_files) {
      const std::string dir = o->locale_dir + "/" + lang + "/LC_MESSAGES";
      if (lang_files.empty())
        throw IOError("corpus gettext: no message catalogs (*.mo) in " + dir +
                      " (minimal images leave out /usr/share/locale). To get some: tools/setup.sh --with-corpus "
                      "downloads a few packages with apt-get download and unpacks only their catalogs into "
                      "./locale; then run attn corpus gettext --locale-dir locale");
      data::GettextCorpus c = data::gettext_corpus(lang_files, options);
      std::vector<std::string> skipped;  // "the damaged catalog FILE: how", "the catalog FILE: charset ..."
      for (const std::string& why : c.skipped_files)
        skipped.push_back(why.rfind("read_mo: ", 0) == 0 ? "the damaged catalog " + why.substr(9) : "the catalog " + why);
      if (c.catalogs == 0 && !skipped.empty()) {
        std::string all;
        for (const auto& why : skipped) all += (all.empty() ? "" : "; ") + why;
        throw IOError("corpus gettext: no usable catalog in " + dir + ": " + std::to_string(skipped.size()) +
                      (skipped.size() == 1 ? " catalog is" : " catalogs are") + " unusable: " + all);
      }
      for (const auto& why : skipped) std::cerr << "warning: skipped " << why << "\n";
      if (c.pairs.empty())
        throw IOError("corpus gettext: no pair in " + std::to_string(lang_files.size()) + " catalogs of " + dir +
                      " passed the filters");
      return c;
    };
    const data::GettextCorpus c = read_language(o->lang, files);
    std::vector<std::pair<std::string, std::string>> pairs = c.pairs;
    std::size_t joined = 0, separator = 0;
    if (two) {  // "english ||| second" -> target, for the messages both languages translate
      const data::GettextCorpus second = read_language(o->second, second_files);
      pairs.clear();
      for (const data::TwoTranslations& t : data::join_translations(c.pairs, second.pairs)) {
        ++joined;
        if ((t.source + t.first + t.second).find(kSourceSeparator) != std::string::npos) {
          ++separator;  // the line could not be split into its sources again
          continue;
        }
        pairs.push_back({t.source + " " + kSourceSeparator + " " + t.second, t.first});
      }
      if (pairs.empty())
        throw IOError("corpus gettext: no English message is translated into both " + o->lang + " and " + o->second);
    }
    // A seeded shuffle, so that the held-out pairs of `train` come from every catalog.
    Generator gen(o->seed);
    for (std::size_t i = pairs.size(); i-- > 1;) std::swap(pairs[i], pairs[gen.randint(0, std::int64_t(i) + 1)]);
    std::string text;
    for (const auto& [src, tgt] : pairs) text += src + "\t" + tgt + "\n";
    write_output(out, text, inputs);
    print_summary(c, pairs);
    if (two)
      std::printf("English messages in both languages: %zu; kept %zu (%zu held the separator %s)\n", joined,
                  pairs.size(), separator, kSourceSeparator.c_str());
    std::printf("wrote %s\n", o->out.c_str());
  });
}

}  // namespace attn::cli
