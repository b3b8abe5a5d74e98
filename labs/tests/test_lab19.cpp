// Lab 19's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/19_hard_attention.hpp"
#include "labs/tests/lab_test.hpp"

#include <set>

#define LAB_NO_MAIN
namespace stub {
#include "labs/19_hard_attention/lab.cpp"
}

using lab::hard_attention::grade;
using lab::hard_attention::HardAttention;

static lab::Result run(const HardAttention& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 19: the worked solution passes every check") {
  lab::test::solution_passes<HardAttention>(run, lab::solutions::hard_attention::solution());
}

TEST_CASE("lab 19: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<HardAttention>(run, HardAttention{stub::sample, stub::context, stub::surrogate});
}

TEST_CASE("lab 19: every planted wrong solution fails, pointing at its mistake") {
  const auto planted = lab::planted::hard_attention::all();
  CHECK(planted.size() >= 10);
  lab::test::planted_fail<HardAttention>(run, planted);
}

// A hint names the mistake made, never another: no planted solution's output carries the words that name a
// different planted mistake (the started flag left false once drew "the moving average's weights swapped").
TEST_CASE("lab 19: no planted wrong solution is named as another mistake") {
  // Pairs whose values agree on a check, each named truthfully: with no baseline the first batch's b is 0 (the
  // message names both), and an argmax sampler makes an argmax context.
  const std::set<std::pair<std::string, std::string>> same_values = {
      {"the baseline not subtracted", "b = 0 on the first batch"},
      {"the argmax cell, not a sample", "the argmax cell's features"}};
  const auto planted = lab::planted::hard_attention::all();
  for (const auto& p : planted) {
    std::ostringstream os;
    run(p.solution, os);
    for (const auto& q : planted) {
      if (q.points_at == p.points_at || same_values.count({p.points_at, q.points_at})) continue;
      INFO("planted: " << p.mistake << "\nnamed as: " << q.mistake << "\n" << os.str());
      CHECK(os.str().find(q.points_at) == std::string::npos);
    }
  }
}

TEST_CASE("lab 19: every check fails for at least one planted wrong solution") {
  lab::test::every_check_fails_for_some_planted<HardAttention>(run, lab::solutions::hard_attention::solution(),
                                                               lab::planted::hard_attention::all());
}

TEST_CASE("lab 19: the grader calls the learner's functions") {
  HardAttention s = lab::solutions::hard_attention::solution();
  int n[3] = {0, 0, 0};
  s.sample = lab::test::counted(s.sample, n[0]);
  s.context = lab::test::counted(s.context, n[1]);
  s.surrogate = lab::test::counted(s.surrogate, n[2]);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  for (int k : n) CHECK(k > 0);
}
