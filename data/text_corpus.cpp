#include "text_corpus.hpp"

#include "vocab.hpp"

#include "../core/errors.hpp"

#include <algorithm>
#include <cmath>

namespace attn::data {

namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

// The bytes of the UTF-8 sequence that starts with `lead`, by its bit pattern (0: not a lead byte). A lead byte
// of an overlong form (0xC0, 0xC1) or past U+10FFFF (0xF5 to 0xF7) has a length all the same, and line_tokens
// refuses it: a character is never cut short, and no byte is skipped.
std::size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 0;
}

// A lead byte that starts no character of Unicode's UTF-8 (an overlong two-byte form, or past U+10FFFF).
bool forbidden_lead(unsigned char lead) { return lead == 0xC0 || lead == 0xC1 || lead >= 0xF5; }

}  // namespace

bool has_sentence(const std::string& line) {
  for (char c : line)
    if (!blank(c)) return true;
  return false;
}

std::string unit_name(TextUnit unit) { return unit == TextUnit::Words ? "words" : "characters"; }

TextUnit text_unit(const std::string& name) {
  if (name == "words") return TextUnit::Words;
  if (name == "characters") return TextUnit::Characters;
  throw ValueError("text_unit: '" + name + "' is not a unit of text (words or characters)");
}

Tokens line_tokens(const std::string& line, TextUnit unit) {
  Tokens out;
  if (unit == TextUnit::Words) {
    std::size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && blank(line[i])) ++i;
      const std::size_t start = i;
      while (i < line.size() && !blank(line[i])) ++i;
      if (i > start) out.push_back(line.substr(start, i - start));
    }
    return out;
  }
  if (!is_valid_utf8(line)) throw ValueError("line_tokens: the line is not valid UTF-8, so it cannot be cut into characters");
  for (std::size_t i = 0; i < line.size();) {
    const unsigned char lead = static_cast<unsigned char>(line[i]);
    const std::size_t n = sequence_length(lead);
    if (n == 0 || forbidden_lead(lead) || i + n > line.size())
      throw ValueError("line_tokens: the line is not valid UTF-8 (the byte " + std::to_string(int(lead)) + " at " +
                       std::to_string(i) + " starts no character), so it cannot be cut into characters");
    out.push_back(line.substr(i, n));
    i += n;
  }
  return out;
}

Tokens text_stream(const std::vector<std::string>& lines, TextUnit unit) {
  Tokens out;
  for (const std::string& line : lines) {
    if (!has_sentence(line)) continue;
    Tokens t = line_tokens(line, unit);
    out.insert(out.end(), t.begin(), t.end());
    out.push_back(Vocab::eos_token);
  }
  return out;
}

TextSplit split_text(const std::vector<std::string>& lines, TextUnit unit, double valid_fraction, double test_fraction) {
  if (!(valid_fraction >= 0 && valid_fraction < 1) || !(test_fraction >= 0 && test_fraction < 1) ||
      !(valid_fraction + test_fraction < 1))
    throw ValueError("split_text: the validation and test fractions must each be in [0, 1) and sum below 1, got " +
                     std::to_string(valid_fraction) + " and " + std::to_string(test_fraction));
  std::vector<std::string> kept;
  for (const std::string& line : lines)
    if (has_sentence(line)) kept.push_back(line);
  const std::size_t n = kept.size();
  // ceil(f n), where f n that rounds to a whole number is that number (0.07 * 100 is 7.000000000000001 in doubles).
  const auto share = [n](double f) {
    const double lines = f * double(n);
    const double whole = std::round(lines);
    return static_cast<std::size_t>(std::abs(lines - whole) < 1e-9 * std::max(1.0, lines) ? whole : std::ceil(lines));
  };
  const std::size_t n_test = share(test_fraction), n_valid = share(valid_fraction);
  if (n_test + n_valid >= n)
    throw ValueError("split_text: " + std::to_string(n) + " lines with a sentence are too few for a training, a " +
                     "validation and a test part (" + std::to_string(n_valid) + " and " + std::to_string(n_test) +
                     " lines held out)");
  TextSplit s;
  s.train_lines = n - n_valid - n_test;
  s.valid_lines = n_valid;
  s.test_lines = n_test;
  const auto part = [&](std::size_t from, std::size_t count) {
    return text_stream(std::vector<std::string>(kept.begin() + long(from), kept.begin() + long(from + count)), unit);
  };
  s.train = part(0, s.train_lines);
  s.valid = part(s.train_lines, n_valid);
  s.test = part(s.train_lines + n_valid, n_test);
  return s;
}

std::string tokens_text(const Tokens& tokens, TextUnit unit) {
  std::string out;
  bool line_start = true;
  for (const std::string& t : tokens) {
    if (t == Vocab::eos_token) {
      out += "\n";
      line_start = true;
      continue;
    }
    if (unit == TextUnit::Words && !line_start) out += " ";
    out += t;
    line_start = false;
  }
  return out;
}

}  // namespace attn::data
