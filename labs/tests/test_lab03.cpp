// Lab 3's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/03_lstm_cell.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/03_lstm_cell/lab.cpp"
}

using lab::lstm::grade;
using lab::lstm::LSTMCell;

static lab::Result run(const LSTMCell& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 3: the worked solution passes every check") {
  lab::test::solution_passes<LSTMCell>(run, lab::solutions::lstm::solution());
}

TEST_CASE("lab 3: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<LSTMCell>(run, LSTMCell{stub::lstm_cell});
}

TEST_CASE("lab 3: every planted wrong solution fails, pointing at its mistake") {
  lab::test::planted_fail<LSTMCell>(run, lab::planted::lstm::all());
}

TEST_CASE("lab 3: the grader calls the learner's function") {
  LSTMCell s = lab::solutions::lstm::solution();
  int n = 0;
  s.cell = lab::test::counted(s.cell, n);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  CHECK(n > 0);
}
