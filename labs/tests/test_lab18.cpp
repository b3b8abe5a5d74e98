// Lab 18's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/18_copynet.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/18_copynet/lab.cpp"
}

using lab::copynet::grade;
using lab::copynet::CopyNet;

static lab::Result run(const CopyNet& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 18: the worked solution passes every check") {
  lab::test::solution_passes<CopyNet>(run, lab::solutions::copynet::solution());
}

TEST_CASE("lab 18: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<CopyNet>(run, CopyNet{stub::joint});
}

TEST_CASE("lab 18: every planted wrong solution fails, pointing at its mistake") {
  const auto planted = lab::planted::copynet::all();
  CHECK(planted.size() >= 10);
  lab::test::planted_fail<CopyNet>(run, planted);
}

TEST_CASE("lab 18: every check fails for at least one planted wrong solution") {
  lab::test::every_check_fails_for_some_planted<CopyNet>(run, lab::solutions::copynet::solution(), lab::planted::copynet::all());
}

TEST_CASE("lab 18: the grader calls the learner's functions") {
  CopyNet s = lab::solutions::copynet::solution();
  int n = 0;
  s.joint = lab::test::counted(s.joint, n);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  CHECK(n > 0);
}
