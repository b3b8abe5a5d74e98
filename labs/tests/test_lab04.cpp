// Lab 4's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/04_additive.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/04_additive/lab.cpp"
}

using lab::additive::Additive;
using lab::additive::grade;

static lab::Result run(const Additive& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 4: the worked solution passes every check") {
  lab::test::solution_passes<Additive>(run, lab::solutions::additive::solution());
}

TEST_CASE("lab 4: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<Additive>(run, Additive{stub::additive_attention});
}

TEST_CASE("lab 4: every planted wrong solution fails, pointing at its mistake") {
  lab::test::planted_fail<Additive>(run, lab::planted::additive::all());
}

TEST_CASE("lab 4: the grader calls the learner's function") {
  Additive s = lab::solutions::additive::solution();
  int n = 0;
  s.attend = lab::test::counted(s.attend, n);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  CHECK(n > 0);
}
