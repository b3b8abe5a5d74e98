#include "speak.hpp"

#include "../core/errors.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace attn::audio {

namespace {

bool plain_name(const std::string& s) {
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) return false;
  return true;
}

}  // namespace

std::string voice_name(const Voice& voice) {
  return voice.variant.empty() ? voice.language : voice.language + "+" + voice.variant;
}

Wave speak(const std::string& text, const Voice& voice, const std::string& program) {
  const std::string op = "audio::speak";
  if (voice.language.empty() || !plain_name(voice.language) || !plain_name(voice.variant))
    throw ValueError(op + ": a voice's language and variant are letters, digits, '-' and '_', got '" +
                     voice_name(voice) + "'");
  if (voice.speed < 80 || voice.speed > 450) throw ValueError(op + ": speed must be in 80 .. 450, got " + std::to_string(voice.speed));
  if (voice.pitch < 0 || voice.pitch > 99) throw ValueError(op + ": pitch must be in 0 .. 99, got " + std::to_string(voice.pitch));
  const std::string name = voice_name(voice), speed = std::to_string(voice.speed), pitch = std::to_string(voice.pitch);
  // "--" ends the options, so a text that starts with '-' is still text.
  std::vector<std::string> args{program, "-v", name, "-s", speed, "-p", pitch, "--stdout", "--", text};
  std::string command;  // for messages: the arguments as a shell would quote them
  for (const auto& a : args) command += (command.empty() ? "" : " ") + (&a == &args.back() ? "'" + a + "'" : a);
  // espeak-ng's messages go to a temporary file, not a second pipe: reading one pipe cannot
  // block on the other filling up. They become part of the error when it fails.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> messages(std::tmpfile(), &std::fclose);
  if (!messages) throw IOError(op + ": cannot make a temporary file for espeak-ng's messages: " + std::strerror(errno));
  // The argument vector is built before fork(): the child of a multithreaded process (data/speech.cpp speaks
  // on several threads) may call only async-signal-safe functions, so no allocation after the fork.
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int messages_fd = ::fileno(messages.get());
  int out[2];
  if (::pipe(out) != 0) throw IOError(op + ": pipe() failed: " + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out[0]);
    ::close(out[1]);
    throw IOError(op + ": fork() failed: " + std::strerror(errno));
  }
  if (pid == 0) {  // the child: stdout into the pipe, stderr into the file, then espeak-ng (no allocation)
    ::dup2(out[1], 1);
    ::dup2(messages_fd, 2);
    ::close(out[0]);
    ::close(out[1]);
    ::execvp(argv[0], argv.data());
    ::_exit(127);  // not found
  }
  ::close(out[1]);
  std::string bytes;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(out[0], buffer, sizeof buffer);
    if (n > 0) bytes.append(buffer, std::size_t(n));
    else if (n == 0 || errno != EINTR) break;
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    throw IOError(op + ": cannot run '" + program + "' (not installed? tools/setup.sh installs espeak-ng)");
  std::string said;  // what espeak-ng wrote on stderr, on one line
  std::rewind(messages.get());
  for (int c; (c = std::fgetc(messages.get())) != EOF && said.size() < 2000;) said += c == '\n' ? ' ' : char(c);
  while (!said.empty() && said.back() == ' ') said.pop_back();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || bytes.empty())
    throw IOError(op + ": `" + command + "` failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")" +
                  (said.empty() ? std::string() : ": " + said));
  return parse_wav(bytes, "the output of `" + command + "`");
}

}  // namespace attn::audio
