// Lab 23's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/23_conv2d.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/23_conv2d/lab.cpp"
}

using lab::conv2d::Conv2d;
using lab::conv2d::grade;

static lab::Result run(const Conv2d& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 23: the worked solution passes every check") {
  lab::test::solution_passes<Conv2d>(run, lab::solutions::conv2d::solution());
}

TEST_CASE("lab 23: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<Conv2d>(
      run, Conv2d{stub::im2col, stub::col2im, stub::conv2d_forward, stub::conv2d_backward, stub::max_pool2d_backward});
}

TEST_CASE("lab 23: every planted wrong solution fails, pointing at its mistake") {
  const auto planted = lab::planted::conv2d::all();
  CHECK(planted.size() >= 25);
  lab::test::planted_fail<Conv2d>(run, planted);
}

TEST_CASE("lab 23: every check fails for at least one planted wrong solution") {
  lab::test::every_check_fails_for_some_planted<Conv2d>(run, lab::solutions::conv2d::solution(),
                                                        lab::planted::conv2d::all());
}

TEST_CASE("lab 23: the grader calls the learner's functions") {
  Conv2d s = lab::solutions::conv2d::solution();
  int n[5] = {0, 0, 0, 0, 0};
  s.im2col = lab::test::counted(s.im2col, n[0]);
  s.col2im = lab::test::counted(s.col2im, n[1]);
  s.conv2d_forward = lab::test::counted(s.conv2d_forward, n[2]);
  s.conv2d_backward = lab::test::counted(s.conv2d_backward, n[3]);
  s.max_pool2d_backward = lab::test::counted(s.max_pool2d_backward, n[4]);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  for (int k : n) CHECK(k > 0);
}
