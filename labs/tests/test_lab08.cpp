// Lab 8's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/08_cross_entropy.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/08_cross_entropy/lab.cpp"
}

using lab::cross_entropy::CrossEntropy;
using lab::cross_entropy::grade;

static lab::Result run(const CrossEntropy& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 8: the worked solution passes every check") {
  lab::test::solution_passes<CrossEntropy>(run, lab::solutions::cross_entropy::solution());
}

TEST_CASE("lab 8: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<CrossEntropy>(run, CrossEntropy{stub::cross_entropy});
}

TEST_CASE("lab 8: every planted wrong solution fails, pointing at its mistake") {
  lab::test::planted_fail<CrossEntropy>(run, lab::planted::cross_entropy::all());
}

TEST_CASE("lab 8: the grader calls the learner's function") {
  CrossEntropy s = lab::solutions::cross_entropy::solution();
  int n = 0;
  s.loss = lab::test::counted(s.loss, n);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  CHECK(n > 0);
}
