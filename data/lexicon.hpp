// A word-translation table learned from a parallel corpus by IBM model 1 (Brown, Della Pietra,
// Della Pietra & Mercer 1993): t(e | f), the probability that source word f translates as target
// word e, estimated by expectation-maximisation over which source word each target word came from.
//
//   std::vector<std::vector<std::int64_t>> src = ..., tgt = ...;   // ids, one sentence each
//   xt::xarray<double> t = ibm_model1(src, tgt, src_vocab.size(), tgt_vocab.size(), {/*iterations=*/5});
//   t(f, e)     // t(e | f): row f sums to 1 over the target words
//
// One EM iteration, with f_0 the empty word NULL that a target word with no source may come from:
//   E   for every pair and target word e_i:  c(e_i, f_j) += t(e_i | f_j) / sum_k t(e_i | f_k)   (k over NULL, f_1..f_m)
//   M   t(e | f) = c(e, f) / sum_e' c(e', f)
// starting from a uniform t. Arthur, Neubig & Nakamura (2016) bias a translation model's output
// with such a table (BahdanauConfig::lexicon_bias, models/bahdanau.hpp).
#pragma once

#include "../core/config.hpp"

#include <cstdint>
#include <vector>

namespace attn::data {

// The largest table ibm_model1 builds, (src_vocab + 1) * tgt_vocab entries: 2^26 doubles are 512 MB,
// and EM holds two such tables.
constexpr std::size_t kMaxLexiconEntries = std::size_t(1) << 26;

struct IBMModel1Options {
  std::size_t iterations = 5;  // EM iterations (the likelihood rises with each)
  bool null_word = true;       // a target word may come from no source word
};

// t(e | f) as a [src_vocab, tgt_vocab] table: row f sums to 1 for every source id that occurs; a row
// of an id that never occurs is uniform. Pairs that never occur in one sentence pair get 0. Ids are
// used as they are (specials too, if the sentences hold them). Counts are per token: a target word
// written twice in one sentence is credited twice (NLTK's IBMModel1 credits it once in total per
// sentence; NLTK also always adds NULL and floors every t at 1e-12, so the two agree to 1e-12 only
// where no target word repeats within a sentence). ValueError if src and tgt differ in length, a
// sentence is empty, an id is outside its vocabulary, iterations is 0, or the table would hold more
// than kMaxLexiconEntries entries. Without options.null_word, *null_row (below) is uniform.
xt::xarray<double> ibm_model1(const std::vector<std::vector<std::int64_t>>& src,
                              const std::vector<std::vector<std::int64_t>>& tgt, std::size_t src_vocab,
                              std::size_t tgt_vocab, const IBMModel1Options& options = {});

// The same, and t(e | NULL) [tgt_vocab] in *null_row (when null_row is not null).
xt::xarray<double> ibm_model1(const std::vector<std::vector<std::int64_t>>& src,
                              const std::vector<std::vector<std::int64_t>>& tgt, std::size_t src_vocab,
                              std::size_t tgt_vocab, const IBMModel1Options& options, xt::xarray<double>* null_row);

}  // namespace attn::data
