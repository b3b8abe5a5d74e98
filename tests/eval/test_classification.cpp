// models::ConfusionMatrix (eval/classification.hpp): NLTK's values (tools/reference/classification.py),
// a class absent from the test set, the normalized matrix, bad input.
#include "../helpers.hpp"
#include "../reference.hpp"

using attn::Index;
using attn::models::ConfusionMatrix;

TEST_CASE("ConfusionMatrix: counts, accuracy, precision, recall, F1 and macro-F1 equal NLTK's") {
  test::Reference ref("classification");
  const Index gold = xt::cast<std::int64_t>(ref.array("five", "gold"));
  const Index predicted = xt::cast<std::int64_t>(ref.array("five", "predicted"));
  ConfusionMatrix m(5);
  m.add(gold, predicted);
  CHECK(m.total() == 40);
  CHECK(xt::allclose(m.matrix(), ref.array("five", "counts"), 0.0, 0.0));
  CHECK(m.accuracy() == doctest::Approx(ref.array("five", "accuracy")(0)).epsilon(1e-15));
  CHECK(m.macro_f1() == doctest::Approx(ref.array("five", "macro_f1")(0)).epsilon(1e-15));
  for (std::size_t c = 0; c < 5; ++c) {
    INFO("class " << c);
    CHECK(m.precision(c) == doctest::Approx(ref.array("five", "precision")(c)).epsilon(1e-15));
    CHECK(m.recall(c) == doctest::Approx(ref.array("five", "recall")(c)).epsilon(1e-15));
    CHECK(m.f1(c) == doctest::Approx(ref.array("five", "f1")(c)).epsilon(1e-15));
  }
  CHECK(m.precision(3) == 0.0);  // never predicted
}

TEST_CASE("ConfusionMatrix: one class always answered; a class with no example; rows normalized") {
  ConfusionMatrix m(3);
  for (int i = 0; i < 3; ++i) m.add(0, 0);
  m.add(1, 0);
  CHECK(m.accuracy() == doctest::Approx(0.75));
  CHECK(m.f1(0) == doctest::Approx(2 * 0.75 * 1.0 / 1.75));
  CHECK(m.f1(1) == 0.0);
  CHECK(m.support(2) == 0);
  CHECK(m.macro_f1() == doctest::Approx((2 * 0.75 / 1.75) / 3));  // class 2 counts, with F1 0
  const xt::xarray<double> rows = m.matrix(true);
  CHECK(rows(0, 0) == 1.0);
  CHECK(rows(1, 0) == 1.0);
  CHECK(rows(2, 0) == 0.0);
  CHECK(ConfusionMatrix(2).accuracy() == 0.0);
}

TEST_CASE("ConfusionMatrix: bad classes and shapes say what is wrong") {
  ConfusionMatrix m(2);
  CHECK_THROWS_WITH_SUBSTR(m.add(0, 2), attn::ValueError, "ConfusionMatrix: class 2 out of range for 2 classes");
  CHECK_THROWS_WITH_SUBSTR(m.add(-1, 0), attn::ValueError, "class -1 out of range");
  CHECK_THROWS_WITH_SUBSTR(m.add(Index{0, 1}, Index{0}), attn::ShapeError, "expected gold and predicted of one shape [N]");
  CHECK_THROWS_WITH_SUBSTR(ConfusionMatrix(0), attn::ValueError, "at least one class");
  CHECK_THROWS_WITH_SUBSTR(m.f1(2), attn::ValueError, "ConfusionMatrix::f1: class 2 out of range for 2 classes");
  CHECK_THROWS_WITH_SUBSTR(m.counts(0, 5), attn::ValueError, "ConfusionMatrix::counts: class 5");
  m.add(0, 0);
  CHECK_THROWS_WITH_SUBSTR(m.add(Index{1, 0, 7}, Index{1, 1, 0}), attn::ValueError, "class 7 out of range");
  CHECK(m.total() == 1);  // nothing of the bad batch was counted
}
