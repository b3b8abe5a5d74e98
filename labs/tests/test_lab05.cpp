// Lab 5's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/05_sdpa.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/05_sdpa/lab.cpp"
}

using lab::sdpa::Attention;
using lab::sdpa::grade;

static lab::Result run(const Attention& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 5: the worked solution passes every check") {
  lab::test::solution_passes<Attention>(run, lab::solutions::sdpa::solution());
}

TEST_CASE("lab 5: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<Attention>(run, Attention{stub::causal_mask, stub::padding_mask, stub::attention});
}

TEST_CASE("lab 5: every planted wrong solution fails, pointing at its mistake") {
  lab::test::planted_fail<Attention>(run, lab::planted::sdpa::all());
}

TEST_CASE("lab 5: the grader calls the learner's functions") {
  Attention s = lab::solutions::sdpa::solution();
  int n[3] = {0, 0, 0};
  s.causal_mask = lab::test::counted(s.causal_mask, n[0]);
  s.padding_mask = lab::test::counted(s.padding_mask, n[1]);
  s.attention = lab::test::counted(s.attention, n[2]);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  for (int k : n) CHECK(k > 0);
}
