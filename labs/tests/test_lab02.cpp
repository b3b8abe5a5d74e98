// Lab 2's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/02_layer_norm.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/02_layer_norm/lab.cpp"
}

using lab::layer_norm::grade;
using lab::layer_norm::LayerNorm;

static lab::Result run(const LayerNorm& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 2: the worked solution passes every check") {
  lab::test::solution_passes<LayerNorm>(run, lab::solutions::layer_norm::solution());
}

TEST_CASE("lab 2: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<LayerNorm>(run, LayerNorm{stub::layer_norm, stub::layer_norm_backward});
}

TEST_CASE("lab 2: every planted wrong solution fails, pointing at its mistake") {
  lab::test::planted_fail<LayerNorm>(run, lab::planted::layer_norm::all());
}

TEST_CASE("lab 2: the grader calls the learner's functions") {
  LayerNorm s = lab::solutions::layer_norm::solution();
  int n[2] = {0, 0};
  s.forward = lab::test::counted(s.forward, n[0]);
  s.backward = lab::test::counted(s.backward, n[1]);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  for (int k : n) CHECK(k > 0);
}
