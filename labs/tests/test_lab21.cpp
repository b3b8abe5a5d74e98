// Lab 21's grader proves it can fail (labs/tests/lab_test.hpp).
#include "labs/planted/21_bpe_bleu.hpp"
#include "labs/tests/lab_test.hpp"

#define LAB_NO_MAIN
namespace stub {
#include "labs/21_bpe_bleu/lab.cpp"
}

using lab::bpe_bleu::BpeBleu;
using lab::bpe_bleu::grade;

static lab::Result run(const BpeBleu& s, std::ostream& os) { return grade(s, os); }

TEST_CASE("lab 21: the worked solution passes every check") {
  lab::test::solution_passes<BpeBleu>(run, lab::solutions::bpe_bleu::solution());
}

TEST_CASE("lab 21: the untouched stub fails every check with 'not implemented'") {
  lab::test::stub_fails_every_check<BpeBleu>(
      run, BpeBleu{stub::learn_merges, stub::apply_merges, stub::sentence_counts, stub::corpus_bleu});
}

TEST_CASE("lab 21: every planted wrong solution fails, pointing at its mistake") {
  const auto planted = lab::planted::bpe_bleu::all();
  CHECK(planted.size() >= 20);
  lab::test::planted_fail<BpeBleu>(run, planted);
}

TEST_CASE("lab 21: every check fails for at least one planted wrong solution") {
  lab::test::every_check_fails_for_some_planted<BpeBleu>(run, lab::solutions::bpe_bleu::solution(),
                                                         lab::planted::bpe_bleu::all());
}

TEST_CASE("lab 21: the grader calls the learner's functions") {
  BpeBleu s = lab::solutions::bpe_bleu::solution();
  int n[4] = {0, 0, 0, 0};
  s.learn_merges = lab::test::counted(s.learn_merges, n[0]);
  s.apply_merges = lab::test::counted(s.apply_merges, n[1]);
  s.sentence_counts = lab::test::counted(s.sentence_counts, n[2]);
  s.corpus_bleu = lab::test::counted(s.corpus_bleu, n[3]);
  std::ostringstream os;
  CHECK(run(s, os).all_pass());
  for (int k : n) CHECK(k > 0);
}
