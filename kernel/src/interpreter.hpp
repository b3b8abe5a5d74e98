// The Jupyter side of the kernel: an xeus::xinterpreter over the Engine.
//
// It keeps, for every cell that parsed, the interpreter input it made and the
// names it defined, so a cell can be run again (cell_names.hpp):
//  - the most recent cell, run again (edited or not): its input is undone
//    first, and its new text defines the names afresh;
//  - an earlier cell whose names a cell defined: refused before parsing, with
//    the name, the cell that defined it, and the remedy (%undo N, or
//    Kernel > Restart & Run All), since clang's interpreter can only undo the
//    most recent inputs and cannot redefine a name in place;
//  - code that holds a lambda, where it would redefine a name whose lambda was
//    taken back (by a re-run or %undo): refused, since clang 19 keeps the old
//    lambda's code under the same name (cell_names.hpp: has_lambda).
// The text that reaches the compiler is the cell's, rewritten by cell_rewrite.hpp.
#pragma once

#include "engine.hpp"
#include "history.hpp"
#include "output_capture.hpp"

#include <xeus/xinterpreter.hpp>

#include <atomic>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace kernel {

struct Settings {
  std::string root;                  // attn's source tree (help, docs)
  std::string library;               // libattn.so to load
  std::vector<std::string> compiler_args;
  std::string pch;                   // the course's header precompiled (pch.hpp); "" for none
};

class Interpreter : public xeus::xinterpreter {
 public:
  // history: the kernel's (main.cpp), which the interpreter records each cell in.
  Interpreter(Settings settings, History& history);
  ~Interpreter() override;

  // For xcpp::display (the cell calls it through the kernel's exported C functions).
  void display(const std::string& data, const std::string& metadata, const std::string& transient, bool update);
  void clear(bool wait);
  // The cell's shown value (a MIME bundle), as its execute_result.
  void execute_result(const std::string& data);
  bool cell_running() const { return cell_running_; }

 private:
  void configure_impl() override;
  void start_engine();     // on the thread configure_impl starts
  void wait_for_engine();  // before anything that compiles; throws if the compiler did not start
  nl::json execute_request_impl(int execution_counter, const std::string& code, bool silent, bool store_history,
                                nl::json user_expressions, bool allow_stdin) override;
  nl::json complete_request_impl(const std::string& code, int cursor_pos) override;
  nl::json inspect_request_impl(const std::string& code, int cursor_pos, int detail_level) override;
  nl::json is_complete_request_impl(const std::string& code) override;
  nl::json kernel_info_request_impl() override;
  void shutdown_request_impl() override;

  nl::json run_cell(int count, const std::string& code);
  nl::json undo_magic(const std::string& args);
  nl::json timeit_magic(const std::string& args);
  nl::json help_magic(const std::string& name);
  nl::json error(const std::string& ename, const std::string& evalue, const std::vector<std::string>& traceback);
  void stream(const std::string& name, const std::string& text);

  struct Cell {
    int count;                    // its In [count]
    unsigned inputs;              // interpreter inputs (PTUs) it made
    std::set<std::string> names;  // what it defined
    bool lambdas = false;         // it contains a lambda: it cannot be taken back to redefine its names
    // Its first `kept` inputs stay for good: the last of them read a header
    // (cell_names.hpp: reads_header), which clang 19 cannot undo. A re-run or
    // %undo takes back only the inputs after them; kept_names are defined there.
    unsigned kept = 0;
    std::set<std::string> kept_names;
  };

  Settings settings_;
  History& history_;
  std::unique_ptr<Engine> engine_;
  std::future<void> engine_ready_;  // start_engine's thread
  std::unique_ptr<OutputCapture> output_;
  std::vector<Cell> cells_;
  std::atomic<bool> cell_running_{false};
  int count_ = 0;  // the running cell's In [count]
  int timeit_serial_ = 0;
  int statement_serial_ = 0;                   // cell_rewrite.hpp's statement functions
  std::map<std::string, int> undone_lambdas_;  // names %undo took back with a lambda inside -> their In [n]
  std::vector<std::string> attn_names_;  // for completion, read once
};

}  // namespace kernel
