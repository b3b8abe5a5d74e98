// A text file a user names (a language model's text, a corpus), read once: its bytes give its lines and
// the checksum a run records in the same pass, so the text trained on is exactly the text checksummed,
// and a file that is not UTF-8 lines of printable text is refused by what it is, naming the file and line.
//
//   TextFile f = read_text_file("book.txt", TextUnit::Words);
//   f.lines;      // without their ends (LF or CR LF), a leading byte-order mark dropped
//   f.checksum;   // FNV-1a 64 of every byte, 16 hex digits
//
// The checks, in the order a reader meets them:
//   - the file is UTF-16 or UTF-32 (a byte-order mark, or NUL at every other / three of four bytes), or
//     its lines end with CR alone: IOError naming what it is and a command that converts it;
//   - (words) a run of over kMaxWordBytes bytes without a blank: no word of a sentence, IOError at its line;
//   - a line that is not valid UTF-8, or holds a control character (TAB, vertical tab and form feed are
//     blanks): IOError at its line;
//   - (words) a line holding attn's own marks <pad>, <bos>, <eos>: IOError at its line.
#pragma once

#include "text_corpus.hpp"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::data {

struct TextFile {
  std::vector<std::string> lines;
  std::string checksum;  // FNV-1a 64 of the file's bytes, as 16 hex digits
};

// `fraction`, when given, is the share of the file read so far (0..1), for another thread's progress bar.
TextFile read_text_file(const std::string& path, TextUnit unit, std::atomic<double>* fraction = nullptr);

// FNV-1a, 64 bits, of bytes: a cheap fingerprint that tells a changed or damaged file (not a defence
// against forgery), and its 16 hex digits.
std::uint64_t fnv1a64(const char* bytes, std::size_t n, std::uint64_t hash = 14695981039346656037ull);
std::string hex64(std::uint64_t x);

// The encoding checks above, on a file's first bytes (64 KiB are plenty): IOError naming `path`.
void check_text_encoding(const std::string& head, const std::string& path);

// A word (a run of bytes between blanks) is at most kMaxWordBytes long: a longer one is a pasted blob or a
// line of marks, and splitting it off its punctuation would cost seconds to minutes. IOError naming `path`
// and the line (`first_line` is the number of the line `bytes` begins in).
constexpr std::size_t kMaxWordBytes = 4096;
void check_word_lengths(const std::string& bytes, const std::string& path, std::size_t first_line = 1);

// Valid UTF-8 as JSON files store it (config.json, vocab.json): the test nlohmann::json applies.
bool valid_utf8(const std::string& text);

// A path as the shell reads it back, for the commands a message suggests: quoted when it holds anything
// but plain characters ("runs/a" stays, "my runs/a" becomes 'my runs/a').
std::string shell_word(const std::string& word);

// The first control character of `text` (ESC, TAB, a newline, NUL...) named as a reader knows it, or "".
std::string control_character(const std::string& text);

}  // namespace attn::data
