#include "corpus.hpp"

#include "../core/errors.hpp"
#include "vocab.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <istream>

namespace attn::data {

namespace {

// A code point as UTF-8 bytes.
std::string utf8(std::uint32_t cp) {
  if (cp < 0x80) return std::string(1, static_cast<char>(cp));
  if (cp < 0x800) return {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
  return {static_cast<char>(0xE0 | (cp >> 12)), static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
          static_cast<char>(0x80 | (cp & 0x3F))};
}

std::string trim(const std::string& s) {
  const char* blanks = " \t\r\n\f\v";
  const auto first = s.find_first_not_of(blanks);
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(blanks) - first + 1);
}

// Marks cut off the start or the end of a word.
bool is_punctuation(const std::string& c) {
  static const std::vector<std::string> marks = {".", ",", ";", ":", "!", "?", "(", ")", "[", "]", "\"", "'",
                                                 "\xC2\xAB", "\xC2\xBB", "\xE2\x80\xA6", "\xE2\x80\x9C",
                                                 "\xE2\x80\x9D", "\xE2\x80\x98", "\xE2\x80\x99", "\xC2\xBF",
                                                 "\xC2\xA1"};  // « » … “ ” ‘ ’ ¿ ¡
  return std::find(marks.begin(), marks.end(), c) != marks.end();
}

// French words elided before a vowel: "d'ouvrir", "l'archive", "qu'il".
bool is_elision(const std::string& lowered) {
  for (const char* w : {"c", "d", "j", "l", "m", "n", "s", "t", "qu", "jusqu", "lorsqu", "puisqu", "quoiqu"})
    if (lowered == w) return true;
  return false;
}

}  // namespace

Tokens split_words(const std::string& text) {
  Tokens out;
  for (const std::string& word : split_whitespace(text)) {
    const Tokens chars = split_chars(word);
    std::size_t first = 0, last = chars.size();  // the word proper is chars[first, last)
    Tokens lead, trail;
    while (first < last && is_punctuation(chars[first])) {
      std::size_t run = first + 1;
      while (run < last && chars[run] == chars[first]) ++run;
      lead.push_back(join(Tokens(chars.begin() + long(first), chars.begin() + long(run)), ""));
      first = run;
    }
    while (last > first && is_punctuation(chars[last - 1])) {
      std::size_t run = last - 1;
      while (run > first && chars[run - 1] == chars[last - 1]) --run;
      trail.insert(trail.begin(), join(Tokens(chars.begin() + long(run), chars.begin() + long(last)), ""));
      last = run;
    }
    out.insert(out.end(), lead.begin(), lead.end());
    // An elision: the letters up to the first apostrophe, the apostrophe kept with them.
    for (std::size_t i = first; i < last; ++i)
      if ((chars[i] == "'" || chars[i] == "\xE2\x80\x99") && i + 1 < last &&
          is_elision(to_lower(join(Tokens(chars.begin() + long(first), chars.begin() + long(i)), "")))) {
        out.push_back(join(Tokens(chars.begin() + long(first), chars.begin() + long(i + 1)), ""));
        first = i + 1;
        break;
      }
    if (first < last) out.push_back(join(Tokens(chars.begin() + long(first), chars.begin() + long(last)), ""));
    out.insert(out.end(), trail.begin(), trail.end());
  }
  return out;
}

std::string to_lower(const std::string& text) {
  std::string out;
  for (const std::string& c : split_chars(text)) {
    if (c.size() == 1) {
      out += (c[0] >= 'A' && c[0] <= 'Z') ? static_cast<char>(c[0] - 'A' + 'a') : c[0];
      continue;
    }
    if (c.size() != 2) {
      out += c;
      continue;
    }
    std::uint32_t cp = ((static_cast<unsigned char>(c[0]) & 0x1Fu) << 6) | (static_cast<unsigned char>(c[1]) & 0x3Fu);
    if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) cp += 0x20;  // À..Þ -> à..þ (0xD7 is ×)
    else if (cp == 0x152) cp = 0x153;                         // Œ -> œ
    else if (cp == 0x178) cp = 0xFF;                          // Ÿ -> ÿ
    out += utf8(cp);
  }
  return out;
}

Corpus read_tsv(std::istream& in, const std::string& name, const CorpusOptions& options) {
  Corpus corpus;
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t number = ++corpus.lines;
    if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // byte-order mark
    if (!line.empty() && line.back() == '\r') line.pop_back();                 // Windows line end
    if (line.empty()) continue;
    // What is wrong with the line, if anything.
    std::string problem;
    const auto tab = line.find('\t');
    std::string src, tgt;
    // A control byte (NUL, ESC, a CR inside the line...) is no text: the tab alone separates.
    const auto control = std::find_if(line.begin(), line.end(), [](char ch) {
      const auto c = static_cast<unsigned char>(ch);
      return (c < 0x20 && c != '\t') || c == 0x7f;
    });
    if (control != line.end()) {
      const auto c = static_cast<unsigned char>(*control);
      char code[8];
      std::snprintf(code, sizeof code, "0x%02x", c);
      problem = std::string("a control character (") + (c == 0 ? "NUL" : code) + ") at byte " +
                std::to_string(control - line.begin() + 1) + " of the line";
    } else if (!is_valid_utf8(line)) {
      problem = "not valid UTF-8";
    } else if (tab == std::string::npos) {
      problem = "no tab between source and target";
    } else {
      src = trim(line.substr(0, tab));
      tgt = trim(line.substr(tab + 1, line.find('\t', tab + 1) - tab - 1));  // extra columns ignored
      if (src.empty()) problem = "empty source";
      else if (tgt.empty()) problem = "empty target";
    }
    if (!problem.empty()) {
      if (!options.skip_malformed)
        throw IOError("load_tsv: " + name + ":" + std::to_string(number) + ": " + problem +
                      " (expected 'source<TAB>target'; skip_malformed skips such lines)");
      ++corpus.malformed;
      corpus.malformed_lines.push_back(number);
      continue;
    }
    if (options.lowercase) {
      src = to_lower(src);
      tgt = to_lower(tgt);
    }
    Example pair;
    const auto tokens = [&](const std::string& side) {
      return options.char_level ? split_chars(side) : options.split_punctuation ? split_words(side) : split_whitespace(side);
    };
    pair.src = tokens(src);
    pair.tgt = tokens(tgt);
    if (options.max_length > 0 && (pair.src.size() > options.max_length || pair.tgt.size() > options.max_length)) {
      ++corpus.too_long;
      continue;
    }
    corpus.pairs.push_back(std::move(pair));
  }
  if (in.bad()) throw IOError("load_tsv: " + name + ": read error after line " + std::to_string(corpus.lines));
  return corpus;
}

Corpus load_tsv(const std::string& path, const CorpusOptions& options) {
  if (std::filesystem::is_directory(path)) throw IOError("load_tsv: '" + path + "' is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError("load_tsv: cannot open '" + path + "'");
  return read_tsv(in, path, options);
}

}  // namespace attn::data
