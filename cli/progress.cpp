#include "progress.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include <unistd.h>

namespace attn::cli {

ProgressBar::ProgressBar(std::size_t total_steps, std::size_t start_step)
    : total_(total_steps), start_(start_step), last_step_(start_step), tty_(isatty(fileno(stdout))),
      started_(std::chrono::steady_clock::now()), last_draw_(started_) {}

std::string ProgressBar::format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

std::string ProgressBar::line(std::size_t step) const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const double rate = elapsed > 0 ? static_cast<double>(step - start_) / elapsed : 0.0;
  const double left = rate > 0 && step <= total_ ? static_cast<double>(total_ - step) / rate : NAN;
  const int width = 20, filled = total_ && step < total_ ? static_cast<int>(width * step / total_) : width;
  std::ostringstream os;
  os << "[" << std::string(filled, '#') << std::string(width - filled, '.') << "] step " << step << "/" << total_;
  char buf[160];
  std::snprintf(buf, sizeof buf, "  loss %.3f", loss_);
  os << buf;
  if (std::isfinite(accuracy_)) {
    std::snprintf(buf, sizeof buf, "  acc %.1f%%", 100 * accuracy_);
    os << buf;
  }
  std::snprintf(buf, sizeof buf, "  %.1f steps/s  left %s", rate, format_duration(left).c_str());
  os << buf;
  return os.str();
}

void ProgressBar::update(std::size_t step, double loss, double accuracy) {
  last_step_ = step;
  loss_ = loss;
  accuracy_ = accuracy;
  const auto now = std::chrono::steady_clock::now();
  if (tty_) {
    if (now - last_draw_ < std::chrono::milliseconds(100) && step != total_) return;  // don't flood the terminal
    last_draw_ = now;
    std::cout << "\r" << line(step) << "\x1b[K" << std::flush;
    return;
  }
  const std::size_t decile = total_ ? 10 * step / total_ : 10;
  if (decile > last_printed_decile_) {
    last_printed_decile_ = decile;
    last_printed_step_ = step;
    std::cout << line(step) << std::endl;
  }
}

void ProgressBar::finish() {
  if (tty_) std::cout << "\r" << line(last_step_) << "\x1b[K" << std::endl;
  else if (last_step_ != last_printed_step_) {  // not printed yet (an evaluation or the end comes next)
    last_printed_step_ = last_step_;
    std::cout << line(last_step_) << std::endl;
  }
}

}  // namespace attn::cli
