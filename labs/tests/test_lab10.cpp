// Lab 10's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/10_beam.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/10_beam/lab.cpp"
}

using lab::beam::BeamStep;
using lab::beam::grade;

static lab::Result run(const BeamStep& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 10: the worked solution passes every check") {
  lab::test::solution_passes<BeamStep>(run, lab::solutions::beam::solution());
}

TEST_CASE("lab 10: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<BeamStep>(run, BeamStep{stub::beam_step});
}

TEST_CASE("lab 10: every planted wrong solution fails, pointing at its mistake") {
  lab::test::planted_fail<BeamStep>(run, lab::planted::beam::all());
}

TEST_CASE("lab 10: the grader calls the learner's function") {
  BeamStep s = lab::solutions::beam::solution();
  int n = 0;
  s.step = lab::test::counted(s.step, n);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  CHECK(n > 0);
}
