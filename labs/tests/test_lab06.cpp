// Lab 6's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/06_heads.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/06_heads/lab.cpp"
}

using lab::heads::grade;
using lab::heads::Heads;

static lab::Result run(const Heads& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 6: the worked solution passes every check") {
  lab::test::solution_passes<Heads>(run, lab::solutions::heads::solution());
}

TEST_CASE("lab 6: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<Heads>(run, Heads{stub::split_heads, stub::merge_heads});
}

TEST_CASE("lab 6: every planted wrong solution fails, pointing at its mistake") {
  lab::test::planted_fail<Heads>(run, lab::planted::heads::all());
}

TEST_CASE("lab 6: the grader calls the learner's functions") {
  Heads s = lab::solutions::heads::solution();
  int n[2] = {0, 0};
  s.split_heads = lab::test::counted(s.split_heads, n[0]);
  s.merge_heads = lab::test::counted(s.merge_heads, n[1]);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  for (int k : n) CHECK(k > 0);
}
