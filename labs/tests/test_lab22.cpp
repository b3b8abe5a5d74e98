// Lab 22's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/22_conv_copy.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/22_conv_copy/lab.cpp"
}

using lab::conv_copy::ConvCopy;
using lab::conv_copy::grade;

static lab::Result run(const ConvCopy& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 22: the worked solution passes every check") {
  lab::test::solution_passes<ConvCopy>(run, lab::solutions::conv_copy::solution());
}

TEST_CASE("lab 22: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<ConvCopy>(run, ConvCopy{stub::attention, stub::mixture, stub::step});
}

TEST_CASE("lab 22: every planted wrong solution fails, pointing at its mistake") {
  const auto planted = lab::planted::conv_copy::all();
  CHECK(planted.size() >= 10);
  lab::test::planted_fail<ConvCopy>(run, planted);
}

TEST_CASE("lab 22: every check fails for at least one planted wrong solution") {
  lab::test::every_check_fails_for_some_planted<ConvCopy>(run, lab::solutions::conv_copy::solution(),
                                                          lab::planted::conv_copy::all());
}

TEST_CASE("lab 22: the grader calls the learner's functions") {
  ConvCopy s = lab::solutions::conv_copy::solution();
  int a = 0, m = 0, st = 0;
  s.attention = lab::test::counted(s.attention, a);
  s.mixture = lab::test::counted(s.mixture, m);
  s.step = lab::test::counted(s.step, st);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  CHECK(a > 0);
  CHECK(m > 0);
  CHECK(st > 0);
}
