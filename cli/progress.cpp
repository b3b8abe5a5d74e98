#include "progress.hpp"

#include <algorithm>
#include <cctype>
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

namespace {

constexpr double kQuietSeconds = 2.0;  // a phase without an estimate says nothing if it ends sooner

}  // namespace

Phase::Phase(std::string what, std::function<std::string()> status) : Phase(std::move(what), 0, {}) {
  std::lock_guard<std::mutex> lock(mutex_);  // the ticker reads it under the same lock
  status_ = std::move(status);
}

Phase::Phase(std::string what, double estimate_seconds, std::function<double()> fraction)
    : what_(std::move(what)), estimate_(estimate_seconds), fraction_(std::move(fraction)), tty_(isatty(fileno(stdout))),
      started_(std::chrono::steady_clock::now()) {
  if (estimate_ > 0) {
    shown_ = true;
    std::cout << line(true) << std::endl;
  }
  ticker_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex_);
    // The first report comes after kQuietSeconds (a short phase says nothing), then every second
    // on a terminal and every 30 s on a pipe.
    auto next = started_ + std::chrono::milliseconds(static_cast<long>(1000 * kQuietSeconds));
    while (!wake_.wait_until(lock, next, [this] { return stopped_; })) {
      const bool first = !shown_;
      shown_ = true;
      if (tty_) std::cout << "\r" << line(first) << "\x1b[K" << std::flush;
      else std::cout << line(first) << std::endl;
      next = std::chrono::steady_clock::now() + std::chrono::seconds(tty_ ? 1 : 30);
    }
  });
}

Phase::~Phase() {
  stop();
  if (shown_ && tty_) std::cout << std::endl;  // the work threw: end the line it was redrawing
}

void Phase::stop() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

void Phase::done(const std::string& result) {
  const bool running = ticker_.joinable();
  stop();
  if (!running || !shown_) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  std::cout << (tty_ ? "\r" : "") << what_ << ": done in " << ProgressBar::format_duration(seconds)
            << (result.empty() ? "" : ", " + result) << (tty_ ? "\x1b[K" : "") << std::endl;
  shown_ = false;  // nothing left to end
}

std::string Phase::line(bool first) const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const double share = fraction_ ? fraction_() : -1.0;
  std::ostringstream os;
  os << what_;
  if (first && elapsed < 0.5) {  // the line printed as the phase starts: its estimate only
    os << " (about " << ProgressBar::format_duration(estimate_) << ")...";
    return os.str();
  }
  os << ": " << ProgressBar::format_duration(elapsed);
  if (status_) {
    os << ", " << status_();
  } else if (share > 0 && share <= 1) {  // the share done, and the time left at the rate so far
    char percent[16];
    std::snprintf(percent, sizeof percent, "%.0f%%", 100 * share);
    os << ", " << percent << ", left " << ProgressBar::format_duration(elapsed * (1 - share) / share);
  } else if (estimate_ > 0 && elapsed <= estimate_) {
    os << " of about " << ProgressBar::format_duration(estimate_);
  } else if (estimate_ > 0) {  // a busier machine than the estimate saw: say so rather than a time left below 0
    os << ", over the " << ProgressBar::format_duration(estimate_) << " estimated";
  }
  return os.str();
}

CountedFile::CountedFile(const std::string& path) : file_(std::fopen(path.c_str(), "rb")) {
  if (file_ && std::fseek(file_, 0, SEEK_END) == 0) {
    const long size = std::ftell(file_);
    size_ = size > 0 ? static_cast<std::uint64_t>(size) : 0;
    std::rewind(file_);
  }
}

CountedFile::~CountedFile() {
  if (file_) std::fclose(file_);
}

double CountedFile::fraction() const {
  return size_ ? std::min(1.0, double(read_.load()) / double(size_)) : 0.0;
}

CountedFile::int_type CountedFile::underflow() {
  if (!file_) return traits_type::eof();
  const std::size_t n = std::fread(buffer_, 1, sizeof buffer_, file_);
  if (n == 0) return traits_type::eof();  // the end, or a read error: the reader sees the stream end
  read_ += n;
  setg(buffer_, buffer_, buffer_ + n);
  return traits_type::to_int_type(buffer_[0]);
}

namespace {

// Ctrl-C during training: the handler only raises this flag (see SigintCatcher).
std::atomic<bool> stop_flag{false};
static_assert(std::atomic<bool>::is_always_lock_free, "a signal handler may only touch a lock-free atomic");

extern "C" void on_sigint(int) {
  stop_flag.store(true);
  static const char note[] = "\nattn: Ctrl-C: stopping after this step, to commit a checkpoint (Ctrl-C again stops at once)\n";
  const ssize_t ignored = ::write(2, note, sizeof note - 1);  // async-signal-safe, unlike std::cerr
  (void)ignored;
}

}  // namespace

SigintCatcher::SigintCatcher() {
  stop_flag.store(false);
  struct sigaction action {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_RESETHAND;
  ::sigaction(SIGINT, &action, &previous_);
}

SigintCatcher::~SigintCatcher() { ::sigaction(SIGINT, &previous_, nullptr); }

bool stop_requested() { return stop_flag.load(); }


}  // namespace attn::cli
