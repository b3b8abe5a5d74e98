// Lab 13's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/13_online_softmax.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/13_online_softmax/lab.cpp"
}

using lab::online_softmax::Flash;
using lab::online_softmax::grade;

static lab::Result run(const Flash& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 13: the worked solution passes every check") {
  lab::test::solution_passes<Flash>(run, lab::solutions::online_softmax::solution());
}

TEST_CASE("lab 13: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<Flash>(run, Flash{stub::merge, stub::forward, stub::backward});
}

TEST_CASE("lab 13: every planted wrong solution fails, pointing at its mistake") {
  lab::test::planted_fail<Flash>(run, lab::planted::online_softmax::all());
}

TEST_CASE("lab 13: the grader calls the learner's functions") {
  Flash s = lab::solutions::online_softmax::solution();
  int n[3] = {0, 0, 0};
  s.merge = lab::test::counted(s.merge, n[0]);
  s.forward = lab::test::counted(s.forward, n[1]);
  s.backward = lab::test::counted(s.backward, n[2]);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  for (int k : n) CHECK(k > 0);
}

TEST_CASE("lab 13: every check is failed by at least one planted wrong solution") {
  std::ostringstream os;
  lab::Result stub_run = run(Flash{stub::merge, stub::forward, stub::backward}, os);  // every check, by name
  std::vector<lab::Result> planted;
  for (const auto& p : lab::planted::online_softmax::all()) {
    std::ostringstream ps;
    planted.push_back(run(p.solution, ps));
  }
  for (const auto& f : stub_run.failures) {
    // "check name: fn: not implemented" -> "check name: " (check names hold ": " too)
    std::string check = f.substr(0, f.rfind(": ", f.rfind(": ") - 1) + 2);
    bool caught = false;
    for (const auto& r : planted)
      for (const auto& pf : r.failures) caught = caught || pf.rfind(check, 0) == 0;
    INFO("check: " << check);
    CHECK(caught);
  }
}

// A memory check whose peak is fine but whose values are wrong names the values' mistake, not the memory.
TEST_CASE("lab 13: a memory check failed on its values gives the forward or backward hint, not the memory hint") {
  auto hint_of = [](const lab::Result& r, const std::string& check) {
    for (const auto& f : r.failures)
      if (f.rfind(check, 0) == 0) return f.substr(f.find("\n        hint: "));
    return std::string("(the check passed)");
  };
  for (const auto& p : lab::planted::online_softmax::all()) {
    std::ostringstream os;
    lab::Result r = run(p.solution, os);
    INFO("planted: " << p.mistake << "\n" << os.str());
    if (p.mistake == "the merge forgets to rescale the older sum") {
      std::string h = hint_of(r, "forward: memory");
      CHECK(h.find("per block of keys J") != std::string::npos);
      CHECK(h.find("hold one block at a time") == std::string::npos);
    }
    if (p.mistake == "the backward without delta") {
      std::string h = hint_of(r, "backward: memory");
      CHECK(h.find("per block J: p = exp") != std::string::npos);
      CHECK(h.find("hold one block at a time") == std::string::npos);
    }
    if (p.mistake == "a forward that computes the whole [Tq, Tk] scores")
      CHECK(hint_of(r, "forward: memory").find("hold one block at a time") != std::string::npos);
  }
}
