#include "error_rate.hpp"

#include "../core/errors.hpp"
#include "../data/vocab.hpp"

#include <algorithm>

namespace attn::models {

namespace {

// d[i][j]: the distance between the first i reference tokens and the first j hypothesis
// tokens, one row per reference prefix, (N + 1) x (M + 1) in one vector.
std::vector<std::size_t> distance_table(const data::Tokens& hypothesis, const data::Tokens& reference) {
  const std::size_t N = reference.size(), M = hypothesis.size(), W = M + 1;
  std::vector<std::size_t> d((N + 1) * W);
  for (std::size_t j = 0; j <= M; ++j) d[j] = j;  // j insertions
  for (std::size_t i = 1; i <= N; ++i) {
    d[i * W] = i;  // i deletions
    for (std::size_t j = 1; j <= M; ++j) {
      const std::size_t diagonal = d[(i - 1) * W + j - 1] + (reference[i - 1] == hypothesis[j - 1] ? 0 : 1);
      d[i * W + j] = std::min({diagonal, d[(i - 1) * W + j] + 1, d[i * W + j - 1] + 1});
    }
  }
  return d;
}

ErrorRate corpus(const char* op, const std::vector<std::string>& hypotheses, const std::vector<std::string>& references,
                 data::Tokens (*split)(const std::string&)) {
  if (hypotheses.size() != references.size())
    throw ValueError(std::string(op) + ": expected one reference per hypothesis, got " +
                     std::to_string(hypotheses.size()) + " hypotheses and " + std::to_string(references.size()) +
                     " references");
  ErrorRate total;
  for (std::size_t i = 0; i < hypotheses.size(); ++i) total += error_counts(split(hypotheses[i]), split(references[i]));
  return total;
}

}  // namespace

std::size_t edit_distance(const data::Tokens& a, const data::Tokens& b) {
  // Two rows are enough for the distance alone.
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      current[j] = std::min({previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1), previous[j] + 1, current[j - 1] + 1});
    std::swap(previous, current);
  }
  return previous[b.size()];
}

double ErrorRate::rate() const {
  if (reference_length > 0) return double(errors) / double(reference_length);
  if (errors == 0) return 0.0;
  throw ValueError("ErrorRate::rate: " + std::to_string(errors) +
                   " errors against an empty reference (reference_length 0): the rate is undefined");
}

ErrorRate& ErrorRate::operator+=(const ErrorRate& other) {
  errors += other.errors;
  substitutions += other.substitutions;
  insertions += other.insertions;
  deletions += other.deletions;
  reference_length += other.reference_length;
  return *this;
}

ErrorRate error_counts(const data::Tokens& hypothesis, const data::Tokens& reference) {
  const std::vector<std::size_t> d = distance_table(hypothesis, reference);
  const std::size_t W = hypothesis.size() + 1;
  ErrorRate e;
  e.reference_length = reference.size();
  e.errors = d.back();
  // Walk back from the end along steps that keep the total: diagonal, then up, then left.
  std::size_t i = reference.size(), j = hypothesis.size();
  while (i > 0 || j > 0) {
    const std::size_t here = d[i * W + j];
    if (i > 0 && j > 0) {
      const bool same = reference[i - 1] == hypothesis[j - 1];
      if (d[(i - 1) * W + j - 1] + (same ? 0 : 1) == here) {
        e.substitutions += same ? 0 : 1;
        --i;
        --j;
        continue;
      }
    }
    if (i > 0 && d[(i - 1) * W + j] + 1 == here) {
      ++e.deletions;
      --i;
    } else {
      ++e.insertions;
      --j;
    }
  }
  return e;
}

ErrorRate character_error_rate(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references) {
  return corpus("character_error_rate", hypotheses, references, data::split_chars);
}

ErrorRate word_error_rate(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references) {
  return corpus("word_error_rate", hypotheses, references, data::split_whitespace);
}

}  // namespace attn::models
