// Lab 16's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/16_kv_cache.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/16_kv_cache/lab.cpp"
}

using lab::kv_cache::grade;
using lab::kv_cache::KVCache;

static lab::Result run(const KVCache& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 16: the worked solution passes every check") {
  lab::test::solution_passes<KVCache>(run, lab::solutions::kv_cache::solution());
}

TEST_CASE("lab 16: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<KVCache>(run, KVCache{stub::decode_step});
}

TEST_CASE("lab 16: every planted wrong solution fails, pointing at its mistake") {
  CHECK(lab::planted::kv_cache::all().size() >= 10);
  lab::test::planted_fail<KVCache>(run, lab::planted::kv_cache::all());
}

TEST_CASE("lab 16: every check fails for at least one planted wrong solution") {
  lab::test::every_check_fails_for_some_planted<KVCache>(run, lab::solutions::kv_cache::solution(), lab::planted::kv_cache::all());
}

TEST_CASE("lab 16: the grader calls the learner's function") {
  KVCache s = lab::solutions::kv_cache::solution();
  int n = 0;
  s.decode_step = lab::test::counted(s.decode_step, n);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  CHECK(n > 0);
}

TEST_CASE("lab 16: a step that recomputes the old keys fails the projection check, with right values") {
  // The cache's point is what it saves: values alone cannot tell a recomputing step from a cached one.
  for (const auto& p : lab::planted::kv_cache::all()) {
    if (p.mistake != "the cache keeps the inputs and every step projects them all again") continue;
    std::ostringstream os;
    lab::Result r = run(p.solution, os);
    INFO(os.str());
    CHECK(os.str().find("  PASS  six steps vs PyTorch") != std::string::npos);
    bool named = false;
    for (const auto& f : r.failures)
      named = named || f.find("the old keys and values recomputed instead of read from the cache") != std::string::npos;
    CHECK(named);
  }
}
