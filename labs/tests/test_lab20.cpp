// Lab 20's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/20_coverage_aer.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/20_coverage_aer/lab.cpp"
}

using lab::coverage_aer::CoverageAer;
using lab::coverage_aer::grade;

static lab::Result run(const CoverageAer& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 20: the worked solution passes every check") {
  lab::test::solution_passes<CoverageAer>(run, lab::solutions::coverage_aer::solution());
}

TEST_CASE("lab 20: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<CoverageAer>(
      run, CoverageAer{stub::coverage_penalty, stub::coverage_score, stub::attention_links, stub::aer});
}

TEST_CASE("lab 20: every planted wrong solution fails, pointing at its mistake") {
  const auto planted = lab::planted::coverage_aer::all();
  CHECK(planted.size() >= 15);
  lab::test::planted_fail<CoverageAer>(run, planted);
}

TEST_CASE("lab 20: every check fails for at least one planted wrong solution") {
  lab::test::every_check_fails_for_some_planted<CoverageAer>(run, lab::solutions::coverage_aer::solution(),
                                                             lab::planted::coverage_aer::all());
}

TEST_CASE("lab 20: the grader calls the learner's functions") {
  CoverageAer s = lab::solutions::coverage_aer::solution();
  int n[4] = {0, 0, 0, 0};
  s.coverage_penalty = lab::test::counted(s.coverage_penalty, n[0]);
  s.coverage_score = lab::test::counted(s.coverage_score, n[1]);
  s.attention_links = lab::test::counted(s.attention_links, n[2]);
  s.aer = lab::test::counted(s.aer, n[3]);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  for (int k : n) CHECK(k > 0);
}

TEST_CASE("lab 20: the never-attended check blames log 0 only when the values show it") {
  for (const auto& p : lab::planted::coverage_aer::all()) {
    std::ostringstream os;
    lab::Result r = run(p.solution, os);
    INFO("planted: " << p.mistake << "\n" << os.str());
    const bool about_zero = p.mistake.find("never attended") != std::string::npos;
    for (const auto& f : r.failures)
      if (f.find("a word no step attended has c_j = 0") != std::string::npos) CHECK(about_zero);
  }
}
