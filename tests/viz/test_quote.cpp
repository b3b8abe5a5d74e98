// attn::notebook::format: the text a quoted number takes in the prose.
// The display half (quote() itself) needs the kernel and is exercised by
// tools/quotes.py's tests on executed notebooks.
#include <doctest/doctest.h>

#include "viz/quote.hpp"

// quote() calls this; the test never calls quote(), but the header declares it.
extern "C" void attn_kernel_display(const char*, const char*, const char*, int) {}
extern "C" void attn_kernel_clear_output(int) {}

using attn::notebook::format;

TEST_CASE("format: fixed, percent, grouped") {
  CHECK(format(0.30012, ".2f") == "0.30");
  CHECK(format(0.52, ".1%") == "52.0%");
  CHECK(format(0.9876, ".0%") == "99%");
  CHECK(format(4004.0, ",.0f") == "4,004");
  CHECK(format(-1234567.25, ",.1f") == "-1,234,567.2");
  CHECK(format(12.0, ".0f") == "12");
  CHECK(format(-0.0001, ".2f") == "0.00");  // a reader sees no sign on zero
}

TEST_CASE("format: powers of ten written for prose") {
  CHECK(format(2.22045e-10, ".1e") == "2.2 × 10⁻¹⁰");
  CHECK(format(3.0e5, ".0e") == "3 × 10⁵");
  CHECK(format(0.000123, ".3g") == "0.000123");
  CHECK(format(1.234e-5, ".3g") == "1.23 × 10⁻⁵");
  CHECK(format(47.25, ".3g") == "47.2");
}

TEST_CASE("format and quote refuse what they cannot write") {
  CHECK_THROWS_WITH(format(1.0, "3f"), doctest::Contains("is not [,][.N](f|%|e|g)"));
  CHECK_THROWS_WITH(format(1.0, ".2x"), doctest::Contains("is not [,][.N](f|%|e|g)"));
  CHECK_THROWS_WITH(format(1.0, ".f"), doctest::Contains("bad precision"));
  CHECK_THROWS_WITH(format(std::nan(""), ".2f"), doctest::Contains("not finite"));
  CHECK_THROWS_WITH(attn::notebook::quote("bad name", "1"), doctest::Contains("'bad name'"));
  CHECK_THROWS_WITH(attn::notebook::quote("x", ""), doctest::Contains("one non-empty line"));
}
