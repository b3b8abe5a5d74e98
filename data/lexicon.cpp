#include "lexicon.hpp"

#include "../core/errors.hpp"

#include <xtensor/xview.hpp>

namespace attn::data {

namespace {

void check_side(const std::vector<std::vector<std::int64_t>>& side, std::size_t vocab, const char* name) {
  for (std::size_t s = 0; s < side.size(); ++s) {
    if (side[s].empty())
      throw ValueError(std::string("ibm_model1: ") + name + " sentence " + std::to_string(s) + " is empty");
    for (std::int64_t id : side[s])
      if (id < 0 || static_cast<std::size_t>(id) >= vocab)
        throw ValueError(std::string("ibm_model1: ") + name + " sentence " + std::to_string(s) + " holds id " +
                         std::to_string(id) + ", outside the vocabulary 0.." + std::to_string(vocab - 1));
  }
}

}  // namespace

xt::xarray<double> ibm_model1(const std::vector<std::vector<std::int64_t>>& src,
                              const std::vector<std::vector<std::int64_t>>& tgt, std::size_t src_vocab,
                              std::size_t tgt_vocab, const IBMModel1Options& options) {
  return ibm_model1(src, tgt, src_vocab, tgt_vocab, options, nullptr);
}

xt::xarray<double> ibm_model1(const std::vector<std::vector<std::int64_t>>& src,
                              const std::vector<std::vector<std::int64_t>>& tgt, std::size_t src_vocab,
                              std::size_t tgt_vocab, const IBMModel1Options& options, xt::xarray<double>* null_row) {
  if (src.size() != tgt.size())
    throw ValueError("ibm_model1: " + std::to_string(src.size()) + " source sentences but " +
                     std::to_string(tgt.size()) + " target sentences");
  if (src_vocab == 0 || tgt_vocab == 0) throw ValueError("ibm_model1: the vocabularies must not be empty");
  if (options.iterations == 0)
    throw ValueError("ibm_model1: iterations must be at least 1 (0 would return the uniform start, not a table)");
  // The table is dense: (src_vocab + 1) x tgt_vocab doubles for t and as many for the counts.
  if (double(src_vocab + 1) * double(tgt_vocab) > double(kMaxLexiconEntries))
    throw ValueError("ibm_model1: a table of " + std::to_string(src_vocab) + " x " + std::to_string(tgt_vocab) +
                     " entries is more than this dense implementation holds (" + std::to_string(kMaxLexiconEntries) +
                     "); lower the vocabularies (--min-freq)");
  check_side(src, src_vocab, "source");
  check_side(tgt, tgt_vocab, "target");
  // Row src_vocab is NULL. The start is uniform: the first E step then shares each target word
  // equally among the words of its sentence, whatever the constant.
  const std::size_t null_id = src_vocab;
  xt::xarray<double> t = xt::ones<double>({src_vocab + 1, tgt_vocab}) / double(tgt_vocab);  // [F + 1, E]
  std::vector<bool> seen(src_vocab + 1, false);
  seen[null_id] = options.null_word;
  for (const auto& s : src)
    for (std::int64_t f : s) seen[std::size_t(f)] = true;
  std::vector<std::size_t> from;  // the source words of one pair, NULL first
  for (std::size_t it = 0; it < options.iterations; ++it) {
    xt::xarray<double> count = xt::zeros<double>({src_vocab + 1, tgt_vocab});  // c(e, f): [F + 1, E]
    for (std::size_t p = 0; p < src.size(); ++p) {
      from.clear();
      if (options.null_word) from.push_back(null_id);
      for (std::int64_t f : src[p]) from.push_back(std::size_t(f));
      for (std::int64_t e_id : tgt[p]) {  // every token: a word written twice is counted twice
        const std::size_t e = std::size_t(e_id);
        double total = 0;
        for (std::size_t f : from) total += t(f, e);
        if (!(total > 0)) continue;  // no source word can give e (only when every t(e | f) here fell to 0)
        for (std::size_t f : from) count(f, e) += t(f, e) / total;  // the share of e_i that f_j is credited with
      }
    }
    for (std::size_t f = 0; f <= src_vocab; ++f) {
      if (!seen[f]) continue;  // NULL's row too, without null_word: it stays uniform and unused
      auto row = xt::view(count, f, xt::all());
      const double total = xt::sum(row)();
      if (total > 0) xt::view(t, f, xt::all()) = row / total;
    }
  }
  // Never-seen rows stay uniform; seen rows that no target word ever met cannot exist (total > 0).
  if (null_row) *null_row = xt::view(t, null_id, xt::all());
  return xt::view(t, xt::range(0, src_vocab), xt::all());
}

}  // namespace attn::data
