#include "profiler.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <vector>

namespace attn::profiler {

namespace detail {
bool on = false;
}

namespace {

using Clock = std::chrono::steady_clock;

struct OpTimes {
  long calls = 0;
  double forward = 0, backward = 0;  // seconds
};

std::map<std::string, OpTimes>& times() {
  static std::map<std::string, OpTimes> by_op;
  return by_op;
}
Clock::time_point last_record = Clock::now();

}  // namespace

void enable(bool on) {
  detail::on = on;
  mark();
}
bool enabled() { return detail::on; }
void reset() {
  times().clear();
  mark();
}
void mark() { last_record = Clock::now(); }

void forward_recorded(const char* op) {
  const Clock::time_point now = Clock::now();
  OpTimes& t = times()[op];
  t.calls += 1;
  t.forward += std::chrono::duration<double>(now - last_record).count();
  last_record = now;
}

void backward_ran(const char* op, double seconds) {
  times()[op].backward += seconds;
  mark();  // the backward pass is not the next op's forward
}

std::string table(int per) {
  const double ms = 1e3 / std::max(per, 1);
  std::vector<std::pair<std::string, OpTimes>> rows(times().begin(), times().end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second.forward + a.second.backward > b.second.forward + b.second.backward;
  });
  double forward = 0, backward = 0;
  for (const auto& row : rows) {
    forward += row.second.forward;
    backward += row.second.backward;
  }
  std::string out;
  char line[160];
  std::snprintf(line, sizeof line, "%-22s %9s %12s %12s %7s\n", "op", "calls", "forward ms", "backward ms", "share");
  out += line;
  for (const auto& [op, t] : rows) {
    const double share = 100.0 * (t.forward + t.backward) / std::max(forward + backward, 1e-12);
    std::snprintf(line, sizeof line, "%-22s %9ld %12.3f %12.3f %6.1f%%\n", op.c_str(), t.calls / std::max(per, 1), ms * t.forward,
                  ms * t.backward, share);
    out += line;
  }
  std::snprintf(line, sizeof line, "%-22s %9s %12.3f %12.3f\n", "total", "", ms * forward, ms * backward);
  out += line;
  return out;
}

}  // namespace attn::profiler
