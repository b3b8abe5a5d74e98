// Accuracy and exact match (see accuracy.hpp).
#include "accuracy.hpp"

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

}  // namespace attn::models
