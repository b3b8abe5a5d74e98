#include "pch.hpp"

#include "engine.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace kernel {

namespace {
constexpr int kCheckSeconds = 60;  // a loaded 2-core machine takes well under a second
}  // namespace

bool pch_loads(const std::string& kernel_exe, const std::string& pch, std::string& why) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    why = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);  // the child's stdout and stderr: clang's reason
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  std::vector<char*> argv = {const_cast<char*>(kernel_exe.c_str()), const_cast<char*>("--check-pch"),
                             const_cast<char*>(pch.c_str()), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, kernel_exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (spawned != 0) {
    close(out[0]);
    why = "cannot start " + kernel_exe + ": " + std::strerror(spawned);
    return false;
  }
  // What the child says, until it closes the pipe (it ends) or the deadline passes (it hangs:
  // it is killed, and the kernel goes on without the PCH rather than keep every cell waiting).
  std::string said;
  char buf[4096];
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kCheckSeconds);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{out[0], POLLIN, 0};
    const int ready = left.count() > 0 ? poll(&p, 1, static_cast<int>(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = ready == 0;
      break;
    }
    const ssize_t n = read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    said.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  pid_t waited;
  while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (waited != pid) {  // e.g. SIGCHLD ignored by whoever started the kernel: no verdict, so no PCH
    why = std::string("cannot read how the check ended: ") + std::strerror(errno);
    return false;
  }
  if (!timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
  why = said.empty() ? "" : said + "; ";
  if (timed_out)
    why += "the check did not finish in " + std::to_string(kCheckSeconds) + " s";
  else if (WIFSIGNALED(status))
    why += std::string("clang refused it (the check, a child process, ended by ") + strsignal(WTERMSIG(status)) + ")";
  else
    why += "the check exited with status " + std::to_string(WEXITSTATUS(status));
  return false;
}

int check_pch_main(const std::vector<std::string>& compiler_args, const std::string& pch) {
  // A refused PCH crashes this process: that is the verdict, not a fault worth a core file.
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  prctl(PR_SET_DUMPABLE, 0);
  int verdict = 1;
  try {
    Engine* engine = new Engine(compiler_args, pch);  // never deleted: the process ends at once
    if (!engine->pch().empty() && engine->run("int attn_kernel_pch_check = 1;").status == RunResult::Status::ok)
      verdict = 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
  std::fflush(stderr);
  std::_Exit(verdict);
}

}  // namespace kernel
