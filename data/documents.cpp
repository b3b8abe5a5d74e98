#include "documents.hpp"

#include "../core/errors.hpp"
#include "../io/json_file.hpp"
#include "corpus.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <istream>
#include <map>
#include <numeric>

namespace attn::data {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string trim(const std::string& s) {
  const char* blanks = " \t\r\n\f\v";
  const auto first = s.find_first_not_of(blanks);
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(blanks) - first + 1);
}

bool starts_with(const std::string& s, std::size_t at, const char* prefix) {
  return s.compare(at, std::char_traits<char>::length(prefix), prefix) == 0;
}

// Quotes and brackets that may close a sentence after its mark: 'done.)' or '"Stop!"'.
std::size_t closer_length(const std::string& s, std::size_t at) {
  if (at >= s.size()) return 0;
  if (s[at] == ')' || s[at] == ']' || s[at] == '"' || s[at] == '\'') return 1;
  for (const char* c : {"\xE2\x80\x9D", "\xE2\x80\x99", "\xC2\xBB"})  // ” ’ »
    if (starts_with(s, at, c)) return std::char_traits<char>::length(c);
  return 0;
}

// What may start a sentence: an uppercase letter (ASCII or Latin-1 À..Þ), a digit, an opening quote or bracket.
bool starts_sentence(const std::string& s, std::size_t at) {
  const char c = s[at];
  if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '(' || c == '[' || c == '"' || c == '\'') return true;
  if (starts_with(s, at, "\xC3") && at + 1 < s.size()) {  // U+00C0..U+00DF, minus × and ß
    const auto next = static_cast<unsigned char>(s[at + 1]);
    return next >= 0x80 && next <= 0x9E && next != 0x97;
  }
  for (const char* c : {"\xE2\x80\x9C", "\xE2\x80\x98", "\xC2\xAB"})  // “ ‘ «
    if (starts_with(s, at, c)) return true;
  return false;
}

// The word a '.' ends is an abbreviation, not a sentence's end ("e.g. foo", "(cf. bar)").
bool is_abbreviation(std::string word) {
  word.erase(0, word.find_first_not_of("([\"'"));
  // Titles are capitalized: "no." ends "The answer is no.", "No." abbreviates "Number".
  if (word == "Dr." || word == "No.") return true;
  word = to_lower(word);
  for (const char* a : {"e.g.", "i.e.", "etc.", "cf.", "vs."})
    if (word == a) return true;
  return false;
}

// "file:line": how messages name a line of the corpus.
std::string where(const std::string& name, std::size_t line) { return name + ":" + std::to_string(line); }

// The value at `key` of the line's object, or an IOError naming the key.
const nlohmann::json& value_at(const nlohmann::json& object, const char* key, const std::string& at) {
  if (!object.contains(key))
    throw IOError("read_documents: " + at + ": no key \"" + key +
                  "\" (expected {\"package\", \"page\", \"section\", \"paragraphs\"})");
  return object.at(key);
}

// The string at `key`, or an IOError saying what is there instead.
std::string string_at(const nlohmann::json& object, const char* key, const std::string& at) {
  const nlohmann::json& value = value_at(object, key, at);
  if (!value.is_string())
    throw IOError("read_documents: " + at + ": \"" + key + "\" is " + value.type_name() + ", expected a string");
  return value.get<std::string>();
}

void check_indices(const std::vector<std::size_t>& indices, std::size_t n) {
  if (indices.empty()) throw ValueError("make_document_batch: expected at least one document, got none");
  for (std::size_t i : indices)
    if (i >= n)
      throw ValueError("make_document_batch: index " + std::to_string(i) + " is out of range for " +
                       std::to_string(n) + " documents");
}

}  // namespace

std::size_t Document::words() const {
  std::size_t n = 0;
  for (const Tokens& s : sentences) n += s.size();
  return n;
}

std::vector<std::string> split_sentences(const std::string& paragraph) {
  // Linear in the paragraph: every character is looked at a bounded number of times. The word a
  // mark ends starts at `word_start` (kept as `current` grows, not searched back for), and only
  // the blanks after the mark are looked at for a line end, not the rest of the paragraph.
  std::vector<std::string> out;
  std::string current;
  std::size_t word_start = 0;  // in `current`: just past its last blank
  const auto finish = [&] {
    std::string sentence = trim(current);
    if (!sentence.empty()) out.push_back(std::move(sentence));
    current.clear();
    word_start = 0;
  };
  const std::string& p = paragraph;
  for (std::size_t i = 0; i < p.size();) {
    const char c = p[i];
    if (c != '.' && c != '!' && c != '?') {
      current += (c == '\n' || c == '\r') ? ' ' : c;  // a line break inside a sentence is a space
      if (is_blank(c)) word_start = current.size();
      ++i;
      continue;
    }
    const std::size_t word_end = current.size();  // the word this mark ends is current[word_start, word_end) + c
    std::size_t end = i;  // past the run of marks ("...", "?!") and what closes the sentence
    while (end < p.size() && (p[end] == '.' || p[end] == '!' || p[end] == '?')) ++end;
    const bool single_period = end == i + 1 && c == '.';
    for (std::size_t n; (n = closer_length(p, end)) > 0;) end += n;
    current.append(p, i, end - i);  // marks and closers hold no blank: word_start stays
    i = end;
    std::size_t next = end;  // the first character after the blanks
    bool line_ends = false;  // the line ends with the sentence: a line break among those blanks
    for (; next < p.size() && is_blank(p[next]); ++next) line_ends = line_ends || p[next] == '\n' || p[next] == '\r';
    if (next == end) continue;  // "3.5", "foo.c", "e.g": no blank, no end
    // Copied only here, where a blank follows: words that end at a mark then do not overlap.
    if (single_period && is_abbreviation(current.substr(word_start, word_end - word_start) + c)) continue;
    if (next == p.size() || line_ends || starts_sentence(p, next)) finish();
  }
  finish();
  return out;
}

DocumentCorpus read_documents(std::istream& in, const std::string& name, const DocumentOptions& options) {
  DocumentCorpus corpus;
  std::vector<std::string> sections;  // each kept document's, labelled once all are read
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t number = ++corpus.lines;
    if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // byte-order mark
    if (trim(line).empty()) continue;
    const std::string at = where(name, number);
    const nlohmann::json object = io::parse_json(line, "read_documents: " + at);
    if (!object.is_object())
      throw IOError("read_documents: " + at + ": " + object.type_name() + ", expected a JSON object for one page");
    Document doc;
    doc.package = string_at(object, "package", at);
    doc.name = string_at(object, "page", at);
    const std::string section = string_at(object, "section", at);
    if (trim(section).empty()) throw IOError("read_documents: " + at + ": \"section\" is empty, expected a label");
    const nlohmann::json& paragraphs = value_at(object, "paragraphs", at);
    if (!paragraphs.is_array())
      throw IOError("read_documents: " + at + ": \"paragraphs\" is " + paragraphs.type_name() +
                    ", expected a list of strings");
    for (std::size_t k = 0; k < paragraphs.size(); ++k) {
      if (!paragraphs[k].is_string())
        throw IOError("read_documents: " + at + ": paragraph " + std::to_string(k) + " is " +
                      paragraphs[k].type_name() + ", expected a string");
      for (const std::string& text : split_sentences(paragraphs[k].get<std::string>())) {
        // A whole document is checked even past max_sentences: a bad paragraph is never ignored.
        if (options.max_sentences > 0 && doc.sentences.size() >= options.max_sentences) break;
        Tokens words = split_words(options.lowercase ? to_lower(text) : text);
        if (words.empty()) continue;
        if (options.max_words > 0 && words.size() > options.max_words) words.resize(options.max_words);
        doc.sentences.push_back(std::move(words));
      }
    }
    if (doc.sentences.empty()) {
      ++corpus.skipped;
      continue;
    }
    corpus.documents.push_back(std::move(doc));
    sections.push_back(section);
  }
  if (in.bad()) throw IOError("read_documents: " + name + ": read error after line " + std::to_string(corpus.lines));
  // Labels in sorted order, so that they do not depend on which page comes first.
  corpus.classes = sections;
  std::sort(corpus.classes.begin(), corpus.classes.end());
  corpus.classes.erase(std::unique(corpus.classes.begin(), corpus.classes.end()), corpus.classes.end());
  for (std::size_t d = 0; d < corpus.documents.size(); ++d)
    corpus.documents[d].label =
        std::lower_bound(corpus.classes.begin(), corpus.classes.end(), sections[d]) - corpus.classes.begin();
  return corpus;
}

DocumentCorpus load_documents(const std::string& path, const DocumentOptions& options) {
  if (std::filesystem::is_directory(path))
    throw IOError("load_documents: '" + path + "' is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError("load_documents: cannot open '" + path + "'");
  return read_documents(in, path, options);
}

DocumentSplit stratified_split(const std::vector<Document>& documents, double test_fraction, Generator& gen) {
  if (!(test_fraction > 0.0 && test_fraction < 1.0))  // also refuses NaN
    throw ValueError("stratified_split: expected test_fraction in (0, 1), got " + std::to_string(test_fraction));
  std::map<std::int64_t, std::vector<std::size_t>> by_class;  // ordered: the draws do not depend on hashing
  for (std::size_t i = 0; i < documents.size(); ++i) by_class[documents[i].label].push_back(i);
  std::vector<bool> in_test(documents.size(), false);
  for (auto& [label, members] : by_class) {
    const std::size_t n = members.size();
    if (n < 2) continue;  // one document: train must see the class
    const auto share = static_cast<std::size_t>(std::llround(test_fraction * static_cast<double>(n)));
    const std::size_t n_test = std::clamp<std::size_t>(share, 1, n - 1);
    // The first n_test of a partial Fisher-Yates shuffle: the generator alone decides.
    for (std::size_t k = 0; k < n_test; ++k) {
      const auto pick = k + static_cast<std::size_t>(gen.randint(0, static_cast<std::int64_t>(n - k)));
      std::swap(members[k], members[pick]);
      in_test[members[k]] = true;
    }
  }
  DocumentSplit split;
  for (std::size_t i = 0; i < documents.size(); ++i) (in_test[i] ? split.test : split.train).push_back(documents[i]);
  return split;
}

DocumentBatch make_document_batch(const std::vector<Document>& documents, const std::vector<std::size_t>& indices,
                                  const Vocab& vocab) {
  check_indices(indices, documents.size());
  std::size_t S = 0, W = 0;
  for (std::size_t i : indices) {
    const Document& doc = documents[i];
    if (doc.sentences.empty())
      throw ValueError("make_document_batch: document " + std::to_string(i) + " ('" + doc.name + "') has no sentence");
    for (std::size_t s = 0; s < doc.sentences.size(); ++s) {
      // An empty sentence would be all padding: its word attention would have nothing to weigh.
      if (doc.sentences[s].empty())
        throw ValueError("make_document_batch: sentence " + std::to_string(s) + " of document " + std::to_string(i) +
                         " ('" + doc.name + "') is empty");
      W = std::max(W, doc.sentences[s].size());
    }
    S = std::max(S, doc.sentences.size());
  }
  const std::size_t B = indices.size();
  DocumentBatch batch;
  batch.words = Index(Shape{B, S, W}, Vocab::pad_id);
  batch.labels = Index(Shape{B}, 0);
  batch.word_counts.assign(B * S, 0);
  batch.indices = indices;
  for (std::size_t b = 0; b < B; ++b) {
    const Document& doc = documents[indices[b]];
    for (std::size_t s = 0; s < doc.sentences.size(); ++s) {
      const std::vector<std::int64_t> ids = vocab.encode(doc.sentences[s]);
      for (std::size_t w = 0; w < ids.size(); ++w) batch.words(b, s, w) = ids[w];
      batch.word_counts[b * S + s] = ids.size();
    }
    batch.sentence_counts.push_back(doc.sentences.size());
    batch.labels(b) = doc.label;
  }
  return batch;
}

std::vector<DocumentBatch> make_document_batches(const std::vector<Document>& documents, const Vocab& vocab,
                                                 const BatchOptions& options, Generator& gen) {
  std::vector<std::size_t> lengths;
  for (const Document& doc : documents) {  // the cells a document fills in [B, S, W]: its sentences x its longest
    std::size_t longest = 0;
    for (const Tokens& s : doc.sentences) longest = std::max(longest, s.size());
    lengths.push_back(doc.sentences.size() * longest);
  }
  std::vector<DocumentBatch> batches;
  for (const auto& indices : batch_order(lengths, options, gen))
    batches.push_back(make_document_batch(documents, indices, vocab));
  return batches;
}

std::vector<Tokens> document_sentences(const std::vector<Document>& documents) {
  std::vector<Tokens> out;
  for (const Document& doc : documents) out.insert(out.end(), doc.sentences.begin(), doc.sentences.end());
  return out;
}

}  // namespace attn::data
