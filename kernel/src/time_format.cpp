#include "time_format.hpp"

#include <iomanip>
#include <sstream>

namespace kernel {

namespace {
std::string three_digits(double value) {
  std::ostringstream s;
  s << std::setprecision(3) << value;
  return s.str();
}
}  // namespace

std::string format_time(double seconds) {
  const char* units[] = {"s", "ms", "\xC2\xB5s", "ns"};
  int u = 0;
  while (u < 3 && seconds < 1.0) seconds *= 1000.0, ++u;
  if (u > 0 && std::stod(three_digits(seconds)) >= 1000.0) seconds /= 1000.0, --u;  // 999.7 ns is 1 µs
  std::ostringstream s;
  if (std::stod(three_digits(seconds)) >= 1000.0) s << std::fixed << std::setprecision(0) << seconds;  // seconds only
  else s << three_digits(seconds);
  s << " " << units[u];
  return s.str();
}

}  // namespace kernel
