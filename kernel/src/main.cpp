// attn's C++ Jupyter kernel: xeus (the protocol, over zmq) + clang 19's
// incremental interpreter, with libattn loaded. Jupyter starts it as
//   attn-xcpp -f {connection_file}
#include "core/interrupt.hpp"
#include "engine.hpp"
#include "history.hpp"
#include "interpreter.hpp"
#include "pch.hpp"

#include <xeus/xhelper.hpp>
#include <xeus/xkernel.hpp>
#include <xeus/xkernel_configuration.hpp>
#include <xeus/xserver_zmq.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <string>
#include <thread>
#include <unistd.h>

namespace {

kernel::Interpreter* interpreter_for_signals = nullptr;

// Jupyter's stop button sends SIGINT. The handler only records the request
// (async-signal-safe), and attn stops at its next backward()
// (core/interrupt.hpp). A second press while the first is still waiting means
// the cell runs code that never reaches one: the handler says so in the cell.
void on_interrupt(int) {
  if (!interpreter_for_signals || !interpreter_for_signals->cell_running()) return;
  if (attn::interrupt_requested()) {
    static const char msg[] =
        "\n[attn kernel] still running: this cell has not reached an attn backward() since the stop request; "
        "stopping it in its own code (press again if it is inside a library; Kernel > Restart always stops it).\n";
    (void)!write(2, msg, sizeof msg - 1);
    kernel::stop_cell();
  }
  attn::request_interrupt();
}

// SIGINT is blocked in the threads the kernel starts (so that no system call
// of xeus or zmq is interrupted) and taken by this thread.
void take_interrupts() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  for (;;) pause();
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

}  // namespace

int main(int argc, char* argv[]) {
  // A handler, not SIG_IGN: a kernel started from a background shell inherits
  // an ignored SIGINT, which would never arrive.
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // inherited by every thread started from here on
  std::thread(take_interrupts).detach();

  const std::string root = env_or("ATTN_ROOT", ATTN_SOURCE_ROOT);
  kernel::Settings settings;
  settings.root = root;
  settings.library = env_or("ATTN_LIBRARY", ATTN_LIBRARY);
  settings.compiler_args = {
      "-std=c++17",
      "-fno-relaxed-template-template-args",  // xtensor needs it under clang
      "-DXTENSOR_USE_XSIMD",                  // part of libattn's ABI
      "-DATTN_KERNEL",
      "-I" + root,
      "-I" + root + "/notebooks",
      "-I" + env_or("ATTN_KERNEL_INCLUDE", ATTN_KERNEL_INCLUDE),
      "-resource-dir", CLANG_RESOURCE_DIR,
      "-fno-color-diagnostics",
      "-Wno-unused-value",
  };
  // The course's header precompiled with these flags (kernel/meson.build: keep both lists equal);
  // ATTN_KERNEL_PCH=none reads it at the cell's #include instead.
  settings.pch = env_or("ATTN_KERNEL_PCH", ATTN_KERNEL_PCH);
  if (settings.pch == "none") settings.pch.clear();
  if (argc == 3 && std::string(argv[1]) == "--check-pch") return kernel::check_pch_main(settings.compiler_args, argv[2]);
  if (xeus::should_print_version(argc, argv)) {
    std::printf("attn-xcpp 0.1.0 (xeus %d.%d, clang 19)\n", XEUS_VERSION_MAJOR, XEUS_VERSION_MINOR);
    return 0;
  }
  const std::string connection_file = xeus::extract_filename(argc, argv);
  if (connection_file.empty()) {
    std::fprintf(stderr, "usage: attn-xcpp -f CONNECTION_FILE (Jupyter starts it: see kernel/install_kernelspec.sh)\n");
    return 2;
  }

  auto history = std::make_unique<kernel::History>();
  auto interpreter = std::make_unique<kernel::Interpreter>(settings, *history);
  interpreter_for_signals = interpreter.get();
  xeus::xconfiguration config = xeus::load_configuration(connection_file);
  auto context = xeus::make_context<zmq::context_t>();
  xeus::xkernel k(config, xeus::get_user_name(), std::move(context), std::move(interpreter), xeus::make_xserver_zmq,
                  std::move(history));
  k.start();
  // The JIT'd cells' static objects are not destroyed one by one: the process ends here.
  std::fflush(stdout);
  std::_Exit(0);
}
