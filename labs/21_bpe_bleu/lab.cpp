// Lab 21: byte-pair merges (Sennrich et al. 2016) and corpus BLEU (Papineni et al. 2002).
// What to write: labs/21_bpe_bleu/README.md. Check it: tools/lab.sh 21 (your copy is labs/work/21_bpe_bleu.cpp).
#include "labs/grader/lab21_bpe_bleu.hpp"

using lab::bpe_bleu::Counts;
using lab::bpe_bleu::Pair;
using lab::bpe_bleu::Symbols;
using lab::bpe_bleu::WordCounts;

// ---- your code ----
// words (each distinct word -> its frequency), n -> up to n merges, in the order learned (Algorithm 1):
//   each word starts as its characters, then "</w>" (attn::data::split_chars(word) gives the characters; é is one);
//   repeat n times: count every adjacent pair of symbols inside each word, times the word's frequency; take the most
//   frequent (ties: the pair first in string order, std::pair's <, as a std::map iterates); replace it in every word,
//   left to right (a a a -> aa a); stop early when no word has two symbols left.
std::vector<Pair> learn_merges(const WordCounts& words, std::size_t n) {
  lab::not_implemented("learn_merges");
}

// merges (as learn_merges returns them), a word -> its symbols, "</w>" kept ({"low", "est</w>"} for "lowest"):
//   start from its characters and "</w>"; repeat: of its adjacent pairs, take the one earliest in `merges` and
//   replace it everywhere, left to right; stop when no adjacent pair is in `merges`.
Symbols apply_merges(const std::vector<Pair>& merges, const std::string& word) {
  lab::not_implemented("apply_merges");
}

// references (one or more), a hypothesis (words) -> for n = 1..4 (index n - 1):
//   totals[n-1]  = the hypothesis's n-grams (every occurrence; a std::map<Symbols, std::size_t> counts them)
//   matches[n-1] = the sum over its n-grams g of min(count of g in the hypothesis, largest count of g in one reference)
//   hyp_length = c, its length; ref_length = r, the reference length closest to c, the shorter on a tie.
Counts sentence_counts(const std::vector<Symbols>& references, const Symbols& hypothesis) {
  lab::not_implemented("sentence_counts");
}

// references[i] (one or more) of hypotheses[i] -> corpus BLEU: matches, totals, c and r summed over every sentence,
//   p_n = matches / totals, BP = 1 if c > r else exp(1 - r / c), BLEU = BP exp((log p_1 + ... + log p_4) / 4),
//   0 when a p_n is 0.
double corpus_bleu(const std::vector<std::vector<Symbols>>& references, const std::vector<Symbols>& hypotheses) {
  lab::not_implemented("corpus_bleu");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::bpe_bleu::BpeBleu mine{learn_merges, apply_merges, sentence_counts, corpus_bleu};
  return lab::bpe_bleu::grade(mine).exit_code();
}
#endif
