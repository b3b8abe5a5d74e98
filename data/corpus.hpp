// Real parallel corpora: one sentence pair per line, source and target
// separated by a tab, as in the common sentence-pair collections
// (Tatoeba / manythings.org files: "Go.<TAB>Va !<TAB>CC-BY 2.0 ..."):
//
//   Corpus c = load_tsv("fra.txt", {/*char_level=*/false, /*lowercase=*/true, /*max_length=*/10});
//   c.pairs[0].src == {"go."}, c.pairs[0].tgt == {"va", "!"}
//
// Columns after the second are ignored. Lines must be UTF-8; a Windows line
// end (\r\n) and a byte-order mark at the start of the file are accepted.
// Completely empty lines are skipped silently. A malformed line (no tab, a side
// that is empty or only blanks, bytes that are not UTF-8, a control byte other than
// the tab, such as NUL or ESC) throws an IOError
// naming the file and the line number, or, with skip_malformed, is skipped
// and counted.
#pragma once

#include "example.hpp"

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

namespace attn::data {

struct CorpusOptions {
  bool char_level = false;      // one token per character (spaces included) instead of per word
  bool lowercase = false;       // before tokenizing (ASCII and accented Latin letters)
  std::size_t max_length = 0;   // drop pairs with a side longer than this many tokens (0: no limit)
  bool skip_malformed = false;  // count and skip malformed lines instead of throwing
  bool split_punctuation = false;  // words: split_words() instead of split_whitespace()
};

struct Corpus {
  std::vector<Example> pairs;               // no alignment: a real corpus has none
  std::size_t lines = 0;                    // lines in the file
  std::size_t malformed = 0;                // skipped as malformed (with skip_malformed)
  std::vector<std::size_t> malformed_lines; // their line numbers, counting from 1
  std::size_t too_long = 0;                 // dropped by max_length
};

// Reads a file; IOError if it cannot be opened.
Corpus load_tsv(const std::string& path, const CorpusOptions& options = {});
// Reads from a stream; `name` is what error messages call it.
Corpus read_tsv(std::istream& in, const std::string& name, const CorpusOptions& options = {});

// Words with punctuation as tokens of their own, and French elisions cut after
// the apostrophe, so that "file." and "file" are one word:
//   split_words("Cannot open file.") == {"Cannot", "open", "file", "."}
//   split_words("Impossible d'ouvrir « x »...") == {"Impossible", "d'", "ouvrir", "«", "x", "»", "..."}
// Only punctuation at the start or end of a word is cut ("3.5", "e-mail" stay whole);
// a run of the same mark ("...", "!!") is one token.
Tokens split_words(const std::string& text);

// Lowercase for ASCII and the Latin-1 letters of Western European languages
// (É -> é, Ç -> ç, Œ -> œ, Ÿ -> ÿ); every other character is kept as it is.
std::string to_lower(const std::string& text);

}  // namespace attn::data
