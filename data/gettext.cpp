#include "gettext.hpp"

#include "../core/errors.hpp"
#include "corpus.hpp"
#include "vocab.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace attn::data {

namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t kMagic = 0x950412de;

// The 32-bit number at `offset`, in the file's byte order.
struct Reader {
  const std::string& bytes;
  const std::string& name;
  bool big_endian = false;

  std::uint32_t u32(std::size_t offset, const std::string& what) const {
    if (offset > bytes.size() || bytes.size() - offset < 4)
      throw IOError("read_mo: " + name + ": " + what + " at byte " + std::to_string(offset) +
                    " is past the end of the file (" + std::to_string(bytes.size()) + " bytes)");
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      const auto b = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[offset + i]));
      v |= big_endian ? b << (8 * (3 - i)) : b << (8 * i);
    }
    return v;
  }

  // String `index` of the table at `table`: its (length, offset) descriptor, then the bytes.
  std::string string(std::uint32_t table, std::uint32_t index, const char* table_name) const {
    const std::string what = std::string(table_name) + " entry " + std::to_string(index);
    const std::size_t at = std::size_t(table) + 8 * std::size_t(index);
    const std::uint32_t length = u32(at, what + "'s length"), offset = u32(at + 4, what + "'s offset");
    if (offset > bytes.size() || bytes.size() - offset < std::size_t(length) + 1)
      throw IOError("read_mo: " + name + ": " + what + " (" + std::to_string(length) + " bytes at " +
                    std::to_string(offset) + ") runs past the end of the file (" + std::to_string(bytes.size()) +
                    " bytes)");
    return bytes.substr(offset, length);
  }
};

// "a\0b\0c" -> {"a", "b", "c"}
std::vector<std::string> split_nul(const std::string& s) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == '\0') {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

std::string lower_ascii(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

// The charset=... of a header's Content-Type line.
std::string header_charset(const std::string& header) {
  const auto at = lower_ascii(header).find("charset=");
  if (at == std::string::npos) return "";
  const auto start = at + 8;
  const auto end = header.find_first_of(" ;\n", start);
  return header.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

bool is_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80; }
bool is_alnum(unsigned char c) { return is_letter(c) || (c >= '0' && c <= '9'); }

// printf (%s, %1$d, %-5.2f, %(name)s), brace ({0}, {name}), shell (${x}, $HOME) placeholders and markup.
bool has_placeholder(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char next = i + 1 < s.size() ? s[i + 1] : '\0';
    const auto n = static_cast<unsigned char>(next);
    const char after = i + 2 < s.size() ? s[i + 2] : '\0';  // "%.2f", "%.*s", but "100%." is text
    if (s[i] == '%' && next == '.' && (after == '*' || (after >= '0' && after <= '9'))) return true;
    if (s[i] == '%' && next != '\0' && next != ' ' && next != '.' && next != ',' && next != ')') return true;
    if (s[i] == '{' || s[i] == '}') return true;
    if (s[i] == '$' && (next == '{' || next == '(' || is_letter(n))) return true;
    if (s[i] == '<' && (is_letter(n) || next == '/' || next == '!')) return true;
    if (s[i] == '&' && is_letter(n)) {  // &amp; &lt; &#39; (an accelerator "&Open" has no ';')
      std::size_t j = i + 1;
      while (j < s.size() && is_alnum(static_cast<unsigned char>(s[j]))) ++j;
      if (j < s.size() && s[j] == ';') return true;
    }
    if (s[i] == '&' && next == '#') return true;
  }
  return false;
}

// ISO-8859-1 bytes as UTF-8 (each byte is the code point of the same number).
std::string latin1_to_utf8(const std::string& s) {
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x80) out += ch;
    else out += {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
  }
  return out;
}

}  // namespace

MoCatalog parse_mo(const std::string& bytes, const std::string& name) {
  Reader r{bytes, name};
  if (bytes.size() < 20)
    throw IOError("read_mo: " + name + ": " + std::to_string(bytes.size()) +
                  " bytes, too short for a .mo header (20 bytes)");
  const std::uint32_t magic = r.u32(0, "the magic number");
  if (magic != kMagic) {
    r.big_endian = true;
    if (r.u32(0, "the magic number") != kMagic) {
      std::ostringstream hex;
      hex << std::hex << magic;
      throw IOError("read_mo: " + name + ": not a .mo file (magic number 0x" + hex.str() +
                    ", expected 0x950412de in either byte order)");
    }
  }
  const std::uint32_t revision = r.u32(4, "the revision");
  if ((revision >> 16) > 1)
    throw IOError("read_mo: " + name + ": revision " + std::to_string(revision >> 16) +
                  " of the format (only 0 and 1 are known)");
  const std::uint32_t count = r.u32(8, "the number of strings");
  const std::uint32_t originals = r.u32(12, "the offset of the originals"), translations = r.u32(16, "the offset of the translations");
  if (std::size_t(count) * 8 > bytes.size())
    throw IOError("read_mo: " + name + ": " + std::to_string(count) + " strings cannot fit in " +
                  std::to_string(bytes.size()) + " bytes");
  MoCatalog catalog;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::string original = r.string(originals, i, "original"), translation = r.string(translations, i, "translation");
    if (original.empty()) {  // the header
      catalog.header = translation;
      catalog.charset = header_charset(translation);
      continue;
    }
    MoEntry e;
    const auto eot = original.find('\x04');
    if (eot != std::string::npos) {
      e.context = original.substr(0, eot);
      original.erase(0, eot + 1);
    }
    const std::vector<std::string> ids = split_nul(original);
    e.msgid = ids[0];
    if (ids.size() > 1) e.msgid_plural = ids[1];
    e.msgstr = split_nul(translation);
    catalog.entries.push_back(std::move(e));
  }
  return catalog;
}

MoCatalog read_mo(const std::string& path) {
  if (fs::is_directory(path)) throw IOError("read_mo: '" + path + "' is a directory, not a .mo file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError("read_mo: cannot open '" + path + "'");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return parse_mo(bytes.str(), path);
}

std::vector<std::string> mo_files(const std::string& locale_dir, const std::string& lang) {
  std::vector<std::string> files;
  const fs::path dir = fs::path(locale_dir) / lang / "LC_MESSAGES";
  std::error_code error;
  if (!fs::is_directory(dir, error)) return files;
  for (const auto& entry : fs::directory_iterator(dir, error))
    if (entry.path().extension() == ".mo" && entry.is_regular_file(error)) files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string clean_message(const std::string& message, std::string& reason) {
  reason.clear();
  if (!is_valid_utf8(message)) return reason = "not UTF-8", "";
  std::string s;
  for (const std::string& c : split_chars(message))  // no-break spaces (French "fichier :") are spaces
    s += c == "\xC2\xA0" || c == "\xE2\x80\xAF" ? std::string(" ") : c;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();  // "Cannot open\n": one line still
  if (s.find('\n') != std::string::npos) return reason = "multi-line", "";
  if (has_placeholder(s)) return reason = "format", "";
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == '\\' || c == 0x7f) return reason = "not text", "";
  // Identifiers and command-line options: "bfd_mach_o_symtab", "-d, --delete USER".
  if (std::count(s.begin(), s.end(), '_') > 1 || s.find('|') != std::string::npos) return reason = "code", "";
  for (const std::string& word : split_whitespace(s))
    if (word.size() > 1 && word[0] == '-' && (word[1] == '-' || is_alnum(static_cast<unsigned char>(word[1]))))
      return reason = "code", "";
  // Keyboard accelerators: "_Open", "Save _As", "&Open", "~Open"; "&&" is a literal "&".
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto next = static_cast<unsigned char>(i + 1 < s.size() ? s[i + 1] : ' ');
    if ((s[i] == '_' || s[i] == '&' || s[i] == '~') && is_alnum(next)) continue;
    if (s[i] == '&' && next == '&') ++i;
    out += s[i];
  }
  // A label's trailing ":" or "..." says "more follows" in a user interface, not in a sentence.
  for (bool again = true; again;) {
    again = false;
    while (!out.empty() && out.back() == ' ') out.pop_back();
    for (const std::string tail : {":", "...", "\xE2\x80\xA6"})  // "…"
      if (out.size() >= tail.size() && out.compare(out.size() - tail.size(), tail.size(), tail) == 0) {
        out.erase(out.size() - tail.size());
        again = true;
      }
  }
  const std::string collapsed = join(split_whitespace(out), " ");
  if (std::none_of(collapsed.begin(), collapsed.end(), [](char c) { return is_letter(static_cast<unsigned char>(c)); }))
    return reason = "not text", "";
  return collapsed;
}

GettextCorpus gettext_corpus(const std::vector<std::string>& files, const GettextOptions& options) {
  if (options.min_words > options.max_words)
    throw ValueError("gettext_corpus: min_words (" + std::to_string(options.min_words) + ") is above max_words (" +
                     std::to_string(options.max_words) + ")");
  GettextCorpus corpus;
  std::set<std::string> seen;  // lowercased sources: "Open File" and "Open file" are one
  for (const std::string& file : files) {
    MoCatalog catalog;
    try {
      catalog = read_mo(file);
    } catch (const IOError& e) {
      corpus.skipped_files.push_back(e.what());
      continue;
    }
    const std::string charset = lower_ascii(catalog.charset);
    const bool latin1 = charset == "iso-8859-1" || charset == "latin1";
    if (!charset.empty() && charset != "utf-8" && charset != "utf8" && !latin1) {
      corpus.skipped_files.push_back(file + ": charset " + catalog.charset + ", neither UTF-8 nor ISO-8859-1");
      continue;
    }
    if (latin1)
      for (MoEntry& e : catalog.entries) {
        e.msgid = latin1_to_utf8(e.msgid);
        for (std::string& t : e.msgstr) t = latin1_to_utf8(t);
      }
    ++corpus.catalogs;
    for (const MoEntry& e : catalog.entries) {
      ++corpus.entries;
      std::string reason;
      if (!e.msgid_plural.empty()) {
        ++corpus.dropped["plural"];
        continue;
      }
      if (e.msgstr.empty() || e.msgstr[0].empty()) {
        ++corpus.dropped["untranslated"];
        continue;
      }
      const std::string src = clean_message(e.msgid, reason);
      if (src.empty()) {
        ++corpus.dropped[reason];
        continue;
      }
      const std::string tgt = clean_message(e.msgstr[0], reason);
      if (tgt.empty()) {
        ++corpus.dropped[reason];
        continue;
      }
      if (src == tgt) {
        ++corpus.dropped["untranslated"];
        continue;
      }
      const std::size_t n_src = split_whitespace(src).size(), n_tgt = split_whitespace(tgt).size();
      if (std::min(n_src, n_tgt) < options.min_words) {
        ++corpus.dropped["too short"];
        continue;
      }
      if (std::max(n_src, n_tgt) > options.max_words) {
        ++corpus.dropped["too long"];
        continue;
      }
      if (!seen.insert(to_lower(src)).second) {
        ++corpus.dropped["duplicate"];
        continue;
      }
      corpus.pairs.emplace_back(src, tgt);
    }
  }
  return corpus;
}

}  // namespace attn::data
