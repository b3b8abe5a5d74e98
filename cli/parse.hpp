// Strict reading of what users type: flags on the command line (--steps 2000)
// and the fields of a run's config.json. A number is read whole, in range and
// finite: "12abc", " -5", "", "99999999999999999999", "nan", "inf" are errors that
// name the flag or the key and say what was expected. Nothing is clamped,
// wrapped or replaced by a default.
//
//   add_count(cmd, "--steps", o->steps, 1, kMaxSteps, "optimizer steps in all");
//   add_real(cmd, "--lr", o->lr, Bounds::positive(), "Adam's learning rate");
//   Fields train(config.at("train"), "run/checkpoint/config.json: train");
//   std::size_t steps = train.count("steps", 1, kMaxSteps);
#pragma once

#include "../data/text_file.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace attn::cli {

constexpr std::uint64_t kMaxSteps = 1000000000;        // a billion updates: far past any run of the course
constexpr std::uint64_t kMaxExamples = 10000000;       // generated examples held in memory at once
constexpr std::uint64_t kMaxBatch = 65536;
constexpr std::uint64_t kMaxSeed = UINT64_MAX;

// A whole number written with digits only (no sign, no space), within [min, max].
// `what` names the flag or key in the error: "--steps: expected a whole number in [1, 1000000000], got '-5'".
std::uint64_t parse_count(const std::string& what, const std::string& text, std::uint64_t min, std::uint64_t max);

// A finite decimal number ("3e-3", "0.5", "-1"), within the bounds.
struct Bounds {
  double min, max;
  bool min_open = false, max_open = false;  // min < x rather than min <= x
  static Bounds positive() { return {0.0, 1e300, true, false}; }
  static Bounds non_negative() { return {0.0, 1e300, false, false}; }
  std::string describe() const;  // "> 0", "in [0, 1)"
};
double parse_real(const std::string& what, const std::string& text, Bounds bounds);

// Text must be valid UTF-8 to be stored in a JSON file (config.json, vocab.json): data/text_file.hpp.
using data::valid_utf8;

// CLI11 options read by the functions above; a bad value is a CLI::ValidationError
// naming the flag (exit status 2). `value` keeps its default when the flag is absent.
CLI::Option* add_count(CLI::App* cmd, const std::string& flag, std::uint64_t& value, std::uint64_t min,
                       std::uint64_t max, const std::string& help = "");
CLI::Option* add_real(CLI::App* cmd, const std::string& flag, double& value, Bounds bounds,
                      const std::string& help = "");

// A setting that is on unless turned off: two flags, `on` and `off` ("--lowercase", "--no-lowercase"), each
// with its own line in --help (one negatable flag shows as "--lowercase,--no-lowercase{false}"). Both: an error.
void add_switch(CLI::App* cmd, const std::string& on, const std::string& off, bool& value, const std::string& help);

// The fields of one JSON object, read strictly. `where` names it in errors:
// "run/checkpoint/config.json: train". A missing required key, a value of the
// wrong type or out of range is a ValueError naming where, the key, what was
// expected and what was found.
class Fields {
 public:
  Fields(const nlohmann::json& object, std::string where);

  bool has(const std::string& key) const { return object_.contains(key); }
  std::uint64_t count(const std::string& key, std::uint64_t min, std::uint64_t max) const;
  std::uint64_t count_or(const std::string& key, std::uint64_t fallback, std::uint64_t min, std::uint64_t max) const;
  double real(const std::string& key, Bounds bounds) const;
  double real_or(const std::string& key, double fallback, Bounds bounds) const;
  bool boolean_or(const std::string& key, bool fallback) const;
  std::string text(const std::string& key) const;
  std::string one_of(const std::string& key, std::initializer_list<const char*> choices) const;
  const nlohmann::json& object(const std::string& key) const;  // a nested JSON object
  const nlohmann::json& array(const std::string& key) const;  // an array [...]
  // Every key must be one of `known` (a misspelt key would otherwise be ignored).
  void only(const std::vector<std::string>& known) const;
  [[noreturn]] void fail(const std::string& key, const std::string& expected) const;

 private:
  const nlohmann::json& object_;
  std::string where_;
};

}  // namespace attn::cli
