// The C++ engine under the kernel: clang 19's incremental interpreter
// (clang::Interpreter, as in clang-repl and xeus-cpp), one input at a time.
//
// Every input that parses leaves one partial translation unit (PTU) that
// Interpreter::Undo can take back; an input that fails to parse leaves none,
// nor anything else: its template instantiations begun and its partial code
// are taken back with it (engine.cpp).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace kernel {

struct RunResult {
  // broken: the interpreter cannot go on (a failed input could not be taken back); every
  // later run says so, with the remedy (restart).
  enum class Status { ok, compile_error, runtime_error, exception, interrupted, broken };
  Status status = Status::ok;
  bool made_ptu = false;           // the input parsed: one PTU to undo
  std::string diagnostics;         // the compiler's warnings and errors, as it prints them
  std::string ename, evalue;       // for runtime_error, exception, interrupted
  std::set<std::string> declared;  // names the input defined (cell_names.hpp)
  bool lambdas = false;            // the input contains a lambda (cell_names.hpp: has_lambda)
  bool header = false;             // it read declarations from a header (cell_names.hpp: reads_header): never undo it
};

// Async-signal-safe: if a cell is running its own (JIT-compiled) code, it
// ends with a KeyboardInterrupt; inside a library it goes on (attn stops at
// its next backward()).
void stop_cell();

class Engine {
 public:
  // args: compiler flags (-std=c++17, -I..., -D..., -resource-dir ...). pch: a precompiled
  // header made with the same flags (kernel/meson.build), loaded once, at the start; "" for none.
  Engine(const std::vector<std::string>& args, const std::string& pch);
  ~Engine();

  // Throws std::runtime_error with the loader's message.
  void load_library(const std::string& path);
  RunResult run(const std::string& code);
  // Takes back the last n inputs (PTUs); throws std::runtime_error on failure, after which
  // the engine is broken.
  void undo(unsigned n);
  // Whether a failed input could not be taken back, and the sentence that says so and what to do.
  bool broken() const;
  std::string broken_message() const;
  // The address of an extern "C" function an input defined; nullptr if none.
  void* symbol_address(const std::string& ir_name);
  // The precompiled header in use; "" when none was given or clang refused it.
  const std::string& pch() const { return pch_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string pch_;
};

}  // namespace kernel
