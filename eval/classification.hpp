// How good is a classifier? Accuracy, the confusion matrix, and per class precision, recall
// and F1, with their unweighted mean over the classes (macro-F1), which an unbalanced test set
// needs: a model that always answers the largest class has that class's share as accuracy,
// but a macro-F1 of at most 1/C over C classes.
//
//   ConfusionMatrix m(5);
//   m.add(gold, predicted);                // or m.add(labels, argmax(logits, 1)), [N] each
//   m.accuracy();  m.macro_f1();  m.f1(2);  m.counts(gold_class, predicted_class);
//
// A class that never occurs and is never predicted has precision, recall and F1 of 0 and still
// counts in the macro mean (as scikit-learn's f1_score(y, p, labels=range(C), average="macro",
// zero_division=0)). A class id out of range is a ValueError, in add() and in every accessor.
#pragma once

#include "../core/tensor.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attn::models {

class ConfusionMatrix {
 public:
  explicit ConfusionMatrix(std::size_t classes);  // ValueError if 0

  // One example, or a batch: gold and predicted [N] class ids, each in 0..classes-1 (ValueError
  // otherwise, and then nothing of the batch is counted).
  void add(std::int64_t gold, std::int64_t predicted);
  void add(const Index& gold, const Index& predicted);

  std::size_t classes() const { return classes_; }
  std::size_t total() const { return total_; }
  std::size_t counts(std::size_t gold, std::size_t predicted) const;
  std::size_t support(std::size_t c) const;  // examples whose gold class is c

  double accuracy() const;        // the diagonal over the total (0 when empty)
  double precision(std::size_t c) const;  // right among those predicted c
  double recall(std::size_t c) const;     // right among those that are c
  double f1(std::size_t c) const;         // 2 P R / (P + R)
  double macro_f1() const;                // the mean of f1(c) over every class

  // [classes, classes] of float64: row = gold class, column = predicted; the counts, or with
  // normalize_rows each row divided by its total so that it sums to 1 (a row with no example
  // stays 0), for a heatmap.
  xt::xarray<double> matrix(bool normalize_rows = false) const;

 private:
  std::size_t classes_, total_ = 0;
  void check(std::size_t c, const char* what) const;
  std::vector<std::size_t> counts_;  // [gold * classes + predicted]
};

}  // namespace attn::models
