// What every lab's grader must prove about itself (labs/tests/test_labNN.cpp):
// the worked solution passes every check, the untouched stub fails every check with
// "not implemented", every planted wrong solution fails with a message pointing at its
// mistake, every check fails for at least one of them, and the grader calls the learner's
// functions (a counting solution).
#pragma once

#include "labs/grader/grader.hpp"

#include <doctest/doctest.h>

#include <sstream>

namespace lab {
namespace test {

// f, counting its calls in `calls`.
template <class R, class... Args>
std::function<R(Args...)> counted(std::function<R(Args...)> f, int& calls) {
  return [f, &calls](Args... args) -> R {
    ++calls;
    return f(std::forward<Args>(args)...);
  };
}

template <class S, class Grade>
void solution_passes(Grade grade, const S& solution) {
  std::ostringstream os;
  Result r = grade(solution, os);
  INFO(os.str());
  CHECK(r.total > 0);
  CHECK(r.passed == r.total);
}

template <class S, class Grade>
void stub_fails_every_check(Grade grade, const S& stub) {
  std::ostringstream os;
  Result r = grade(stub, os);
  INFO(os.str());
  CHECK(r.total > 0);
  CHECK(r.passed == 0);
  CHECK(r.failures.size() == static_cast<std::size_t>(r.total));
  for (const auto& f : r.failures) CHECK(f.find("not implemented") != std::string::npos);
  std::string last = "lab " + std::to_string(r.lab) + ": 0 of " + std::to_string(r.total) + " checks pass";
  CHECK(os.str().find(last) != std::string::npos);
}

template <class S, class Grade>
void planted_fail(Grade grade, const std::vector<Planted<S>>& planted) {
  CHECK(planted.size() >= 3);
  for (const auto& p : planted) {
    std::ostringstream os;
    Result r = grade(p.solution, os);
    INFO("planted: " << p.mistake << "\n" << os.str());
    CHECK(r.passed < r.total);
    CHECK(r.failure_mentions(p.points_at));
    if (p.in_first_failure && !r.failures.empty()) CHECK(r.failures.front().find(p.points_at) != std::string::npos);
  }
}

// Every check fails for at least one planted wrong solution: a check no planted mistake reaches is a
// check not proven able to fail. Checks are counted from the grader's PASS and FAIL lines, in order.
template <class S, class Grade>
void every_check_fails_for_some_planted(Grade grade, const S& solution, const std::vector<Planted<S>>& planted) {
  std::ostringstream os0;
  const int total = grade(solution, os0).total;
  std::vector<bool> failed(static_cast<std::size_t>(total), false);
  for (const auto& p : planted) {
    std::ostringstream os;
    grade(p.solution, os);
    std::istringstream lines(os.str());
    std::string line;
    std::size_t k = 0;
    while (std::getline(lines, line)) {
      if (line.rfind("  PASS  ", 0) == 0) ++k;
      else if (line.rfind("  FAIL  ", 0) == 0) failed.at(k++) = true;
    }
  }
  for (std::size_t k = 0; k < failed.size(); ++k) {
    INFO("check " << k + 1 << " of " << total);
    CHECK(failed[k]);
  }
}

}  // namespace test
}  // namespace lab
