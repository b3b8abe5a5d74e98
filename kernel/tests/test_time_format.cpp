// %timeit's durations (kernel/src/time_format.hpp): never an exponent, the unit that fits.
#include "time_format.hpp"

#include <doctest/doctest.h>

using kernel::format_time;

TEST_CASE("format_time: three digits in the unit that keeps the value at 1 or more") {
  CHECK(format_time(2.5e-3) == "2.5 ms");
  CHECK(format_time(1.0) == "1 s");
  CHECK(format_time(12.3456) == "12.3 s");
  CHECK(format_time(999e-9) == "999 ns");
  CHECK(format_time(1.234e-6) == "1.23 \xC2\xB5s");
  CHECK(format_time(0.0) == "0 ns");
}

TEST_CASE("format_time: a value that rounds up to 1000 reads as 1 of the next unit") {
  CHECK(format_time(999.7e-9) == "1 \xC2\xB5s");  // %timeit printed "1e+03 ns"
  CHECK(format_time(0.99996) == "1 s");
  CHECK(format_time(999.96e-3) == "1 s");
}

TEST_CASE("format_time: long durations in whole seconds") {
  CHECK(format_time(1234.4) == "1234 s");
  CHECK(format_time(999.96) == "1000 s");
}
