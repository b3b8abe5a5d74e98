// Streams what a cell prints into the notebook while the cell runs.
//
// File descriptors 1 and 2 become pipes, so std::cout, printf, std::cerr and
// anything a library writes at the fd level all land here. A reader thread
// forwards each chunk as a `stream` message while a cell is running; between
// cells, stray output goes to the kernel's log (the original stderr).
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace kernel {

class OutputCapture {
 public:
  // publish(name, text): name is "stdout" or "stderr".
  using Publisher = std::function<void(const std::string&, const std::string&)>;

  explicit OutputCapture(Publisher publish);
  ~OutputCapture();

  // The original stderr, for the kernel's own log lines.
  int log_fd() const { return saved_stderr_; }

  // From the start of a cell to its end, output is published.
  void begin_cell();
  void end_cell();
  // Publishes everything printed so far (before a display_data, so the order holds).
  void flush();
  // Runs f with the publishing lock held: nothing is published concurrently.
  void locked(const std::function<void()>& f);

 private:
  void drain_locked();  // reads both pipes until empty; needs mutex_
  void reader();

  Publisher publish_;
  int out_read_ = -1, err_read_ = -1, wake_read_ = -1, wake_write_ = -1;
  int saved_stderr_ = -1;
  bool in_cell_ = false;
  bool stopping_ = false;
  std::mutex mutex_;
  std::thread thread_;
};

}  // namespace kernel
