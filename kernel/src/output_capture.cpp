#include "output_capture.hpp"

// No std::cout or std::cerr in the kernel executable: a reference would give
// the executable its own copy of them (a copy relocation) that the cells' code,
// looking std::cout up by its unversioned name, would not find. std::cout
// writes through to stdio (sync_with_stdio), so fflush(stdout) flushes it.

#include <cstdio>
#include <fcntl.h>
#include <poll.h>
#include <stdexcept>
#include <unistd.h>

namespace kernel {

namespace {

void make_pipe(int fds[2]) {
  if (pipe(fds) != 0) throw std::runtime_error("attn kernel: pipe() failed");
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
}

// Reads what is there without blocking; "" when the pipe is empty.
std::string read_available(int fd) {
  std::string text;
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) text.append(buf, static_cast<size_t>(n));
    if (n < static_cast<ssize_t>(sizeof buf)) break;
  }
  return text;
}

// A chunk may end inside a UTF-8 character: hold the incomplete tail back.
std::string take_complete_utf8(std::string& pending) {
  size_t end = pending.size();
  size_t i = end;
  int back = 0;
  while (i > 0 && back < 4 && (static_cast<unsigned char>(pending[i - 1]) & 0xC0) == 0x80) --i, ++back;
  if (i > 0) {
    unsigned char lead = static_cast<unsigned char>(pending[i - 1]);
    int need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (need > 1 && back + 1 < need) end = i - 1;
  }
  std::string out = pending.substr(0, end);
  pending.erase(0, end);
  return out;
}

std::string pending_out, pending_err;

}  // namespace

OutputCapture::OutputCapture(Publisher publish) : publish_(std::move(publish)) {
  int out[2], err[2], wake[2];
  make_pipe(out);
  make_pipe(err);
  make_pipe(wake);
  std::fflush(stdout);
  std::fflush(stderr);
  saved_stderr_ = fcntl(2, F_DUPFD_CLOEXEC, 3);
  dup2(out[1], 1);
  dup2(err[1], 2);
  close(out[1]);
  close(err[1]);
  out_read_ = out[0];
  err_read_ = err[0];
  wake_read_ = wake[0];
  wake_write_ = wake[1];
  // Line-buffered, so a progress line shows when it is printed, not when the cell ends.
  setvbuf(stdout, nullptr, _IOLBF, 0);
  thread_ = std::thread([this] { reader(); });
}

OutputCapture::~OutputCapture() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  char c = 0;
  (void)!write(wake_write_, &c, 1);
  thread_.join();
  dup2(saved_stderr_, 2);
}

void OutputCapture::begin_cell() {
  std::lock_guard<std::mutex> lock(mutex_);
  drain_locked();  // whatever came between cells goes to the log
  in_cell_ = true;
}

void OutputCapture::end_cell() {
  std::fflush(stdout);
  std::fflush(stderr);
  std::lock_guard<std::mutex> lock(mutex_);
  drain_locked();
  for (auto* p : {&pending_out, &pending_err})
    if (!p->empty()) {
      if (in_cell_) publish_(p == &pending_out ? "stdout" : "stderr", *p);
      p->clear();
    }
  in_cell_ = false;
}

void OutputCapture::flush() {
  std::fflush(stdout);
  std::fflush(stderr);
  std::lock_guard<std::mutex> lock(mutex_);
  drain_locked();
}

void OutputCapture::locked(const std::function<void()>& f) {
  std::lock_guard<std::mutex> lock(mutex_);
  f();
}

void OutputCapture::drain_locked() {
  for (int fd : {out_read_, err_read_}) {
    std::string& pending = fd == out_read_ ? pending_out : pending_err;
    pending += read_available(fd);
    std::string text = take_complete_utf8(pending);
    if (text.empty()) continue;
    if (in_cell_)
      publish_(fd == out_read_ ? "stdout" : "stderr", text);
    else
      (void)!write(saved_stderr_, text.data(), text.size());
  }
}

void OutputCapture::reader() {
  pollfd fds[3] = {{out_read_, POLLIN, 0}, {err_read_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
  for (;;) {
    poll(fds, 3, -1);
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    drain_locked();
  }
}

}  // namespace kernel
