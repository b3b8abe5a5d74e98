// Lab 15's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/15_monotonic.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/15_monotonic/lab.cpp"
}

using lab::monotonic::grade;
using lab::monotonic::Monotonic;

static lab::Result run(const Monotonic& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 15: the worked solution passes every check") {
  lab::test::solution_passes<Monotonic>(run, lab::solutions::monotonic::solution());
}

TEST_CASE("lab 15: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<Monotonic>(run, Monotonic{stub::expected_alignment, stub::hard_alignment});
}

TEST_CASE("lab 15: every planted wrong solution fails, pointing at its mistake") {
  CHECK(lab::planted::monotonic::all().size() >= 10);
  lab::test::planted_fail<Monotonic>(run, lab::planted::monotonic::all());
}

TEST_CASE("lab 15: every check fails for at least one planted wrong solution") {
  lab::test::every_check_fails_for_some_planted<Monotonic>(run, lab::solutions::monotonic::solution(), lab::planted::monotonic::all());
}

TEST_CASE("lab 15: the grader calls the learner's functions") {
  Monotonic s = lab::solutions::monotonic::solution();
  int n[2] = {0, 0};
  s.expected_alignment = lab::test::counted(s.expected_alignment, n[0]);
  s.hard_alignment = lab::test::counted(s.hard_alignment, n[1]);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  for (int k : n) CHECK(k > 0);
}

TEST_CASE("lab 15: the saturated check blames a division only when the values show one") {
  for (const auto& p : lab::planted::monotonic::all()) {
    std::ostringstream os;
    lab::Result r = run(p.solution, os);
    INFO("planted: " << p.mistake << "\n" << os.str());
    bool divides = p.mistake.rfind("eq. 10 with its division", 0) == 0 || p.mistake.rfind("the parallel form", 0) == 0;
    for (const auto& f : r.failures)
      if (f.find("something divides by p_{t,j-1}") != std::string::npos) CHECK(divides);
  }
}
