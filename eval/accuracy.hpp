// How good are a model's outputs? Token accuracy and exact match, overall and
// by source length.
//
//   std::vector<Ids> predicted = hypothesis_tokens(greedy_decode(model, src, lengths));
//   Counts all = compare(predicted, gold);          // gold: target ids, without <bos>
//   all.exact_match();                              // fraction of sentences right in full
//   auto table = accuracy_by_length(predicted, gold, lengths);   // length -> Counts
//   std::cout << format_length_table({{"model", table}});
//
// Sentences are compared up to their first <eos>, <pad> ignored. The end counts
// as a token: a prediction of "4 7 <eos>" for gold "4 7 9" gets 2 of 4 tokens right.
#pragma once

#include "../data/vocab.hpp"
#include "../decode/decode.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace attn::models {

using Ids = std::vector<std::int64_t>;

// The tokens of a sentence: everything before the first <eos>, without <pad> and <bos>.
Ids sentence_ids(const Ids& ids, std::int64_t eos_id = data::Vocab::eos_id, std::int64_t pad_id = data::Vocab::pad_id,
                 std::int64_t bos_id = data::Vocab::bos_id);
// The rows of a padded [B, T] Index, each cut by sentence_ids.
std::vector<Ids> sentences_of(const Index& padded);
// The tokens of each hypothesis.
std::vector<Ids> hypothesis_tokens(const std::vector<Hypothesis>& hypotheses);

// Sentences and tokens, right and in total.
struct Counts {
  std::size_t sentences = 0, exact = 0;  // sentences, and those right in full
  std::size_t tokens = 0, correct = 0;   // gold tokens (<eos> included), and those predicted right
  double exact_match() const { return sentences ? double(exact) / double(sentences) : 0.0; }
  double token_accuracy() const { return tokens ? double(correct) / double(tokens) : 0.0; }
  Counts& operator+=(const Counts& other);
};

// Position by position against the gold sentences (cut by sentence_ids, then <eos> appended).
Counts compare(const std::vector<Ids>& predicted, const std::vector<Ids>& gold);
double exact_match(const std::vector<Ids>& predicted, const std::vector<Ids>& gold);
double token_accuracy(const std::vector<Ids>& predicted, const std::vector<Ids>& gold);

// Under teacher forcing: argmax of logits [B, T, V] against targets [B, T],
// positions where the target is <pad> ignored.
double token_accuracy(const Tensor& logits, const Index& targets, std::int64_t pad_id = data::Vocab::pad_id);

// Counts per source length: sentence i goes to row src_lengths[i].
std::map<std::size_t, Counts> accuracy_by_length(const std::vector<Ids>& predicted, const std::vector<Ids>& gold,
                                                 const std::vector<std::size_t>& src_lengths);
// The same counts regrouped into length buckets of `width` (lengths lo..lo+width-1 under lo).
std::map<std::size_t, Counts> bucket_by_length(const std::map<std::size_t, Counts>& by_length, std::size_t width);

// A text table, one row per length, one exact-match column (in %) per named table:
//   length  n    plain  bahdanau
//   4       50   100.0  100.0
std::string format_length_table(const std::vector<std::pair<std::string, std::map<std::size_t, Counts>>>& tables);

}  // namespace attn::models
