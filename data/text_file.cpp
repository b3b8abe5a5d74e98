#include "text_file.hpp"

#include "../core/errors.hpp"
#include "vocab.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace attn::data {

std::string shell_word(const std::string& word) {
  bool plain = !word.empty();
  for (char c : word)
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || std::string("/._-+=:,@").find(c) != std::string::npos);
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::uint64_t fnv1a64(const char* bytes, std::size_t n, std::uint64_t hash) {
  for (std::size_t i = 0; i < n; ++i) hash = (hash ^ static_cast<unsigned char>(bytes[i])) * 1099511628211ull;
  return hash;
}

std::string hex64(std::uint64_t x) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
  return buf;
}

bool valid_utf8(const std::string& text) {
  try {  // exactly the test nlohmann::json applies when it writes a file
    (void)nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

std::string control_character(const std::string& text) {
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) continue;
    switch (u) {
      case 0x00: return "NUL (\\u0000)";
      case 0x09: return "a TAB";
      case 0x0a: return "a newline";
      case 0x0d: return "a carriage return";
      case 0x1b: return "ESC (\\u001b, a terminal escape)";
      default: {
        char code[8];
        std::snprintf(code, sizeof code, "0x%02x", u);
        return std::string("the control character ") + code;
      }
    }
  }
  return "";
}

void check_text_encoding(const std::string& head, const std::string& path) {
  auto starts = [&head](const char* mark, std::size_t n) { return head.size() >= n && head.compare(0, n, mark, n) == 0; };
  // (what the file is, why attn says so, iconv's name for it)
  std::string encoding, why, iconv;
  if (starts("\xFF\xFE\x00\x00", 4) || starts("\x00\x00\xFE\xFF", 4)) encoding = iconv = "UTF-32";
  else if (starts("\xFF\xFE", 2) || starts("\xFE\xFF", 2)) encoding = iconv = "UTF-16";
  if (!encoding.empty()) why = "it begins with a byte-order mark";
  else if (head.size() >= 8) {
    // Where the NUL bytes fall: ASCII text in UTF-16 has one at every other offset, in UTF-32 three of every four;
    // big-endian puts them before the character's byte, little-endian after.
    std::size_t at[4] = {0, 0, 0, 0};
    for (std::size_t i = 0; i < head.size(); ++i)
      if (head[i] == '\0') ++at[i % 4];
    const std::size_t quarter = head.size() / 4, nuls = at[0] + at[1] + at[2] + at[3];
    if (nuls * 16 < head.size()) {
    } else if (at[1] * 2 >= quarter && at[2] * 2 >= quarter && (at[3] * 8 < quarter || at[0] * 8 < quarter)) {
      encoding = "UTF-32";
      iconv = at[0] * 8 < quarter ? "UTF-32LE" : "UTF-32BE";
      why = "three of every four bytes are NUL";
    } else if (std::max(at[0] + at[2], at[1] + at[3]) * 4 >= head.size() &&
               std::min(at[0] + at[2], at[1] + at[3]) * 16 < head.size()) {
      encoding = "UTF-16";
      iconv = at[0] + at[2] > at[1] + at[3] ? "UTF-16BE" : "UTF-16LE";
      why = "every other byte is NUL";
    }
  }
  if (!encoding.empty())
    throw IOError(path + ": the file is " + encoding + " text (" + why + "); attn reads UTF-8: convert it first, e.g. "
                  "iconv -f " + iconv + " -t UTF-8 " + shell_word(path) + " > converted.txt");
  if (head.find('\r') != std::string::npos && head.find('\n') == std::string::npos)
    throw IOError(path + ": its lines end with CR alone (a file from an old Mac); attn reads lines ending in LF or "
                         "CR LF: convert it first, e.g. tr '\\r' '\\n' < " + shell_word(path) + " > converted.txt");
}

void check_word_lengths(const std::string& bytes, const std::string& path, std::size_t first_line) {
  std::size_t line = first_line, word = 0;
  for (const char c : bytes) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      word = 0;
      if (c == '\n') ++line;
    } else if (++word > kMaxWordBytes) {
      throw IOError(path + ":" + std::to_string(line) + ": holds a word of over " + std::to_string(kMaxWordBytes) +
                    " bytes without a blank; a line holds sentences, whose words are shorter: correct the file "
                    "(or split the line)");
    }
  }
}

TextFile read_text_file(const std::string& path, TextUnit unit, std::atomic<double>* fraction) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw IOError(path + ": is a folder, not a text file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError("cannot read the text file '" + path + "': " + std::strerror(errno));
  // The size only for the progress bar: a pipe (attn score <(zcat book.gz)) has none and cannot seek.
  std::streamoff size = -1;
  if (std::filesystem::is_regular_file(path, error)) {
    in.seekg(0, std::ios::end);
    size = in.tellg();
    in.seekg(0, std::ios::beg);
  }
  // One read: the bytes checksummed are the bytes the lines are made of.
  std::string bytes;
  if (size > 0) bytes.reserve(static_cast<std::size_t>(size));
  std::vector<char> buffer(1 << 16);
  std::uint64_t hash = fnv1a64(nullptr, 0);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    const std::size_t n = static_cast<std::size_t>(in.gcount());
    hash = fnv1a64(buffer.data(), n, hash);
    bytes.append(buffer.data(), n);
    if (fraction && size > 0) fraction->store(std::min(1.0, double(bytes.size()) / double(size)));
  }
  if (in.bad()) throw IOError(path + ": read error");
  TextFile out;
  out.checksum = hex64(hash);
  check_text_encoding(bytes.substr(0, 64 * 1024), path);  // UTF-16 or CR-only named as such, not by a first odd byte
  if (unit == TextUnit::Words) check_word_lengths(bytes, path);
  std::size_t begin = 0;
  for (std::size_t number = 1; begin < bytes.size(); ++number) {
    std::size_t end = bytes.find('\n', begin);
    if (end == std::string::npos) end = bytes.size();
    std::string line = bytes.substr(begin, end - begin);
    begin = end + 1;
    if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // byte-order mark
    if (!line.empty() && line.back() == '\r') line.pop_back();                  // CRLF line ends
    const std::string at = path + ":" + std::to_string(number) + ": ";
    if (!valid_utf8(line)) throw IOError(at + "not valid UTF-8 text; a language model reads UTF-8 text (iconv converts other encodings)");
    std::string without_blanks = line;  // TAB, vertical tab and form feed are blanks (text_corpus.hpp)
    for (char& c : without_blanks)
      if (c == '\t' || c == '\v' || c == '\f') c = ' ';
    const std::string bad = control_character(without_blanks);
    if (!bad.empty())
      throw IOError(at + "holds " + bad + "; a text to learn is printable: remove the control characters from the file");
    if (unit == TextUnit::Words)  // attn's own marks: read as ids of their own, they would not be words
      for (const std::string& word : line_tokens(line, unit))
        if (word == Vocab::pad_token || word == Vocab::bos_token || word == Vocab::eos_token)
          throw IOError(at + "holds the word " + word + ", one of attn's marks (" + Vocab::eos_token + " ends each line, " +
                        Vocab::pad_token + " and " + Vocab::bos_token + " are no text): remove it or write it otherwise (" +
                        Vocab::unk_token + " may stay: it reads as the unknown word)");
    out.lines.push_back(std::move(line));
  }
  if (fraction) fraction->store(1.0);
  return out;
}

}  // namespace attn::data
