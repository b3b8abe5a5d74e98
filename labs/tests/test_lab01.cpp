// Lab 1's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/01_softmax.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/01_softmax/lab.cpp"
}

using lab::softmax::Softmax;
using lab::softmax::grade;

static lab::Result run(const Softmax& e, std::ostream& os) { return grade(e, os); }

TEST_CASE("lab 1: the worked solution passes every check") {
  lab::test::solution_passes<Softmax>(run, lab::solutions::softmax::solution());
}

TEST_CASE("lab 1: the untouched stub fails every check with 'not implemented'") {
  Softmax s{stub::softmax, stub::softmax_backward, stub::log_softmax, stub::log_softmax_backward};
  lab::test::stub_fails_every_check<Softmax>(run, s);
}

TEST_CASE("lab 1: every planted wrong solution fails, pointing at its mistake") {
  lab::test::planted_fail<Softmax>(run, lab::planted::softmax::all());
}

TEST_CASE("lab 1: the grader calls the learner's functions") {
  Softmax s = lab::solutions::softmax::solution();
  int n[4] = {0, 0, 0, 0};
  s.softmax = lab::test::counted(s.softmax, n[0]);
  s.softmax_backward = lab::test::counted(s.softmax_backward, n[1]);
  s.log_softmax = lab::test::counted(s.log_softmax, n[2]);
  s.log_softmax_backward = lab::test::counted(s.log_softmax_backward, n[3]);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  for (int k : n) CHECK(k > 0);
}
