// Lab 21's grader: byte-pair merges (Sennrich et al. 2016) and corpus BLEU (Papineni et al. 2002)
// (labs/21_bpe_bleu/README.md).
//
//   lab::bpe_bleu::grade(lab::bpe_bleu::BpeBleu{learn_merges, apply_merges, sentence_counts, corpus_bleu});
//   // "lab 21: k of M checks pass"
#pragma once

#include "lab.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace lab {
namespace bpe_bleu {

using Symbols = std::vector<std::string>;              // a word's symbols, or a sentence's words
using Pair = std::pair<std::string, std::string>;      // a merge: two adjacent symbols
using WordCounts = std::map<std::string, std::int64_t>;  // each distinct word and its frequency (at least 1)

// One hypothesis against its references, for n = 1..4 (index n - 1).
struct Counts {
  std::array<std::size_t, 4> matches{};  // the hypothesis's n-grams, each clipped to its largest count in one reference
  std::array<std::size_t, 4> totals{};   // the hypothesis's n-grams
  std::size_t hyp_length = 0;            // c: the hypothesis's length
  std::size_t ref_length = 0;            // r: the reference length closest to c, the shorter on a tie
};

struct BpeBleu {
  // word counts, n -> up to n merges in the order learned (Algorithm 1): every word as its characters and
  // "</w>", pairs counted with the word's frequency, the most frequent merged (ties: the pair first in string
  // order); fewer when no pair is left.
  std::function<std::vector<Pair>(const WordCounts& words, std::size_t n)> learn_merges;
  // merges, a word -> its symbols (characters and "</w>", merged): repeatedly the earliest-learned merge present.
  std::function<Symbols(const std::vector<Pair>& merges, const std::string& word)> apply_merges;
  // references (at least one), a hypothesis -> its counts.
  std::function<Counts(const std::vector<Symbols>& references, const Symbols& hypothesis)> sentence_counts;
  // references[i] of hypotheses[i] -> corpus BLEU: counts summed over the corpus, BP from the total lengths,
  // the geometric mean of p_1 .. p_4.
  std::function<double(const std::vector<std::vector<Symbols>>& references, const std::vector<Symbols>& hypotheses)>
      corpus_bleu;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const BpeBleu& b, std::ostream& os = std::cout);

}  // namespace bpe_bleu
}  // namespace lab
