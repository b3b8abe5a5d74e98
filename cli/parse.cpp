#include "parse.hpp"

#include <algorithm>

#include <fstream>

#include "../core/errors.hpp"
#include "progress.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace attn::cli {

namespace {

std::string quoted(const std::string& text) {
  std::string shown = text.size() > 60 ? text.substr(0, 60) + "..." : text;
  return "'" + shown + "'";
}

// The shortest text that reads back as x: 0.003, not 0.0030000000000000001.
std::string number(double x) {
  for (int precision = 1;; ++precision) {
    std::ostringstream os;
    os.precision(precision);
    os << x;
    if (precision >= 17 || std::strtod(os.str().c_str(), nullptr) == x) return os.str();
  }
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Decimal notation only: [-]digits[.digits][e[+-]digits] (no spaces, "+", hex, "nan" or "inf").
bool decimal_syntax(const std::string& s) {
  std::size_t i = 0, digits = 0;
  if (i < s.size() && s[i] == '-') ++i;
  for (; i < s.size() && is_digit(s[i]); ++i) ++digits;
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && is_digit(s[i]); ++i) ++digits;
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t exponent = 0;
    for (; i < s.size() && is_digit(s[i]); ++i) ++exponent;
    if (exponent == 0) return false;
  }
  return i == s.size();
}

bool in_bounds(double x, const Bounds& b) {
  return std::isfinite(x) && (b.min_open ? x > b.min : x >= b.min) && (b.max_open ? x < b.max : x <= b.max);
}

std::string count_range(std::uint64_t min, std::uint64_t max) {
  return "a whole number in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

}  // namespace

std::string Bounds::describe() const {
  const bool unbounded = max >= 1e300;
  if (unbounded) return std::string(min_open ? "> " : ">= ") + number(min);
  return std::string("in ") + (min_open ? "(" : "[") + number(min) + ", " + number(max) + (max_open ? ")" : "]");
}

std::uint64_t parse_count(const std::string& what, const std::string& text, std::uint64_t min, std::uint64_t max) {
  const std::string expected = what + ": expected " + count_range(min, max) + ", got " + quoted(text);
  if (text.empty()) throw ValueError(what + ": expected " + count_range(min, max) + ", got an empty value");
  std::uint64_t value = 0;
  for (char c : text) {
    if (!is_digit(c)) throw ValueError(expected);
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) throw ValueError(expected + " (too large)");
    value = value * 10 + digit;
  }
  if (value < min || value > max) throw ValueError(expected);
  return value;
}

double parse_real(const std::string& what, const std::string& text, Bounds bounds) {
  const std::string expected = what + ": expected a finite number " + bounds.describe() + ", got " +
                               (text.empty() ? std::string("an empty value") : quoted(text));
  if (!decimal_syntax(text)) throw ValueError(expected);
  errno = 0;
  const double value = std::strtod(text.c_str(), nullptr);
  if (errno == ERANGE && std::fabs(value) > 1) throw ValueError(expected + " (too large)");
  if (!in_bounds(value, bounds)) throw ValueError(expected);
  return value;
}


CLI::Option* add_count(CLI::App* cmd, const std::string& flag, std::uint64_t& value, std::uint64_t min,
                       std::uint64_t max, const std::string& help) {
  CLI::Option* option = cmd->add_option_function<std::string>(
      flag,
      [&value, flag, min, max](const std::string& text) {
        try {
          value = parse_count(flag, text, min, max);
        } catch (const ValueError& e) {
          throw CLI::ValidationError(e.what());
        }
      },
      help);
  option->default_str(std::to_string(value))->type_name("UINT");
  return option;
}

CLI::Option* add_real(CLI::App* cmd, const std::string& flag, double& value, Bounds bounds, const std::string& help) {
  CLI::Option* option = cmd->add_option_function<std::string>(
      flag,
      [&value, flag, bounds](const std::string& text) {
        try {
          value = parse_real(flag, text, bounds);
        } catch (const ValueError& e) {
          throw CLI::ValidationError(e.what());
        }
      },
      help);
  option->default_str(number(value))->type_name("FLOAT");
  return option;
}

void add_switch(CLI::App* cmd, const std::string& on, const std::string& off, bool& value, const std::string& help) {
  CLI::Option* yes = cmd->add_flag_callback(on, [&value] { value = true; }, help + " (default: on)");
  cmd->add_flag_callback(
      off,
      [&value, yes, on, off] {
        if (yes->count()) throw CLI::ValidationError(on + " and " + off + " contradict each other: give one of them");
        value = false;
      },
      "turn " + on + " off");
}

Fields::Fields(const nlohmann::json& object, std::string where) : object_(object), where_(std::move(where)) {
  if (!object_.is_object()) throw ValueError(where_ + ": expected a JSON object {...}, got " + object_.dump());
}

void Fields::fail(const std::string& key, const std::string& expected) const {
  std::string found = object_.contains(key) ? object_.at(key).dump() : std::string();
  if (found.size() > 60) found = found.substr(0, 60) + "...";
  throw ValueError(where_ + ": key '" + key + "' must be " + expected +
                   (object_.contains(key) ? ", got " + found : ", but it is missing"));
}

std::uint64_t Fields::count(const std::string& key, std::uint64_t min, std::uint64_t max) const {
  const std::string expected = count_range(min, max);
  if (!object_.contains(key)) fail(key, expected);
  const nlohmann::json& v = object_.at(key);
  // A JSON file holds non-negative integers as unsigned; a config built in code may hold them signed.
  const bool whole = v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
  if (whole) {
    const std::uint64_t x = v.get<std::uint64_t>();
    if (x >= min && x <= max) return x;
  }
  fail(key, expected);  // negative, fractional (2.5 is not 2), a string, ...
}

std::uint64_t Fields::count_or(const std::string& key, std::uint64_t fallback, std::uint64_t min,
                               std::uint64_t max) const {
  return object_.contains(key) ? count(key, min, max) : fallback;
}

double Fields::real(const std::string& key, Bounds bounds) const {
  const std::string expected = "a finite number " + bounds.describe();
  if (!object_.contains(key) || !object_.at(key).is_number()) fail(key, expected);
  const double x = object_.at(key).get<double>();
  if (!in_bounds(x, bounds)) fail(key, expected);
  return x;
}

double Fields::real_or(const std::string& key, double fallback, Bounds bounds) const {
  return object_.contains(key) ? real(key, bounds) : fallback;
}

bool Fields::boolean_or(const std::string& key, bool fallback) const {
  if (!object_.contains(key)) return fallback;
  if (!object_.at(key).is_boolean()) fail(key, "true or false");
  return object_.at(key).get<bool>();
}

std::string Fields::text(const std::string& key) const {
  if (!object_.contains(key) || !object_.at(key).is_string()) fail(key, "a string");
  return object_.at(key).get<std::string>();
}

std::string Fields::one_of(const std::string& key, std::initializer_list<const char*> choices) const {
  std::string list;
  for (const char* c : choices) list += (list.empty() ? "" : ", ") + std::string("\"") + c + "\"";
  if (object_.contains(key) && object_.at(key).is_string())
    for (const char* c : choices)
      if (object_.at(key).get<std::string>() == c) return c;
  fail(key, "one of " + list);
}

const nlohmann::json& Fields::object(const std::string& key) const {
  if (!object_.contains(key) || !object_.at(key).is_object()) fail(key, "a JSON object {...}");
  return object_.at(key);
}

const nlohmann::json& Fields::array(const std::string& key) const {
  if (!object_.contains(key) || !object_.at(key).is_array()) fail(key, "a JSON array [...]");
  return object_.at(key);
}

void Fields::only(const std::vector<std::string>& known) const {
  for (const auto& item : object_.items()) {
    bool found = false;
    for (const auto& k : known) found = found || k == item.key();
    if (found) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw ValueError(where_ + ": unknown key '" + item.key() + "' (keys: " + list + ")");
  }
}

}  // namespace attn::cli
