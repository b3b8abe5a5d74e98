// Lab 11's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/11_encoder_layer.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/11_encoder_layer/lab.cpp"
}

using lab::encoder::EncoderLayer;
using lab::encoder::grade;

static lab::Result run(const EncoderLayer& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 11: the worked solution passes every check") {
  lab::test::solution_passes<EncoderLayer>(run, lab::solutions::encoder::solution());
}

TEST_CASE("lab 11: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<EncoderLayer>(run, EncoderLayer{stub::encoder_layer});
}

TEST_CASE("lab 11: every planted wrong solution fails, pointing at its mistake") {
  lab::test::planted_fail<EncoderLayer>(run, lab::planted::encoder::all());
}

TEST_CASE("lab 11: the grader calls the learner's function") {
  EncoderLayer s = lab::solutions::encoder::solution();
  int n = 0;
  s.layer = lab::test::counted(s.layer, n);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  CHECK(n > 0);
}
