// Lab 0's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/00_engine.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/00_engine/lab.cpp"
}

using lab::engine::Engine;
using lab::engine::grade;

static lab::Result run(const Engine& e, std::ostream& os) { return grade(e, os); }

TEST_CASE("lab 0: the worked solution passes every check") {
  lab::test::solution_passes<Engine>(run, lab::solutions::engine::solution());
}

TEST_CASE("lab 0: the untouched stub fails every check with 'not implemented'") {
  Engine s{stub::unbroadcast, stub::mul_backward, stub::div_backward,
           stub::exp_backward, stub::tanh_backward, stub::matmul_backward};
  lab::test::stub_fails_every_check<Engine>(run, s);
}

TEST_CASE("lab 0: every planted wrong solution fails, pointing at its mistake") {
  lab::test::planted_fail<Engine>(run, lab::planted::engine::all());
}

TEST_CASE("lab 0: the grader calls the learner's functions") {
  Engine s = lab::solutions::engine::solution();
  int n[6] = {0, 0, 0, 0, 0, 0};
  s.unbroadcast = lab::test::counted(s.unbroadcast, n[0]);
  s.mul_backward = lab::test::counted(s.mul_backward, n[1]);
  s.div_backward = lab::test::counted(s.div_backward, n[2]);
  s.exp_backward = lab::test::counted(s.exp_backward, n[3]);
  s.tanh_backward = lab::test::counted(s.tanh_backward, n[4]);
  s.matmul_backward = lab::test::counted(s.matmul_backward, n[5]);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  for (int k : n) CHECK(k > 0);
}

TEST_CASE("the hint is withheld only from the stub's not_implemented, not from a learner's own error") {
  std::ostringstream os;
  lab::Grader grader(0, "hints", os);
  grader.check("stub", "the stub's hint", [] { lab::not_implemented("f"); });
  grader.check("learner", "the learner's hint",
               [] { throw std::runtime_error("my backward is not implemented for 3-d inputs"); });
  lab::Result r = grader.finish();
  INFO(os.str());
  CHECK(r.failures.size() == 2);
  CHECK(os.str().find("the stub's hint") == std::string::npos);
  CHECK(os.str().find("hint: the learner's hint") != std::string::npos);
}
