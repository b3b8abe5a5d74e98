// Lab 14's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/14_rotary_alibi.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/14_rotary_alibi/lab.cpp"
}

using lab::rotary_alibi::grade;
using lab::rotary_alibi::RotaryAlibi;

static lab::Result run(const RotaryAlibi& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 14: the worked solution passes every check") {
  lab::test::solution_passes<RotaryAlibi>(run, lab::solutions::rotary_alibi::solution());
}

TEST_CASE("lab 14: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<RotaryAlibi>(run, RotaryAlibi{stub::rotary, stub::alibi_slopes, stub::alibi_scores});
}

TEST_CASE("lab 14: every planted wrong solution fails, pointing at its mistake") {
  lab::test::planted_fail<RotaryAlibi>(run, lab::planted::rotary_alibi::all());
}

TEST_CASE("lab 14: every check fails for at least one planted wrong solution") {
  lab::test::every_check_fails_for_some_planted<RotaryAlibi>(run, lab::solutions::rotary_alibi::solution(), lab::planted::rotary_alibi::all());
}

TEST_CASE("lab 14: the grader calls the learner's functions") {
  RotaryAlibi s = lab::solutions::rotary_alibi::solution();
  int n[3] = {0, 0, 0};
  s.rotary = lab::test::counted(s.rotary, n[0]);
  s.alibi_slopes = lab::test::counted(s.alibi_slopes, n[1]);
  s.alibi_scores = lab::test::counted(s.alibi_scores, n[2]);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  for (int k : n) CHECK(k > 0);
}

// The hint and the named mistake of a failure of `check` (by its name's start), or "" when it passed.
static std::string failure_of(const lab::Result& r, const std::string& check) {
  for (const auto& f : r.failures)
    if (f.rfind(check, 0) == 0) return f;
  return "";
}

TEST_CASE("lab 14: the random checks name only the mistake their values tell apart") {
  for (const auto& p : lab::planted::rotary_alibi::all()) {
    std::ostringstream os;
    lab::Result r = run(p.solution, os);
    INFO("planted: " << p.mistake << "\n" << os.str());
    std::string random_rotary = failure_of(r, "rotary, random shapes");
    if (p.mistake == "rotary's angle with the wrong sign" || p.mistake == "rotary ignores base (10000)") {
      // a wrong rotation: the rotary hint, not the shapes one
      CHECK(random_rotary.find("feature k pairs with feature k + d/2") != std::string::npos);
      CHECK(random_rotary.find("x has any number of leading axes") == std::string::npos);
    }
    if (p.mistake == "T read from axis 2 (x taken as [B, H, T, d])")
      CHECK(random_rotary.find("x has any number of leading axes") != std::string::npos);
    if (p.mistake == "causal: the key right after the query left visible (j > i + 1 blocked)")
      for (const auto& f : r.failures) CHECK(f.find("the keys after their query not blocked") == std::string::npos);
  }
}
