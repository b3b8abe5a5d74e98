// Lab 9's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/09_adam.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/09_adam/lab.cpp"
}

using lab::adam::Adam;
using lab::adam::grade;

static lab::Result run(const Adam& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 9: the worked solution passes every check") {
  lab::test::solution_passes<Adam>(run, lab::solutions::adam::solution());
}

TEST_CASE("lab 9: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<Adam>(run, Adam{stub::adam_step});
}

TEST_CASE("lab 9: every planted wrong solution fails, pointing at its mistake") {
  lab::test::planted_fail<Adam>(run, lab::planted::adam::all());
}

TEST_CASE("lab 9: the grader calls the learner's function") {
  Adam s = lab::solutions::adam::solution();
  int n = 0;
  s.step = lab::test::counted(s.step, n);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  CHECK(n > 0);
}
