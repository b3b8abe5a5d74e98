// Lab 12's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/12_luong.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/12_luong/lab.cpp"
}

using lab::luong::grade;
using lab::luong::Luong;

static lab::Result run(const Luong& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 12: the worked solution passes every check") {
  lab::test::solution_passes<Luong>(run, lab::solutions::luong::solution());
}

TEST_CASE("lab 12: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<Luong>(run, Luong{stub::luong_step});
}

TEST_CASE("lab 12: every planted wrong solution fails, pointing at its mistake") {
  lab::test::planted_fail<Luong>(run, lab::planted::luong::all());
}

TEST_CASE("lab 12: the grader calls the learner's function") {
  Luong s = lab::solutions::luong::solution();
  int n = 0;
  s.step = lab::test::counted(s.step, n);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  CHECK(n > 0);
}
