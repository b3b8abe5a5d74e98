// What a long command says while it works, and how it stops:
//   - ProgressBar, a one-line progress bar for training:
//       [########............] step 300/2000  loss 0.532  acc 87.1%  45.2 steps/s  left 0:37
//     Redrawn in place on a terminal; on a pipe or a CI log, printed as plain
//     lines about every 10% so the log stays short.
//   - Phase, a line for a phase that is not training (speaking the LAS data, reading a
//     corpus): what it does, how far it is, and the time left.
//   - SigintCatcher: Ctrl-C during training only asks the training loop to stop after
//     its step (stop_requested()), so that the run can commit what it reached.
#pragma once

#include "../data/text_file.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <streambuf>
#include <string>
#include <thread>

#include <signal.h>

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

// A phase of work that is not training, reported while it lasts:
//   Phase phase("speaking 2400 utterances with espeak-ng", /*estimate=*/28.0);
//   ... the work ...
//   phase.done();   // "speaking 2400 utterances with espeak-ng: done in 0:29"
// With an estimate (seconds; 0 if unknown) the first line is printed at once, with it: "... (about 0:28)".
// Without one, nothing is printed unless the phase lasts over 2 s: a short phase says nothing.
// While it lasts, a line says how far it is: `fraction` (0..1, or negative if unknown) gives the share
// done, else the time so far is set against the estimate. On a terminal the line is redrawn every
// second; on a pipe a line is printed every 30 s, so a log stays short. The line is printed on a
// thread of its own: the work need not call anything.
class Phase {
 public:
  explicit Phase(std::string what, double estimate_seconds = 0, std::function<double()> fraction = {});
  // Work whose steps differ in cost (BPE's first merges touch most words, its last few): the line shows
  // `status()` ("1,200 of 20,000 merges") instead of a share and a time left that would mislead.
  Phase(std::string what, std::function<std::string()> status);
  ~Phase();  // as done(), silently if the work threw
  // Ends the phase; prints "WHAT: done in 0:29" if anything was printed about it.
  void done(const std::string& result = "");
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

 private:
  void stop();
  std::string line(bool first) const;
  std::string what_;
  double estimate_;
  std::function<double()> fraction_;
  std::function<std::string()> status_;
  bool tty_, shown_ = false, stopped_ = false;
  std::chrono::steady_clock::time_point started_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread ticker_;
};

// A file read through a stream (std::istream in(&file)) whose share read so far another thread may ask
// for: the fraction of a Phase that reads a corpus.
class CountedFile : public std::streambuf {
 public:
  explicit CountedFile(const std::string& path);  // is_open() says whether it could be opened
  ~CountedFile() override;
  bool is_open() const { return file_ != nullptr; }
  double fraction() const;  // of the file's size at opening, read so far (0..1)
  CountedFile(const CountedFile&) = delete;
  CountedFile& operator=(const CountedFile&) = delete;

 protected:
  int_type underflow() override;

 private:
  std::FILE* file_;
  std::uint64_t size_ = 0;
  std::atomic<std::uint64_t> read_{0};
  char buffer_[1 << 16];
};

// Ctrl-C while a SigintCatcher lives (SIGINT) raises a flag only, with a note on standard error: the
// training loop reads it between two steps (stop_requested()), finishes the step and commits a
// checkpoint at it. A second Ctrl-C stops at once (the handler resets itself: SA_RESETHAND). The
// previous handling of SIGINT comes back when the catcher ends.
class SigintCatcher {
 public:
  SigintCatcher();
  ~SigintCatcher();
  SigintCatcher(const SigintCatcher&) = delete;
  SigintCatcher& operator=(const SigintCatcher&) = delete;

 private:
  struct sigaction previous_ {};
};
bool stop_requested();

// A path as the shell reads it back, for the commands attn prints (data/text_file.hpp).
using data::shell_word;

}  // namespace attn::cli
