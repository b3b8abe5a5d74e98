// Accuracy and alignment metrics (see metrics.hpp).
#include "metrics.hpp"

#include "../core/ops.hpp"

#include <xtensor/xview.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

namespace attn::models {

Ids sentence_ids(const Ids& ids, std::int64_t eos_id, std::int64_t pad_id, std::int64_t bos_id) {
  Ids out;
  for (std::int64_t id : ids) {
    if (id == eos_id) break;
    if (id != pad_id && id != bos_id) out.push_back(id);
  }
  return out;
}

std::vector<Ids> sentences_of(const Index& padded) {
  if (padded.dimension() != 2)
    throw ShapeError("sentences_of: expected ids [B, T], got " +
                     shape_str(Shape(padded.shape().begin(), padded.shape().end())));
  std::vector<Ids> out;
  for (std::size_t b = 0; b < padded.shape()[0]; ++b) {
    Ids row;
    for (std::size_t t = 0; t < padded.shape()[1]; ++t) row.push_back(padded(b, t));
    out.push_back(sentence_ids(row));
  }
  return out;
}

std::vector<Ids> hypothesis_tokens(const std::vector<Hypothesis>& hypotheses) {
  std::vector<Ids> out;
  for (const Hypothesis& h : hypotheses) out.push_back(h.tokens);
  return out;
}

Counts& Counts::operator+=(const Counts& other) {
  sentences += other.sentences;
  exact += other.exact;
  tokens += other.tokens;
  correct += other.correct;
  return *this;
}

namespace {

void check_same_size(const char* op, std::size_t a, std::size_t b, const char* what) {
  if (a != b)
    throw ValueError(std::string(op) + ": " + std::to_string(a) + " predicted sentences but " + std::to_string(b) +
                     " " + what);
}

// One sentence: its tokens plus <eos>, position by position.
Counts compare_one(const Ids& predicted, const Ids& gold) {
  Ids p = sentence_ids(predicted), g = sentence_ids(gold);
  p.push_back(data::Vocab::eos_id);
  g.push_back(data::Vocab::eos_id);
  Counts c;
  c.sentences = 1;
  c.exact = p == g ? 1 : 0;
  c.tokens = g.size();
  for (std::size_t i = 0; i < std::min(p.size(), g.size()); ++i) c.correct += p[i] == g[i] ? 1 : 0;
  return c;
}

}  // namespace

Counts compare(const std::vector<Ids>& predicted, const std::vector<Ids>& gold) {
  check_same_size("compare", predicted.size(), gold.size(), "gold sentences");
  Counts total;
  for (std::size_t i = 0; i < gold.size(); ++i) total += compare_one(predicted[i], gold[i]);
  return total;
}

double exact_match(const std::vector<Ids>& predicted, const std::vector<Ids>& gold) {
  return compare(predicted, gold).exact_match();
}

double token_accuracy(const std::vector<Ids>& predicted, const std::vector<Ids>& gold) {
  return compare(predicted, gold).token_accuracy();
}

double token_accuracy(const Tensor& logits, const Index& targets, std::int64_t pad_id) {
  const Shape ls = logits.shape(), ts(targets.shape().begin(), targets.shape().end());
  if (ls.size() != 3 || ts.size() != 2 || ls[0] != ts[0] || ls[1] != ts[1])
    throw ShapeError("token_accuracy: expected logits [B, T, V] and targets [B, T], got logits " + shape_str(ls) +
                     " and targets " + shape_str(ts));
  const Index predicted = argmax(logits, -1);  // [B, T]
  std::size_t total = 0, correct = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (targets.flat(i) == pad_id) continue;
    ++total;
    correct += predicted.flat(i) == targets.flat(i) ? 1 : 0;
  }
  return total ? double(correct) / double(total) : 0.0;
}

std::map<std::size_t, Counts> accuracy_by_length(const std::vector<Ids>& predicted, const std::vector<Ids>& gold,
                                                 const std::vector<std::size_t>& src_lengths) {
  check_same_size("accuracy_by_length", predicted.size(), gold.size(), "gold sentences");
  check_same_size("accuracy_by_length", predicted.size(), src_lengths.size(), "source lengths");
  std::map<std::size_t, Counts> table;
  for (std::size_t i = 0; i < gold.size(); ++i) table[src_lengths[i]] += compare_one(predicted[i], gold[i]);
  return table;
}

std::map<std::size_t, Counts> bucket_by_length(const std::map<std::size_t, Counts>& by_length, std::size_t width) {
  if (width == 0) throw ValueError("bucket_by_length: width must be at least 1");
  std::map<std::size_t, Counts> buckets;
  for (const auto& [length, counts] : by_length) buckets[length / width * width] += counts;
  return buckets;
}

std::string format_length_table(const std::vector<std::pair<std::string, std::map<std::size_t, Counts>>>& tables) {
  std::set<std::size_t> lengths;
  for (const auto& [name, table] : tables)
    for (const auto& [length, counts] : table) lengths.insert(length);
  std::ostringstream os;
  os << "length      n";
  for (const auto& [name, table] : tables) os << "  " << std::string(std::max<int>(0, 9 - int(name.size())), ' ') << name;
  os << "\n";
  char cell[64];
  for (std::size_t length : lengths) {
    std::size_t n = 0;
    for (const auto& [name, table] : tables)
      if (table.count(length)) n = std::max(n, table.at(length).sentences);
    std::snprintf(cell, sizeof cell, "%6zu %6zu", length, n);
    os << cell;
    for (const auto& [name, table] : tables) {
      const auto it = table.find(length);
      if (it == table.end()) std::snprintf(cell, sizeof cell, "%*s", int(std::max<std::size_t>(name.size(), 9)) + 2, "-");
      else std::snprintf(cell, sizeof cell, "%*.1f", int(std::max<std::size_t>(name.size(), 9)) + 2,
                         100.0 * it->second.exact_match());
      os << cell;
    }
    os << "\n";
  }
  return os.str();
}

AlignmentStats& AlignmentStats::operator+=(const AlignmentStats& other) {
  steps += other.steps;
  hits += other.hits;
  off_by_one += other.off_by_one;
  gold_weight += other.gold_weight;
  return *this;
}

AlignmentStats alignment_accuracy(const xt::xarray<double>& weights, std::size_t src_length, const Ids& alignment) {
  if (weights.dimension() != 2)
    throw ShapeError("alignment_accuracy: expected weights [T, S], got " +
                     shape_str(Shape(weights.shape().begin(), weights.shape().end())));
  const std::size_t steps = std::min<std::size_t>(weights.shape()[0], alignment.size());
  const std::size_t S = std::min<std::size_t>(weights.shape()[1], src_length);
  AlignmentStats stats;
  for (std::size_t t = 0; t < steps; ++t) {
    const std::int64_t gold = alignment[t];
    if (gold < 0) continue;  // this target token comes from no source position
    if (static_cast<std::size_t>(gold) >= S)
      throw ValueError("alignment_accuracy: gold position " + std::to_string(gold) + " at step " + std::to_string(t) +
                       " is past the source length " + std::to_string(S));
    std::size_t peak = 0;  // argmax_j a_tj over the valid source positions
    for (std::size_t j = 1; j < S; ++j)
      if (weights(t, j) > weights(t, peak)) peak = j;
    const std::int64_t distance = std::abs(static_cast<std::int64_t>(peak) - gold);
    ++stats.steps;
    stats.hits += distance == 0 ? 1 : 0;
    stats.off_by_one += distance == 1 ? 1 : 0;
    stats.gold_weight += weights(t, static_cast<std::size_t>(gold));
  }
  return stats;
}

AlignmentStats alignment_accuracy(const Tensor& attention, const std::vector<std::size_t>& src_lengths,
                                  const std::vector<Ids>& alignments) {
  const Shape shape = attention.shape();
  if (shape.size() != 3 || shape[0] != src_lengths.size() || shape[0] != alignments.size())
    throw ShapeError("alignment_accuracy: expected attention [B, T, S] with B = " +
                     std::to_string(src_lengths.size()) + " lengths and " + std::to_string(alignments.size()) +
                     " alignments, got " + shape_str(shape));
  const xt::xarray<double> all = attention.to_array();
  AlignmentStats total;
  for (std::size_t b = 0; b < shape[0]; ++b) {
    xt::xarray<double> weights = xt::view(all, b, xt::all(), xt::all());  // [T, S]
    total += alignment_accuracy(weights, src_lengths[b], alignments[b]);
  }
  return total;
}

AlignmentStats alignment_accuracy(const std::vector<Hypothesis>& hypotheses, const std::string& name,
                                  const std::vector<std::size_t>& src_lengths, const std::vector<Ids>& alignments) {
  check_same_size("alignment_accuracy", hypotheses.size(), src_lengths.size(), "source lengths");
  check_same_size("alignment_accuracy", hypotheses.size(), alignments.size(), "alignments");
  AlignmentStats total;
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    if (hypotheses[i].tokens.empty()) continue;
    Tensor weights = attention_matrix(hypotheses[i], name);     // [T, S] or [T, H, S]
    if (weights.dim() == 3) weights = mean(weights, {1});      // [T, S]: the heads' average
    total += alignment_accuracy(weights.to_array(), src_lengths[i], alignments[i]);
  }
  return total;
}

}  // namespace attn::models
