// Numbers the course's prose quotes: a cell publishes a value under a name, and
// the text refers to the name, never to a typed copy of the value.
//
//   attn::notebook::quote("ex5.concat_over_dot", ratio, ".2f");  // shows  ex5.concat_over_dot = 0.30
//   attn::notebook::quote("exact_match", 0.52, ".1%");            // shows  exact_match = 52.0%
//   attn::notebook::quote("vocab_size", 4004);                    // shows  vocab_size = 4,004
//
// A markdown cell (or a chapter page) then writes <!--q ex5.concat_over_dot-->0.30<!--/q-->,
// and tools/quotes.py fills in and checks the text between the markers from the
// published output (docs/quotes.md). Header-only, like display.hpp.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "xcpp/xdisplay.hpp"

namespace attn {
namespace notebook {

// The MIME type that carries a quoted value in a notebook's outputs.
inline constexpr const char* kQuoteMime = "application/vnd.attn.quote+json";

struct Quote {
  std::string name;
  std::string text;
};

inline nlohmann::json mime_bundle_repr(const Quote& q) {
  nlohmann::json bundle;
  bundle["text/plain"] = q.name + " = " + q.text;
  bundle[kQuoteMime] = {{"name", q.name}, {"text", q.text}};
  return bundle;
}

namespace detail {

// Names are what markdown refers to: letters, digits and . _ - only, so a
// marker <!--q name--> never needs escaping.
inline void check_name(const std::string& name) {
  bool ok = !name.empty();
  for (char c : name) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                         c == '.' || c == '_' || c == '-';
    ok = ok && allowed;
  }
  if (!ok)
    throw std::invalid_argument("quote: name '" + name +
                                "' must be non-empty and use only letters, digits, '.', '_' and '-'");
}

// "1234567" -> "1,234,567" (the sign, if any, stays in front).
inline std::string group_thousands(const std::string& digits) {
  std::size_t start = (!digits.empty() && digits[0] == '-') ? 1 : 0;
  std::size_t end = digits.find('.');
  if (end == std::string::npos) end = digits.size();
  std::string out = digits.substr(0, start);
  for (std::size_t i = start; i < end; ++i) {
    if (i > start && (end - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out + digits.substr(end);
}

// 2.2e-10 -> "2.2 × 10⁻¹⁰": readable in prose without LaTeX.
inline std::string times_ten(const std::string& mantissa, int exponent) {
  static const char* sup[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
  std::string e = exponent < 0 ? "⁻" : "";
  const std::string digits = std::to_string(exponent < 0 ? -exponent : exponent);
  for (char c : digits) e += sup[c - '0'];
  return mantissa + " × 10" + e;
}

}  // namespace detail

// Formats v by a small part of Python's format mini-language, which learners
// know from f-strings: [,][.N](f|%|e|g).
//   ".3f" 0.123   ".1%" 52.0%   ".2e" 2.22 × 10⁻¹⁰   ".3g" 0.000123 or 1.23 × 10⁻⁵   ",.0f" 4,004
inline std::string format(double v, const std::string& spec) {
  if (!std::isfinite(v)) throw std::invalid_argument("quote: the value is not finite (" + std::to_string(v) + ")");
  std::size_t i = 0;
  bool group = false;
  if (i < spec.size() && spec[i] == ',') { group = true; ++i; }
  int precision = 6;
  if (i < spec.size() && spec[i] == '.') {
    ++i;
    std::size_t digits = 0;
    precision = 0;
    while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9') { precision = precision * 10 + (spec[i++] - '0'); ++digits; }
    if (digits == 0 || precision > 17) throw std::invalid_argument("quote: bad precision in format '" + spec + "'");
  }
  if (i + 1 != spec.size())
    throw std::invalid_argument("quote: format '" + spec + "' is not [,][.N](f|%|e|g)");
  const char type = spec[i];
  char buf[64];
  std::string out;
  switch (type) {
    case 'f':
      std::snprintf(buf, sizeof buf, "%.*f", precision, v);
      out = buf;
      break;
    case '%':
      std::snprintf(buf, sizeof buf, "%.*f", precision, v * 100.0);
      out = std::string(buf);
      if (group) out = detail::group_thousands(out);
      return out + "%";
    case 'e': {
      std::snprintf(buf, sizeof buf, "%.*e", precision, v);
      const std::string s = buf;
      const std::size_t at = s.find('e');
      return detail::times_ten(s.substr(0, at), std::stoi(s.substr(at + 1)));
    }
    case 'g': {
      std::snprintf(buf, sizeof buf, "%.*g", precision == 0 ? 1 : precision, v);
      const std::string s = buf;
      const std::size_t at = s.find('e');
      if (at != std::string::npos) return detail::times_ten(s.substr(0, at), std::stoi(s.substr(at + 1)));
      out = s;
      break;
    }
    default:
      throw std::invalid_argument("quote: format '" + spec + "' is not [,][.N](f|%|e|g)");
  }
  // "-0.00" is 0 to a reader.
  if (out.find_first_not_of("-0.") == std::string::npos && out[0] == '-') out = out.substr(1);
  return group ? detail::group_thousands(out) : out;
}

// Publishes text under name: shows "name = text" in the cell's output, and
// carries the pair in a display message of type kQuoteMime.
inline Quote quote(const std::string& name, const std::string& text) {
  detail::check_name(name);
  if (text.empty() || text.find("<!--") != std::string::npos || text.find('\n') != std::string::npos)
    throw std::invalid_argument("quote: the text of '" + name + "' must be one non-empty line without '<!--'");
  Quote q{name, text};
  xcpp::display(q);
  return q;
}
inline Quote quote(const std::string& name, const char* text) { return quote(name, std::string(text)); }

// A floating-point value, formatted by spec (see format()).
inline Quote quote(const std::string& name, double value, const std::string& spec) {
  detail::check_name(name);
  return quote(name, format(value, spec));
}

// A count, with thousands separated by commas as the prose writes them.
template <class Int, std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>, int> = 0>
Quote quote(const std::string& name, Int count) {
  return quote(name, detail::group_thousands(std::to_string(count)));
}

}  // namespace notebook
}  // namespace attn
