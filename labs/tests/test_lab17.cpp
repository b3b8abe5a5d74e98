// Lab 17's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/17_pointer_sentinel.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/17_pointer_sentinel/lab.cpp"
}

using lab::pointer_sentinel::grade;
using lab::pointer_sentinel::PointerSentinel;

static lab::Result run(const PointerSentinel& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 17: the worked solution passes every check") {
  lab::test::solution_passes<PointerSentinel>(run, lab::solutions::pointer_sentinel::solution());
}

TEST_CASE("lab 17: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<PointerSentinel>(run, PointerSentinel{stub::mixture, stub::log_prob});
}

TEST_CASE("lab 17: every planted wrong solution fails, pointing at its mistake") {
  const auto planted = lab::planted::pointer_sentinel::all();
  CHECK(planted.size() >= 10);
  lab::test::planted_fail<PointerSentinel>(run, planted);
}

TEST_CASE("lab 17: a wrong solution that is no usual mistake is never named as one") {
  // An expected -inf (a mistake computed from probabilities that round to 0) once matched any output, and
  // random shapes small enough for a coincidence named mistakes the learner did not make.
  for (const auto& p : lab::planted::pointer_sentinel::unnamed()) {
    std::ostringstream os;
    lab::Result r = run(p.solution, os);
    INFO("planted: " << p.mistake << "\n" << os.str());
    CHECK(r.passed < r.total);
    for (const auto& f : r.failures) CHECK(f.find("your values are what this mistake gives") == std::string::npos);
  }
}

TEST_CASE("lab 17: every check fails for at least one planted wrong solution") {
  lab::test::every_check_fails_for_some_planted<PointerSentinel>(run, lab::solutions::pointer_sentinel::solution(), lab::planted::pointer_sentinel::all());
}

TEST_CASE("lab 17: the grader calls the learner's functions") {
  PointerSentinel s = lab::solutions::pointer_sentinel::solution();
  int n[2] = {0, 0};
  s.mixture = lab::test::counted(s.mixture, n[0]);
  s.log_prob = lab::test::counted(s.log_prob, n[1]);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  for (int k : n) CHECK(k > 0);
}
