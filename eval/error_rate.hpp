// Error rates of a speech recognizer: the character error rate (CER) and the word error rate
// (WER), both the edit distance to the reference divided by the reference's length.
//
//   // hypotheses first, then references, as torchmetrics' WordErrorRate()(preds, target)
//   ErrorRate w = word_error_rate({"three seven one"}, {"three eleven one"});
//   w.errors == 1; w.substitutions == 1; w.reference_length == 3; w.rate() == 1.0 / 3
//   ErrorRate c = character_error_rate({"three seven one"}, {"three eleven one"});
//   c.errors == 2; c.reference_length == 16; c.rate() == 2.0 / 16   ("seven" for "eleven": D + S)
//
// The edit (Levenshtein) distance counts the fewest substitutions S, insertions I and
// deletions D, each costing 1, that turn the hypothesis into the reference; with N the
// reference's length, the error rate is (S + I + D) / N. It can exceed 1 (a hypothesis
// longer than its reference has insertions).
//
// Over a corpus, as jiwer and most speech papers report it: the edits of every pair summed,
// over the reference lengths summed, not a mean of per-sentence rates (which would weigh a
// one-word sentence as much as a long one).
//
// Characters are UTF-8 characters (data::split_chars: "é" is one), spaces included, and the
// strings are taken as given (jiwer's cer strips leading and trailing whitespace first). Words
// are the runs of non-whitespace (data::split_whitespace).
//
// jiwer's wer(reference, hypothesis) takes the two the other way round: swapping them changes
// N, and so the rate.
#pragma once

#include "../data/example.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace attn::models {

// The Levenshtein distance between two token sequences: substitution, insertion and deletion
// each cost 1, so edit_distance(a, b) == edit_distance(b, a) (nltk.edit_distance's numbers).
std::size_t edit_distance(const data::Tokens& a, const data::Tokens& b);

struct ErrorRate {
  std::size_t errors = 0;            // S + I + D, the edit distance (summed over a corpus)
  std::size_t substitutions = 0;     // S: a reference token read as another
  std::size_t insertions = 0;        // I: a hypothesis token with no reference token
  std::size_t deletions = 0;         // D: a reference token the hypothesis misses
  std::size_t reference_length = 0;  // N

  // errors / reference_length. An empty reference (N == 0) gives 0 when there is no error and
  // a ValueError otherwise: the rate is undefined there, and jiwer refuses an empty reference
  // too. A corpus whose other references are not empty is fine.
  double rate() const;
  // The counts of a corpus are the sums of its sentences' counts.
  ErrorRate& operator+=(const ErrorRate& other);
};

// The errors of one hypothesis against its reference: the edit distance, split into S, I and D
// by one optimal alignment. Several alignments can be optimal ("b c" for "a b": substitute
// both, or delete "a" and insert "c"); the backtrace from the end prefers, among the steps
// that keep the alignment optimal, a match or substitution, then a deletion, then an insertion.
ErrorRate error_counts(const data::Tokens& hypothesis, const data::Tokens& reference);

// Corpus CER and WER: hypotheses[i] against references[i]. ValueError when the lists differ
// in length.
ErrorRate character_error_rate(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references);
ErrorRate word_error_rate(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references);

}  // namespace attn::models
