// Plain text for a language model: a UTF-8 file of lines, read as words (chapter 20's pointer
// sentinel reads words) or as characters (chapter 15's character model), each line ended by <eos>,
// cut into a training, a validation and a test part by position, as the Penn Treebank and WikiText
// come: the first lines train, the next ones choose the epoch, the last ones are held out.
//
//   std::vector<std::string> lines = ...;                      // the file's lines, without their ends
//   TextSplit split = split_text(lines, TextUnit::Words, 0.1, 0.1);
//   Vocab v = Vocab::build({split.train}, 2);                   // words seen twice or more
//   std::vector<Tokens> chunks = lm_chunks({split.train}, 64);  // language_model.hpp
//
// A word is a run of non-blank bytes (blanks: space, TAB, vertical tab, form feed); a character is a
// Unicode code point, its UTF-8 bytes kept together. A line of blanks only is no sentence: it is left
// out, and gives no <eos>.
#pragma once

#include "example.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace attn::data {

enum class TextUnit { Words, Characters };

// "words" or "characters"; text_unit() reads them back (ValueError naming the text otherwise).
std::string unit_name(TextUnit unit);
TextUnit text_unit(const std::string& name);

// The tokens of one line: its words, or its code points (the line must be valid UTF-8: ValueError otherwise).
Tokens line_tokens(const std::string& line, TextUnit unit);

// Whether a line holds a sentence: any byte that is not a blank. A line of blanks only is left out.
bool has_sentence(const std::string& line);

// The tokens of lines, each line's followed by "<eos>" (lines of blanks left out).
Tokens text_stream(const std::vector<std::string>& lines, TextUnit unit);

// The three parts of a text, each one stream (text_stream of its lines).
struct TextSplit {
  Tokens train, valid, test;
  std::size_t train_lines = 0, valid_lines = 0, test_lines = 0;  // lines with a sentence in each
};

// The lines with a sentence, in order: the last test_fraction of them (rounded up) are the test part,
// the valid_fraction before them (rounded up) the validation part, the rest train. ValueError unless
// both fractions are in [0, 1) and their sum below 1, or if a part with a non-zero fraction, or the
// training part, would hold no line.
TextSplit split_text(const std::vector<std::string>& lines, TextUnit unit, double valid_fraction, double test_fraction);

// Tokens as text again: words joined by spaces, characters joined as they are; "<eos>" ends a line.
std::string tokens_text(const Tokens& tokens, TextUnit unit);

}  // namespace attn::data
