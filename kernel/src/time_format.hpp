// How %timeit writes a duration: three significant digits in the largest unit that keeps the
// value at 1 or more ("2.5 ms", "999 ns", "1 µs"), as IPython's %timeit does.
#pragma once

#include <string>

namespace kernel {

// seconds >= 0. A value that rounds up to 1000 of a unit reads as 1 of the next ("1 µs", never
// "1e+03 ns"); durations of 1000 s and more are written in whole seconds.
std::string format_time(double seconds);

}  // namespace kernel
