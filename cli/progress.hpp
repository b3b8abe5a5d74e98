// A one-line progress bar for training:
//   [########............] step 300/2000  loss 0.532  acc 87.1%  45.2 steps/s  left 0:37
// Redrawn in place on a terminal; on a pipe or a CI log, printed as plain
// lines about every 10% so the log stays short.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace attn::cli {

class ProgressBar {
 public:
  ProgressBar(std::size_t total_steps, std::size_t start_step = 0);
  // Reports step `step` (1-based) with the latest loss and accuracy (NaN if unknown).
  void update(std::size_t step, double loss, double accuracy);
  // Ends the line (and prints the last state on a pipe).
  void finish();

  static std::string format_duration(double seconds);  // "1:05:09", "4:07", "0:03"

 private:
  std::string line(std::size_t step) const;
  std::size_t total_, start_, last_step_ = 0, last_printed_decile_ = 0, last_printed_step_ = SIZE_MAX;
  double loss_ = 0, accuracy_ = 0;
  bool tty_;
  std::chrono::steady_clock::time_point started_, last_draw_;
};

}  // namespace attn::cli
