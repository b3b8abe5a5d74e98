#include "classification.hpp"

#include "../core/errors.hpp"

#include <string>

namespace attn::models {

ConfusionMatrix::ConfusionMatrix(std::size_t classes) : classes_(classes), counts_(classes * classes, 0) {
  if (classes == 0) throw ValueError("ConfusionMatrix: needs at least one class");
}

namespace {

void check_pair(std::int64_t gold, std::int64_t predicted, std::size_t classes) {
  for (std::int64_t c : {gold, predicted})
    if (c < 0 || c >= static_cast<std::int64_t>(classes))
      throw ValueError("ConfusionMatrix: class " + std::to_string(c) + " out of range for " + std::to_string(classes) +
                       " classes (gold " + std::to_string(gold) + ", predicted " + std::to_string(predicted) + ")");
}

}  // namespace

void ConfusionMatrix::check(std::size_t c, const char* what) const {
  if (c >= classes_)
    throw ValueError(std::string("ConfusionMatrix::") + what + ": class " + std::to_string(c) + " out of range for " +
                     std::to_string(classes_) + " classes");
}

void ConfusionMatrix::add(std::int64_t gold, std::int64_t predicted) {
  check_pair(gold, predicted, classes_);
  ++counts_[static_cast<std::size_t>(gold) * classes_ + static_cast<std::size_t>(predicted)];
  ++total_;
}

void ConfusionMatrix::add(const Index& gold, const Index& predicted) {
  if (gold.dimension() != 1 || predicted.shape() != gold.shape())
    throw ShapeError("ConfusionMatrix: expected gold and predicted of one shape [N], got " +
                     shape_str(Shape(gold.shape().begin(), gold.shape().end())) + " and " +
                     shape_str(Shape(predicted.shape().begin(), predicted.shape().end())));
  for (std::size_t i = 0; i < gold.size(); ++i) check_pair(gold(i), predicted(i), classes_);  // all, before any counts
  for (std::size_t i = 0; i < gold.size(); ++i) {
    ++counts_[static_cast<std::size_t>(gold(i)) * classes_ + static_cast<std::size_t>(predicted(i))];
    ++total_;
  }
}

std::size_t ConfusionMatrix::counts(std::size_t gold, std::size_t predicted) const {
  check(gold, "counts");
  check(predicted, "counts");
  return counts_[gold * classes_ + predicted];
}

std::size_t ConfusionMatrix::support(std::size_t c) const {
  check(c, "support");
  std::size_t n = 0;
  for (std::size_t p = 0; p < classes_; ++p) n += counts(c, p);
  return n;
}

double ConfusionMatrix::accuracy() const {
  std::size_t right = 0;
  for (std::size_t c = 0; c < classes_; ++c) right += counts(c, c);
  return total_ ? double(right) / double(total_) : 0.0;
}

double ConfusionMatrix::precision(std::size_t c) const {
  check(c, "precision");
  std::size_t predicted = 0;
  for (std::size_t g = 0; g < classes_; ++g) predicted += counts(g, c);
  return predicted ? double(counts(c, c)) / double(predicted) : 0.0;
}

double ConfusionMatrix::recall(std::size_t c) const {
  check(c, "recall");
  const std::size_t n = support(c);
  return n ? double(counts(c, c)) / double(n) : 0.0;
}

double ConfusionMatrix::f1(std::size_t c) const {
  check(c, "f1");
  const double p = precision(c), r = recall(c);
  return p + r > 0 ? 2 * p * r / (p + r) : 0.0;
}

double ConfusionMatrix::macro_f1() const {
  double sum = 0;
  for (std::size_t c = 0; c < classes_; ++c) sum += f1(c);
  return sum / double(classes_);
}

xt::xarray<double> ConfusionMatrix::matrix(bool normalize_rows) const {
  xt::xarray<double> m = xt::zeros<double>({classes_, classes_});
  for (std::size_t g = 0; g < classes_; ++g) {
    const std::size_t n = support(g);
    for (std::size_t p = 0; p < classes_; ++p)
      m(g, p) = normalize_rows ? (n ? double(counts(g, p)) / double(n) : 0.0) : double(counts(g, p));
  }
  return m;
}

}  // namespace attn::models
