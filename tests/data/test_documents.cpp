// data/documents.hpp: sentences cut from paragraphs, the manual-page corpus read line by
// line, a stratified split and the [B, S, W] batches of a hierarchical model.
#include "../helpers.hpp"

#include "data/documents.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

using namespace attn::data;

namespace {

DocumentCorpus read(const std::string& text, const DocumentOptions& options = {}) {
  std::istringstream in(text);
  return read_documents(in, "inline", options);
}

// Four pages (open.2 first, so that the labels cannot be the order of appearance), a blank
// line, and a page whose paragraphs are all blank.
const std::string four_pages =
    R"({"package": "manpages-dev", "page": "open.2", "section": "2", "paragraphs": ["The open() system call opens the file specified by pathname."]})"
    "\n"
    R"({"package": "coreutils", "page": "ls.1", "section": "1", "paragraphs": ["List information about the FILEs. Sort entries alphabetically.", "Mandatory arguments to long options are mandatory for short options too."]})"
    "\n\n"
    R"({"package": "manpages", "page": "blank.5", "section": "5", "paragraphs": ["", "  \n "]})"
    "\n"
    R"({"package": "manpages-dev", "page": "printf.3", "section": "3", "paragraphs": ["Print formatted output. See printf(1) too!"]})"
    "\n"
    R"({"package": "coreutils", "page": "cat.1", "section": "1", "paragraphs": ["Concatenate FILE(s) to standard output."]})"
    "\n";

Document document(const std::string& name, std::int64_t label, std::vector<Tokens> sentences = {{"x"}}) {
  Document d;
  d.name = name;
  d.label = label;
  d.sentences = std::move(sentences);
  return d;
}

std::vector<std::string> names(const std::vector<Document>& documents) {
  std::vector<std::string> out;
  for (const Document& d : documents) out.push_back(d.name);
  return out;
}

std::map<std::int64_t, std::size_t> per_class(const std::vector<Document>& documents) {
  std::map<std::int64_t, std::size_t> out;
  for (const Document& d : documents) ++out[d.label];
  return out;
}

}  // namespace

TEST_CASE("split_sentences: marks followed by a capital, a digit or an opening quote end a sentence") {
  using S = std::vector<std::string>;
  CHECK(split_sentences("See open(2) for details. The file e.g. foo.c is 3.5 kB. Done!") ==
        S{"See open(2) for details.", "The file e.g. foo.c is 3.5 kB.", "Done!"});
  // Abbreviations, also after an opening parenthesis and before a capital.
  CHECK(split_sentences("Use a flag, i.e. -v or -q. Other tools (cf. ls) etc. Work too. E.g. This stays.") ==
        S{"Use a flag, i.e. -v or -q.", "Other tools (cf. ls) etc. Work too.", "E.g. This stays."});
  CHECK(split_sentences("Call Dr. Smith. No. 5 is next. Say no. Then stop.") ==
        S{"Call Dr. Smith.", "No. 5 is next.", "Say no.", "Then stop."});
  // Runs of marks, closing parentheses and quotes stay with their sentence.
  CHECK(split_sentences("Is it done?! Yes (mostly.) 42 files... \"Quoted\" starts one.") ==
        S{"Is it done?!", "Yes (mostly.)", "42 files...", "\"Quoted\" starts one."});
  // A lowercase word after the mark (a command name, say) does not start a sentence.
  CHECK(split_sentences("It is within it. apropos searches.") == S{"It is within it. apropos searches."});
  CHECK(split_sentences("The version 2.0.1 or foo.c,v. ok") == S{"The version 2.0.1 or foo.c,v. ok"});
}

TEST_CASE("split_sentences: a newline ends a sentence only where the line does") {
  using S = std::vector<std::string>;
  CHECK(split_sentences("The first line ends here.\nthen a second\nline goes on.  \n\nLast one") ==
        S{"The first line ends here.", "then a second line goes on.", "Last one"});
  CHECK(split_sentences("Pick one, e.g.\nfoo or bar.") == S{"Pick one, e.g. foo or bar."});
  CHECK(split_sentences("a\r\nb") == S{"a  b"});
  CHECK(split_sentences("").empty());
  CHECK(split_sentences("  \n \t ").empty());
}

TEST_CASE("split_sentences: a line break ends a sentence only among the blanks after its mark; long paragraphs") {
  using S = std::vector<std::string>;
  // A line break later in the paragraph does not end this one: "go. on" stays a sentence.
  CHECK(split_sentences("We go. on and on\nuntil. here") == S{"We go. on and on until. here"});
  // Blanks before the mark (a TAB, a form feed) start the word it ends: "\te.g." is an abbreviation.
  CHECK(split_sentences("Pick\te.g. Foo or\fi.e. Bar.") == S{"Pick\te.g. Foo or\fi.e. Bar."});
  CHECK(split_sentences("Done.)\t\r\nnext one.") == S{"Done.)", "next one."});
  // Linear in the paragraph: 200,000 sentences, and a 1 MB word of marks, are split in well under a second
  // (quadratic before: 30 s for the first).
  std::string many, marks;
  for (int i = 0; i < 200000; ++i) many += "The kernel returns errno. ";
  for (int i = 0; i < 80000; ++i) marks += "kernel.errno.";
  const auto started = std::chrono::steady_clock::now();
  const S sentences = split_sentences(many), word = split_sentences(marks + " Done.");
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() < 2.0);
  CHECK(sentences.size() == 200000);
  CHECK(sentences.back() == "The kernel returns errno.");
  CHECK(word == S{marks, "Done."});
}

TEST_CASE("read_documents: sorted classes, labels, tokens and the blank pages skipped") {
  const DocumentCorpus c = read(four_pages);
  CHECK(c.lines == 6);
  CHECK(c.skipped == 1);  // blank.5
  CHECK(c.classes == std::vector<std::string>{"1", "2", "3"});  // no "5": its only page was skipped
  REQUIRE(c.documents.size() == 4);
  CHECK(names(c.documents) == std::vector<std::string>{"open.2", "ls.1", "printf.3", "cat.1"});
  CHECK(c.documents[0].package == "manpages-dev");
  CHECK(c.documents[1].package == "coreutils");
  CHECK(c.documents[0].label == 1);
  CHECK(c.documents[1].label == 0);
  CHECK(c.documents[2].label == 2);
  CHECK(c.documents[3].label == 0);
  const Document& ls = c.documents[1];
  REQUIRE(ls.sentences.size() == 3);  // two in the first paragraph, one in the second
  CHECK(ls.sentences[0] == Tokens{"list", "information", "about", "the", "files", "."});
  CHECK(ls.sentences[1] == Tokens{"sort", "entries", "alphabetically", "."});
  CHECK(ls.sentences[2].front() == "mandatory");
  CHECK(ls.words() == 6 + 4 + 12);
  // split_words (corpus.hpp) cuts punctuation at a word's ends only: the "(" of "printf(1)" is
  // inside the word and stays, while the "()" of "open()" is at its end and is cut off.
  CHECK(c.documents[2].sentences == std::vector<Tokens>{{"print", "formatted", "output", "."},
                                                        {"see", "printf(1", ")", "too", "!"}});
  CHECK(c.documents[0].sentences[0] == Tokens{"the", "open", "(", ")", "system", "call", "opens", "the", "file",
                                              "specified", "by", "pathname", "."});
  CHECK(document_sentences(c.documents).size() == 1 + 3 + 2 + 1);
  CHECK(document_sentences(c.documents)[1] == ls.sentences[0]);
}

TEST_CASE("read_documents: the sentence and word cuts, and the case kept") {
  DocumentOptions options;
  options.max_sentences = 2;
  options.max_words = 3;
  const DocumentCorpus cut = read(four_pages, options);
  REQUIRE(cut.documents.size() == 4);
  CHECK(cut.documents[1].sentences == std::vector<Tokens>{{"list", "information", "about"}, {"sort", "entries", "alphabetically"}});
  CHECK(cut.documents[3].sentences == std::vector<Tokens>{{"concatenate", "file(s", ")"}});
  CHECK(cut.documents[1].words() == 6);
  options = {};
  options.max_sentences = 1;
  CHECK(read(four_pages, options).documents[1].sentences == std::vector<Tokens>{{"list", "information", "about", "the", "files", "."}});
  options = {};
  options.lowercase = false;
  const DocumentCorpus kept = read(four_pages, options);
  CHECK(kept.documents[1].sentences[0] == Tokens{"List", "information", "about", "the", "FILEs", "."});
  CHECK(kept.documents[3].sentences[0][1] == "FILE(s");
}

TEST_CASE("read_documents: a malformed line is named by file and line number") {
  const std::string good = R"({"package": "p", "page": "a.1", "section": "1", "paragraphs": ["One sentence."]})";
  const auto bad_second = [&](const std::string& line) { return good + "\n\n" + line + "\n" + good + "\n"; };
  CHECK_THROWS_WITH_SUBSTR(read(bad_second(R"({"package": "p", "page": )")), attn::IOError, "inline:3: not valid JSON");
  CHECK_THROWS_WITH_SUBSTR(read(bad_second(R"({"package": "p", "page": "a.1", "section": "1"})")), attn::IOError,
                           "inline:3: no key \"paragraphs\"");
  CHECK_THROWS_WITH_SUBSTR(read(bad_second(R"({"page": "a.1", "section": "1", "paragraphs": []})")), attn::IOError,
                           "inline:3: no key \"package\"");
  CHECK_THROWS_WITH_SUBSTR(read(bad_second(R"({"package": "p", "page": "a.1", "section": 1, "paragraphs": []})")),
                           attn::IOError, "inline:3: \"section\" is number, expected a string");
  CHECK_THROWS_WITH_SUBSTR(read(bad_second(R"({"package": "p", "page": "a.1", "section": "", "paragraphs": []})")),
                           attn::IOError, "inline:3: \"section\" is empty");
  CHECK_THROWS_WITH_SUBSTR(read(bad_second(R"({"package": "p", "page": "a.1", "section": "1", "paragraphs": "text"})")),
                           attn::IOError, "inline:3: \"paragraphs\" is string, expected a list of strings");
  CHECK_THROWS_WITH_SUBSTR(read(bad_second(R"({"package": "p", "page": "a.1", "section": "1", "paragraphs": ["ok", 7]})")),
                           attn::IOError, "inline:3: paragraph 1 is number, expected a string");
  CHECK_THROWS_WITH_SUBSTR(read(bad_second(R"(["a", "b"])")), attn::IOError, "inline:3: array, expected a JSON object");
  // Past max_sentences the rest of the page is still checked.
  DocumentOptions one;
  one.max_sentences = 1;
  CHECK_THROWS_WITH_SUBSTR(read(good + "\n" + R"({"package": "p", "page": "a.1", "section": "1", "paragraphs": ["A. B.", 7]})", one),
                           attn::IOError, "inline:2: paragraph 1 is number");
  CHECK(read(bad_second(good)).documents.size() == 3);
  CHECK_THROWS_WITH_SUBSTR(load_documents("/nonexistent/manpages.jsonl"), attn::IOError,
                           "cannot open '/nonexistent/manpages.jsonl'");
}

TEST_CASE("stratified_split keeps each class's share, reproducibly") {
  std::vector<Document> docs;
  // 10 of class 0, 5 of class 1, one of class 2, two of class 3, interleaved.
  const std::vector<std::int64_t> labels{0, 1, 0, 0, 3, 0, 1, 0, 2, 0, 1, 0, 0, 1, 3, 0, 1, 0};
  for (std::size_t i = 0; i < labels.size(); ++i)
    docs.push_back(document((i < 10 ? "d0" : "d") + std::to_string(i), labels[i]));
  attn::Generator gen(7);
  const DocumentSplit split = stratified_split(docs, 0.2, gen);
  // round(0.2 * n): 2 of 10, 1 of 5; none of the single document; 1 of 2 (round(0.4) = 0, raised to 1).
  CHECK(per_class(split.test) == std::map<std::int64_t, std::size_t>{{0, 2}, {1, 1}, {3, 1}});
  CHECK(per_class(split.train) == std::map<std::int64_t, std::size_t>{{0, 8}, {1, 4}, {2, 1}, {3, 1}});
  // Disjoint, together every document, each side in file order (the names sort as the positions).
  std::vector<std::string> all = names(split.train), test = names(split.test);
  CHECK(std::is_sorted(all.begin(), all.end()));
  CHECK(std::is_sorted(test.begin(), test.end()));
  for (const std::string& t : test) CHECK(std::find(all.begin(), all.end(), t) == all.end());
  all.insert(all.end(), test.begin(), test.end());
  std::sort(all.begin(), all.end());
  CHECK(all == names(docs));
  // The same seed, the same split; other seeds, other splits.
  attn::Generator again(7);
  CHECK(names(stratified_split(docs, 0.2, again).test) == test);
  std::set<std::vector<std::string>> tests;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    attn::Generator other(seed);
    tests.insert(names(stratified_split(docs, 0.2, other).test));
  }
  CHECK(tests.size() >= 4);
  // At most n - 1 go to test: train still sees every class.
  attn::Generator g(1);
  CHECK(per_class(stratified_split(docs, 0.9, g).train) == std::map<std::int64_t, std::size_t>{{0, 1}, {1, 1}, {2, 1}, {3, 1}});
  for (double bad : {0.0, 1.0, -0.5, std::nan("")})
    CHECK_THROWS_WITH_SUBSTR(stratified_split(docs, bad, g), attn::ValueError, "expected test_fraction in (0, 1)");
}

TEST_CASE("make_document_batch pads sentences and documents with <pad>") {
  const Vocab vocab({"a", "b", "c"});  // a = 4, b = 5, c = 6
  const std::vector<Document> docs{document("d0", 2, {{"a", "b", "c"}, {"a"}}), document("d1", 0, {{"b"}}),
                                   document("d2", 1, {{"c", "zzz"}, {"b"}, {"a", "a", "a", "a"}})};
  const DocumentBatch batch = make_document_batch(docs, {1, 0}, vocab);
  CHECK(batch.size() == 2);
  REQUIRE(batch.words.shape() == std::vector<std::size_t>{2, 2, 3});  // B, S = 2 sentences, W = 3 words
  const attn::Index expected{{{5, 0, 0}, {0, 0, 0}}, {{4, 5, 6}, {4, 0, 0}}};
  CHECK(batch.words == expected);
  CHECK(batch.sentence_counts == std::vector<std::size_t>{1, 2});
  CHECK(batch.word_counts == std::vector<std::size_t>{1, 0, 3, 1});
  CHECK(batch.labels == attn::Index{0, 2});
  CHECK(batch.indices == std::vector<std::size_t>{1, 0});
  const DocumentBatch all = make_document_batch(docs, {0, 1, 2}, vocab);
  REQUIRE(all.words.shape() == std::vector<std::size_t>{3, 3, 4});
  CHECK(all.words(2, 0, 1) == Vocab::unk_id);  // "zzz"
  CHECK(all.words(2, 2, 3) == 4);
  CHECK(all.word_counts == std::vector<std::size_t>{3, 1, 0, 1, 0, 0, 2, 1, 4});
  CHECK(all.labels == attn::Index{2, 0, 1});

  CHECK_THROWS_WITH_SUBSTR(make_document_batch(docs, {}, vocab), attn::ValueError, "expected at least one document, got none");
  CHECK_THROWS_WITH_SUBSTR(make_document_batch(docs, {0, 3}, vocab), attn::ValueError, "index 3 is out of range for 3 documents");
  CHECK_THROWS_WITH_SUBSTR(make_document_batch({docs[0], document("empty.1", 0, {})}, {0, 1}, vocab), attn::ValueError,
                           "document 1 ('empty.1') has no sentence");
  CHECK_THROWS_WITH_SUBSTR(make_document_batch({document("hole.1", 0, {{"a"}, {}})}, {0}, vocab), attn::ValueError,
                           "sentence 1 of document 0 ('hole.1') is empty");
}

TEST_CASE("make_document_batches: sorted by the padded size, sentences x longest sentence, not by words") {
  const Vocab vocab({"w"});
  auto page = [](const std::string& name, std::vector<std::size_t> lengths) {
    std::vector<Tokens> sentences;
    for (std::size_t n : lengths) sentences.push_back(Tokens(n, "w"));
    return document(name, 0, sentences);
  };
  // words 8, 7, 9, 3; sizes 8, 12, 9, 3: by words d3 d1 | d0 d2, by size d3 d0 | d2 d1.
  const std::vector<Document> docs{page("d0", std::vector<std::size_t>(8, 1)), page("d1", {6, 1}), page("d2", {9}),
                                   page("d3", {3})};
  BatchOptions options;
  options.batch_size = 2;
  options.sort_buckets = 2;  // one bucket of all four
  attn::Generator gen(4);
  for (const DocumentBatch& b : make_document_batches(docs, vocab, options, gen)) {
    std::vector<std::size_t> pair = b.indices;
    std::sort(pair.begin(), pair.end());
    CHECK((pair == std::vector<std::size_t>{0, 3} || pair == std::vector<std::size_t>{1, 2}));
  }
}

TEST_CASE("make_document_batches: every document once, sorted buckets of similar length") {
  const Vocab vocab({"w"});
  std::vector<Document> docs;
  for (std::size_t i = 0; i < 10; ++i) docs.push_back(document("d" + std::to_string(i), 0, {Tokens(i + 1, "w")}));
  BatchOptions options;
  options.batch_size = 4;
  options.sort_buckets = 3;  // one bucket: the whole epoch sorted by words
  attn::Generator gen(3);
  const std::vector<DocumentBatch> batches = make_document_batches(docs, vocab, options, gen);
  REQUIRE(batches.size() == 3);
  std::vector<std::size_t> seen;
  for (const DocumentBatch& b : batches) {
    seen.insert(seen.end(), b.indices.begin(), b.indices.end());
    std::vector<std::size_t> sorted = b.indices;
    std::sort(sorted.begin(), sorted.end());
    // Sorted by length, a batch is a run of consecutive documents (their length is position + 1).
    CHECK(sorted.back() - sorted.front() == sorted.size() - 1);
    CHECK(b.words.shape(2) == sorted.back() + 1);
  }
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("the pinned manual pages, when present: 1,625 pages in 5 sections") {
  // The repository's root, where tools/setup.sh --with-corpus writes it.
  const std::string path = std::string(ATTN_REFERENCE_DIR) + "/../../manpages.jsonl";
  if (!std::filesystem::exists(path)) {
    MESSAGE("skipped: " << path << " is not there (tools/setup.sh --with-corpus makes it)");
    return;
  }
  const DocumentCorpus c = load_documents(path);
  CHECK(c.lines == 1625);
  CHECK(c.documents.size() + c.skipped == 1625);
  CHECK(c.classes == std::vector<std::string>{"1", "2", "3", "5", "8"});
  const std::map<std::string, std::size_t> expected{{"1", 280}, {"2", 276}, {"3", 621}, {"5", 117}, {"8", 331}};
  std::map<std::string, std::size_t> counts;
  for (const Document& d : c.documents) ++counts[c.classes.at(static_cast<std::size_t>(d.label))];
  for (const auto& [section, n] : expected) {
    CHECK(counts[section] <= n);
    CHECK(counts[section] + c.skipped >= n);
  }
  REQUIRE(!c.documents.empty());
  CHECK(c.documents[0].name == "apropos.1");
  CHECK(c.documents[0].package == "man-db");
  CHECK(c.documents[0].label == 0);
  // "... within it. apropos searches ...": a command name after the period does not start a sentence.
  CHECK(c.documents[0].sentences[0].size() == 20);
  // The shape of the data, to choose max_sentences and max_words.
  std::vector<std::size_t> sentences, words;
  for (const Document& d : c.documents) {
    sentences.push_back(d.sentences.size());
    for (const Tokens& s : d.sentences) words.push_back(s.size());
  }
  const auto quantile = [](std::vector<std::size_t> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
  };
  MESSAGE("documents " << c.documents.size() << ", skipped " << c.skipped << ", sentences " << words.size()
                       << "; sentences per document: median " << quantile(sentences, 0.5) << ", 90% "
                       << quantile(sentences, 0.9) << ", 99% " << quantile(sentences, 0.99) << ", max "
                       << quantile(sentences, 1.0) << "; words per sentence: median " << quantile(words, 0.5)
                       << ", 90% " << quantile(words, 0.9) << ", 99% " << quantile(words, 0.99) << ", max "
                       << quantile(words, 1.0));
  DocumentOptions cut;
  cut.max_sentences = 30;
  cut.max_words = 40;
  for (const Document& d : load_documents(path, cut).documents) {
    CHECK(d.sentences.size() <= 30);
    for (const Tokens& s : d.sentences) CHECK(s.size() <= 40);
  }
}
