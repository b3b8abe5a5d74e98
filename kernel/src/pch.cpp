#include "pch.hpp"

#include "engine.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace kernel {

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
  std::string said;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    said.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
  why = said.empty() ? "" : said + "; ";
  why += WIFSIGNALED(status) ? std::string("the check died of ") + strsignal(WTERMSIG(status))
                             : "the check exited with status " + std::to_string(WEXITSTATUS(status));
  return false;
}

int check_pch_main(const std::vector<std::string>& compiler_args, const std::string& pch) {
  try {
    Engine engine(compiler_args, pch);
    if (engine.pch().empty()) return 1;
    return engine.run("int attn_kernel_pch_check = 1;").status == RunResult::Status::ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

}  // namespace kernel
