// viz/compare.hpp: attn::notebook::compare and compare_timings. The verdict words on hand-made runs, each edge
// (overlap, touching ranges, ties, a disagreeing seed, too few runs), and what compare() publishes.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "viz/compare.hpp"

// compare() displays through these; the test keeps the last bundle to read what was published.
static std::string last_display;
extern "C" void attn_kernel_display(const char* data, const char*, const char*, int) { last_display = data; }
extern "C" void attn_kernel_clear_output(int) {}

using namespace attn::notebook;
using V = std::vector<double>;

TEST_CASE("paired seeds: a direction when the mean difference passes 2 SE and every seed agrees") {
  // a−b = -0.10, -0.11, -0.09: mean -0.10, 2 SE ≈ 0.0115.
  CHECK(verdict({0.30, 0.40, 0.50}, {0.40, 0.51, 0.59}, lower_is_better).word == "lower");
  CHECK(verdict({0.40, 0.51, 0.59}, {0.30, 0.40, 0.50}, lower_is_better).word == "higher");
  // The direction is what a is, whichever way is better; the rule line says which is better.
  const Verdict v = verdict({0.40, 0.51, 0.59}, {0.30, 0.40, 0.50}, higher_is_better);
  CHECK(v.word == "higher");
  CHECK(v.rule.find("paired over 3 seeds") != std::string::npos);
  CHECK(v.rule.find("a is better") != std::string::npos);
  CHECK(verdict({0.40, 0.51, 0.59}, {0.30, 0.40, 0.50}, lower_is_better).rule.find("a is worse") !=
        std::string::npos);
}

TEST_CASE("paired seeds: within noise") {
  // Ties: every difference 0.
  CHECK(verdict({1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}, lower_is_better).word == "within noise");
  // One seed disagrees, although the mean is far below 0 (chapter 15's 3.428 against 3.410 kind).
  CHECK(verdict({1.0, 1.0, 1.0, 1.0}, {2.0, 2.0, 2.0, 0.99}, lower_is_better).word == "within noise");
  // Every seed agrees, but one large difference makes the spread larger than the mean.
  CHECK(verdict({0.0, 0.0, 0.0}, {0.01, 0.01, 5.0}, lower_is_better).word == "within noise");
  // A constant difference has no spread at all: a direction.
  CHECK(verdict({1.0, 2.0, 3.0}, {1.5, 2.5, 3.5}, lower_is_better).word == "lower");
}

TEST_CASE("independent runs: the ranges must not overlap") {
  CHECK(verdict({1.0, 1.1, 1.2}, {1.3, 1.4, 1.5, 1.6}, lower_is_better).word == "lower");
  CHECK(verdict({1.3, 1.4, 1.5, 1.6}, {1.0, 1.1, 1.2}, lower_is_better).word == "higher");
  CHECK(verdict({1.0, 1.1, 1.35}, {1.3, 1.4, 1.5, 1.6}, lower_is_better).word == "within noise");
  // Touching ranges overlap.
  CHECK(verdict({1.0, 1.1, 1.3}, {1.3, 1.4, 1.5, 1.6}, lower_is_better).word == "within noise");
  // Same-length runs that are not paired by seed use the ranges too: these would pass the paired rule.
  const V a{1.0, 2.0, 3.0}, b{1.5, 2.5, 3.5};
  const Verdict v = verdict(a, b, lower_is_better, independent_seeds);
  CHECK(v.word == "within noise");
  CHECK(v.rule == "ranges over 3 and 3 runs: a [1, 3], b [1.5, 3.5] overlap");
}

TEST_CASE("fewer than 3 runs on a side: no comparison, never a direction") {
  CHECK(verdict({1.0}, {5.0}, lower_is_better).word == "one run; no comparison");
  CHECK(verdict({1.0, 1.1}, {5.0, 5.1, 5.2}, lower_is_better).word == "one run; no comparison");
  CHECK(verdict({1.0, 1.1, 1.2}, {5.0, 5.1}, higher_is_better).word == "one run; no comparison");
  CHECK(timing_verdict({1.0, 1.0}, {2.0, 2.0, 2.0}).word == "one run; no comparison");
  CHECK_THROWS_WITH(verdict({1.0, std::nan(""), 1.2}, {1.0, 1.1, 1.2}, lower_is_better),
                    doctest::Contains("not finite"));
}

TEST_CASE("timings: best of k, a direction only when each best is outside the other's spread") {
  const Verdict v = timing_verdict({1.00, 1.02, 1.05, 3.0, 1.01}, {1.20, 1.22, 1.25, 1.21, 1.30});
  CHECK(v.word == "faster");  // one slow run of a (3.0 s, the machine's load) does not hide it
  CHECK(v.rule == "best of k=5: a 1 s (median 1.02 s), b 1.2 s (median 1.22 s); b's best is above a's median");
  CHECK(timing_verdict({1.20, 1.22, 1.25}, {1.00, 1.02, 1.05}).word == "slower");
  // b's best (1.01 s) is inside a's spread [1.00, 1.02].
  CHECK(timing_verdict({1.00, 1.02, 1.05}, {1.01, 1.30, 1.40}).word == "within noise");
  // Ties.
  CHECK(timing_verdict({2e-3, 2e-3, 2e-3}, {2e-3, 2e-3, 2e-3}).word == "within noise");
  CHECK(timing_verdict({2e-3, 2.1e-3, 2.2e-3}, {4e-3, 4e-3, 4.1e-3}).rule.find("a 2 ms (median 2.1 ms)") !=
        std::string::npos);
}

TEST_CASE("compare publishes the verdict as a quote, with its rule beside it") {
  const Comparison c = compare("markov_vs_plain.aer", {0.30, 0.40, 0.50}, {0.40, 0.51, 0.59}, lower_is_better);
  CHECK(c.verdict.word == "lower");
  const auto bundle = nlohmann::json::parse(last_display);
  CHECK(bundle[kQuoteMime]["name"] == "markov_vs_plain.aer");
  CHECK(bundle[kQuoteMime]["text"] == "lower");
  const std::string shown = bundle["text/plain"];
  CHECK(shown.rfind("markov_vs_plain.aer = lower\n  paired over 3 seeds", 0) == 0);
  compare_timings("tiled.16k", {1.0, 1.0, 1.0}, {1.0, 1.1, 1.2});
  CHECK(nlohmann::json::parse(last_display)[kQuoteMime]["text"] == "within noise");
  CHECK_THROWS_WITH(compare("bad name", {1.0}, {1.0}, lower_is_better), doctest::Contains("'bad name'"));
}
