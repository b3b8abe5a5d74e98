// Comparisons the course's prose makes are computed verdicts, published like quoted numbers.
//
//   attn::notebook::compare("markov_vs_plain.aer", markov_aer, plain_aer, attn::notebook::lower_is_better);
//     shows   markov_vs_plain.aer = lower
//               paired over 3 seeds: mean a−b = -0.041, 2 SE = 0.005033, a−b < 0 on 3 of 3 seeds;
//               a direction needs |mean| > 2 SE and every seed; lower is better: a is better
//   attn::notebook::compare_timings("tiled_vs_plain.16k", tiled_seconds, plain_seconds);
//     shows   tiled_vs_plain.16k = faster
//               best of k=5: a 1.21 s (median 1.24 s), b 1.63 s (median 1.7 s); b's best is above a's median
//
// The published text is one of the verdict words
//   lower, higher, faster, slower, within noise, one run; no comparison
// and a sentence asserting it is marked <!--claim markov_vs_plain.aer: lower-->...<!--/claim-->,
// which tools/quotes.py --check compares with the output (docs/quotes.md).
//
// The rules (a and b are the per-seed values of two methods, or repeated timings):
//  - fewer than 3 values on a side: "one run; no comparison", never a direction;
//  - paired seeds (same length, the i-th values trained from the same seed): a direction when the mean
//    paired difference a−b is more than 2 standard errors from 0 AND every seed's difference has its sign,
//    so that neither one seed going the other way nor a mean inside the seeds' spread draws a direction;
//  - independent runs (different lengths, or independent_seeds): a direction only when the ranges
//    [min, max] do not overlap (touching overlaps);
//  - timings: best-of-k for each, and a direction only when the slower side's best run is slower than
//    the faster side's median run (each best outside the other's spread [best, median]; the median,
//    not the maximum, so that one run slowed by the machine's load does not hide a real difference).
// Header-only, like quote.hpp; not included by attn.hpp.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "viz/quote.hpp"
#include "xcpp/xdisplay.hpp"

namespace attn {
namespace notebook {

enum Direction { lower_is_better, higher_is_better };
// Whether a_runs[i] and b_runs[i] come from the same seed (compare() pairs same-length runs by default).
enum Seeds { paired_seeds, independent_seeds };

// The verdict words, exactly as published and as a claim asserts them.
inline constexpr const char* kLower = "lower";
inline constexpr const char* kHigher = "higher";
inline constexpr const char* kFaster = "faster";
inline constexpr const char* kSlower = "slower";
inline constexpr const char* kWithinNoise = "within noise";
inline constexpr const char* kOneRun = "one run; no comparison";

// Fewer values than this on a side draw no comparison.
inline constexpr std::size_t kMinRuns = 3;

// A verdict and the rule that decided it, as one line a reader can check against the numbers.
struct Verdict {
  std::string word;
  std::string rule;
};

// What compare() publishes: a quote whose text is the verdict, shown with its rule.
struct Comparison {
  std::string name;
  Verdict verdict;
};

inline nlohmann::json mime_bundle_repr(const Comparison& c) {
  nlohmann::json bundle;
  bundle["text/plain"] = c.name + " = " + c.verdict.word + "\n  " + c.verdict.rule;
  // The rule travels too, so tools/quotes.py can show it when a claim disagrees.
  bundle[kQuoteMime] = {{"name", c.name}, {"text", c.verdict.word}, {"rule", c.verdict.rule}};
  return bundle;
}

namespace detail {

// Four significant digits: enough to see a difference between close losses, short enough to read.
inline std::string num(double v) { return format(v, ".4g"); }

inline void check_runs(const std::vector<double>& runs, const char* side) {
  for (double v : runs)
    if (!std::isfinite(v))
      throw std::invalid_argument(std::string("compare: a value of ") + side + " is not finite; a failed run "
                                  "cannot be compared, leave it out and say so");
}

inline std::string range(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return "[" + num(*lo) + ", " + num(*hi) + "]";
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Seconds in the unit a reader takes in at a glance: 1.21 s, 3.4 ms, 250 µs.
inline std::string seconds(double s) {
  if (s >= 1.0) return format(s, ".3g") + " s";
  if (s >= 1e-3) return format(s * 1e3, ".3g") + " ms";
  if (s >= 1e-6) return format(s * 1e6, ".3g") + " µs";
  return format(s * 1e9, ".3g") + " ns";
}

inline std::string better(const std::string& word, Direction direction) {
  const bool lower_better = direction == lower_is_better;
  if (word == kLower) return lower_better ? "; lower is better: a is better" : "; higher is better: a is worse";
  if (word == kHigher) return lower_better ? "; lower is better: a is worse" : "; higher is better: a is better";
  return "";
}

}  // namespace detail

// The verdict for a against b, without publishing it (compare() publishes; tests call this).
inline Verdict verdict(const std::vector<double>& a, const std::vector<double>& b, Direction direction,
                       Seeds seeds = paired_seeds) {
  detail::check_runs(a, "a");
  detail::check_runs(b, "b");
  if (a.size() < kMinRuns || b.size() < kMinRuns)
    return {kOneRun, std::to_string(a.size()) + " run(s) of a, " + std::to_string(b.size()) +
                         " of b: fewer than " + std::to_string(kMinRuns) + " on a side, no direction is drawn"};
  if (seeds == paired_seeds && a.size() == b.size()) {
    const std::size_t n = a.size();
    std::vector<double> d(n);
    for (std::size_t i = 0; i < n; ++i) d[i] = a[i] - b[i];
    double mean = 0;
    for (double x : d) mean += x;
    mean /= n;
    double ss = 0;
    for (double x : d) ss += (x - mean) * (x - mean);
    const double two_se = 2.0 * std::sqrt(ss / (n - 1) / n);
    std::size_t agree = 0;
    for (double x : d) agree += mean != 0 && (x > 0) == (mean > 0) && x != 0;
    const char* sign = mean >= 0 ? ">" : "<";
    std::string word = kWithinNoise;
    if (std::fabs(mean) > two_se && agree == n) word = mean < 0 ? kLower : kHigher;
    const std::string rule = "paired over " + std::to_string(n) + " seeds: mean a−b = " + detail::num(mean) +
                             ", 2 SE = " + detail::num(two_se) + ", a−b " + sign + " 0 on " + std::to_string(agree) +
                             " of " + std::to_string(n) + " seeds; a direction needs |mean| > 2 SE and every seed";
    return {word, rule + detail::better(word, direction)};
  }
  const auto [a_lo, a_hi] = std::minmax_element(a.begin(), a.end());
  const auto [b_lo, b_hi] = std::minmax_element(b.begin(), b.end());
  std::string word = kWithinNoise;
  if (*a_hi < *b_lo) word = kLower;
  if (*a_lo > *b_hi) word = kHigher;
  const std::string rule = "ranges over " + std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                           " runs: a " + detail::range(a) + ", b " + detail::range(b) +
                           (word == kWithinNoise ? " overlap" : " do not overlap");
  return {word, rule + detail::better(word, direction)};
}

// The verdict for timings a against b (seconds of repeated runs of the same work).
inline Verdict timing_verdict(const std::vector<double>& a, const std::vector<double>& b) {
  detail::check_runs(a, "a");
  detail::check_runs(b, "b");
  if (a.size() < kMinRuns || b.size() < kMinRuns)
    return {kOneRun, std::to_string(a.size()) + " timing(s) of a, " + std::to_string(b.size()) +
                         " of b: fewer than " + std::to_string(kMinRuns) + " on a side, no direction is drawn"};
  const double a_best = *std::min_element(a.begin(), a.end());
  const double b_best = *std::min_element(b.begin(), b.end());
  const double a_median = detail::median(a), b_median = detail::median(b);
  std::string word = kWithinNoise;
  std::string why = "each best is inside the other's spread [best, median]";
  if (b_best > a_median) {
    word = kFaster;
    why = "b's best is above a's median";
  } else if (a_best > b_median) {
    word = kSlower;
    why = "a's best is above b's median";
  }
  const std::string k = a.size() == b.size() ? "best of k=" + std::to_string(a.size())
                                             : "best of k=" + std::to_string(a.size()) + " and " +
                                                   std::to_string(b.size());
  return {word, k + ": a " + detail::seconds(a_best) + " (median " + detail::seconds(a_median) + "), b " +
                    detail::seconds(b_best) + " (median " + detail::seconds(b_median) + "); " + why};
}

// Publishes the verdict for a against b under name (a quote a claim can bind to), and shows the rule.
inline Comparison compare(const std::string& name, const std::vector<double>& a_runs,
                          const std::vector<double>& b_runs, Direction direction, Seeds seeds = paired_seeds) {
  detail::check_name(name);
  Comparison c{name, verdict(a_runs, b_runs, direction, seeds)};
  xcpp::display(c);
  return c;
}

// Publishes faster / slower / within noise for timings a against b under name, and shows the rule.
inline Comparison compare_timings(const std::string& name, const std::vector<double>& a_seconds,
                                  const std::vector<double>& b_seconds) {
  detail::check_name(name);
  Comparison c{name, timing_verdict(a_seconds, b_seconds)};
  xcpp::display(c);
  return c;
}

}  // namespace notebook
}  // namespace attn
