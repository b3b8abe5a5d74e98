// Lab 7's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/07_positions.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/07_positions/lab.cpp"
}

using lab::positions::grade;
using lab::positions::Positions;

static lab::Result run(const Positions& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 7: the worked solution passes every check") {
  lab::test::solution_passes<Positions>(run, lab::solutions::positions::solution());
}

TEST_CASE("lab 7: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<Positions>(run, Positions{stub::encoding, stub::add_positions});
}

TEST_CASE("lab 7: every planted wrong solution fails, pointing at its mistake") {
  lab::test::planted_fail<Positions>(run, lab::planted::positions::all());
}

TEST_CASE("lab 7: the grader calls the learner's functions") {
  Positions s = lab::solutions::positions::solution();
  int n[2] = {0, 0};
  s.encoding = lab::test::counted(s.encoding, n[0]);
  s.add_positions = lab::test::counted(s.add_positions, n[1]);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  for (int k : n) CHECK(k > 0);
}
