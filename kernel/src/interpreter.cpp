#include "interpreter.hpp"
#include "time_format.hpp"

#include "cell_names.hpp"
#include "cell_rewrite.hpp"
#include "core/interrupt.hpp"
#include "help.hpp"
#include "is_complete.hpp"
#include "pch.hpp"

#include <xeus/xhelper.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <regex>
#include <sstream>
#include <future>
#include <thread>
#include <unistd.h>

namespace kernel {

namespace {

Interpreter* the_interpreter = nullptr;

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(" \t\r\n");
  return s.substr(a, b - a + 1);
}

std::string join(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Jupyter counts cursor positions in Unicode code points; C++ strings are UTF-8 bytes.
size_t byte_offset(const std::string& s, int code_points) {
  size_t i = 0;
  for (int n = 0; i < s.size() && n < code_points; ++n) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
  }
  return i;
}

int code_points(const std::string& s, size_t bytes) {
  int n = 0;
  for (size_t i = 0; i < bytes && i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) ++n;
  return n;
}

// The compiler's messages as the learner needs them: without the line that says each input is
// "included" from the interpreter's main file, which is the kernel's plumbing, not the cell's.
std::vector<std::string> learner_diagnostics(const std::string& diagnostics) {
  std::vector<std::string> lines;
  for (const auto& line : split_lines(diagnostics))
    if (line.rfind("In file included from <<< inputs >>>", 0) != 0) lines.push_back(line);
  return lines;
}

// A shown type's name without the inline namespaces the kernel put the cell's definitions in
// (cell_rewrite.hpp): `__attn_ns_12::Point` is the learner's `Point`.
std::string without_kernel_namespaces(const std::string& text) {
  static const std::regex kernel_ns(std::string(kernel_prefix) + "ns_[0-9]+::");
  return std::regex_replace(text, kernel_ns, "");
}

// This program's path, for the PCH check's child (pch.hpp).
std::string kernel_executable() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : "attn-xcpp";
}

}  // namespace

Interpreter::Interpreter(Settings settings, History& history) : settings_(std::move(settings)), history_(history) {
  xeus::register_interpreter(this);
  the_interpreter = this;
}

Interpreter::~Interpreter() { the_interpreter = nullptr; }

void Interpreter::configure_impl() {
  output_ = std::make_unique<OutputCapture>(
      [this](const std::string& name, const std::string& text) { publish_stream(name, text); });
  // The compiler starts (start_engine: the PCH checked, the interpreter made, libattn loaded) on
  // a thread of its own while xeus answers the client. Every request that compiles waits for it first
  // (wait_for_engine): clang's interpreter is used by one thread at a time.
  engine_ready_ = std::async(std::launch::async, [this] { start_engine(); });
}

void Interpreter::start_engine() {
  const auto t0 = std::chrono::steady_clock::now();
  std::string pch = settings_.pch, why;
  if (!pch.empty() && !pch_loads(kernel_executable(), pch, why)) {
    // To the kernel's log, never into a cell (fd 2 is the cells' stderr by now).
    dprintf(output_->log_fd(),
            "[attn kernel] not using the precompiled header %s: %s\n[attn kernel] cells read the headers they "
            "include (seconds for attn_notebook.hpp); `ninja -C build kernel/attn-xcpp` (or tools/notebooks.sh) "
            "makes it again; after a clang upgrade, delete it first\n",
            pch.c_str(), why.c_str());
    pch.clear();
  }
  const auto t1 = std::chrono::steady_clock::now();
  auto engine = std::make_unique<Engine>(settings_.compiler_args, pch);
  engine->load_library(settings_.library);  // throws: the first cell shows why, later ones say to restart
  engine_ = std::move(engine);
  if (const char* log = std::getenv("ATTN_KERNEL_TIMING")) {  // where the start's time goes (bench/kernel_latency.py)
    if (FILE* f = std::fopen(log, "a")) {
      using ms = std::chrono::duration<double, std::milli>;
      std::fprintf(f, "pch check %8.1f ms  interpreter + libattn %8.1f ms  pch %s\n", ms(t1 - t0).count(),
                   ms(std::chrono::steady_clock::now() - t1).count(), engine_->pch().empty() ? "none" : "used");
      std::fclose(f);
    }
  }
}

void Interpreter::wait_for_engine() {
  if (engine_ready_.valid()) engine_ready_.get();  // rethrows what stopped the compiler's start, once
  if (!engine_) throw std::runtime_error("the C++ interpreter did not start (see the kernel's log); Kernel > Restart");
}

void Interpreter::stream(const std::string& name, const std::string& text) {
  output_->flush();
  output_->locked([&] { publish_stream(name, text); });
}

void Interpreter::display(const std::string& data, const std::string& metadata, const std::string& transient,
                          bool update) {
  output_->flush();  // what the cell printed before comes before the display
  output_->locked([&] {
    nl::json d = nl::json::parse(without_kernel_namespaces(data)), m = nl::json::parse(metadata),
             t = nl::json::parse(transient);
    if (update)
      update_display_data(std::move(d), std::move(m), std::move(t));
    else
      display_data(std::move(d), std::move(m), std::move(t));
  });
}

void Interpreter::clear(bool wait) {
  output_->flush();
  output_->locked([&] { clear_output(wait); });
}

void Interpreter::execute_result(const std::string& data) {
  output_->flush();  // what the cell printed before comes before its result
  nl::json bundle = nl::json::parse(without_kernel_namespaces(data));
  if (bundle.contains("text/plain") && bundle["text/plain"].is_string())
    history_.set_output(count_, bundle["text/plain"].get<std::string>());
  output_->locked([&] { publish_execution_result(count_, std::move(bundle), nl::json::object()); });
}

nl::json Interpreter::error(const std::string& ename, const std::string& evalue,
                            const std::vector<std::string>& traceback) {
  output_->flush();
  output_->locked([&] { publish_execution_error(ename, evalue, traceback); });
  // (Not xeus::create_error_reply: xeus 2.4.1's puts evalue in both fields.)
  return nl::json{{"status", "error"}, {"ename", ename}, {"evalue", evalue}, {"traceback", traceback}};
}

nl::json Interpreter::execute_request_impl(int count, const std::string& code, bool silent, bool store_history,
                                           nl::json /*user_expressions*/, bool /*allow_stdin*/) {
  if (store_history && !silent) history_.record(count, code);
  count_ = count;
  output_->begin_cell();
  attn::clear_interrupt();
  cell_running_ = true;
  nl::json reply;
  const std::string text = trim(code);
  try {
    wait_for_engine();
    if (text.rfind("%undo", 0) == 0)
      reply = undo_magic(text.substr(5));
    else if (text.rfind("%timeit", 0) == 0)
      reply = timeit_magic(text.substr(7));
    else if (!text.empty() && text.find('\n') == std::string::npos && (text[0] == '?' || text.back() == '?'))
      reply = help_magic(trim(text[0] == '?' ? text.substr(1) : text.substr(0, text.size() - 1)));
    else
      reply = run_cell(count, code);
  } catch (const std::exception& e) {
    reply = error("KernelError", e.what(), {std::string("KernelError: ") + e.what()});
  }
  cell_running_ = false;
  attn::clear_interrupt();
  output_->end_cell();
  return reply;
}

nl::json Interpreter::run_cell(int count, const std::string& code) {
  // Decide before parsing whether this cell redefines names (see interpreter.hpp).
  const std::set<std::string> candidates = candidate_names(code);
  for (const auto& name : candidates) {
    auto undone = undone_lambdas_.find(name);
    if (undone == undone_lambdas_.end() || !mentions_lambda(code)) continue;
    std::ostringstream msg;
    msg << "'" << name << "' held a lambda in In [" << undone->second << "], which %undo took back; clang 19's "
        << "interpreter keeps that lambda's code, and a new '" << name << "' with a lambda inside would run the old "
        << "one. Kernel > Restart & Run All runs the edited cell; a definition without a lambda works here.";
    return error("RedefinitionError", msg.str(), {"RedefinitionError: " + msg.str()});
  }
  for (size_t k = 0; k + 1 < cells_.size(); ++k) {
    for (const auto& name : candidates) {
      if (!cells_[k].names.count(name)) continue;
      const size_t later = cells_.size() - k;
      std::ostringstream msg;
      msg << "'" << name << "' is already defined by cell In [" << cells_[k].count << "], and " << (later - 1)
          << " cell(s) ran after it, so it cannot be redefined here. Run `%undo " << later
          << "` to take back In [" << cells_[k].count << "] and the cells after it, then run this cell again; "
          << "or Kernel > Restart & Run All.";
      return error("RedefinitionError", msg.str(), {"RedefinitionError: " + msg.str()});
    }
  }
  Cell carried{count, 0, {}, false, 0, {}};  // what a re-run keeps of the cell it replaces
  if (!cells_.empty()) {
    const Cell& last = cells_.back();
    bool rerun = std::any_of(candidates.begin(), candidates.end(), [&](const std::string& n) {
      return last.names.count(n) > 0;
    });
    if (rerun && last.lambdas) {  // see has_lambda (cell_names.hpp): refuse, before the compiler sees it
      std::ostringstream msg;
      msg << "In [" << last.count << "] defined " << join(last.names)
          << " with a lambda inside, and clang 19's interpreter cannot redefine code that holds a lambda "
          << "(the old lambda would run, or the kernel would die). Kernel > Restart & Run All runs the edited cell.";
      return error("RedefinitionError", msg.str(), {"RedefinitionError: " + msg.str()});
    }
    for (const auto& name : candidates) {
      if (!rerun || !last.kept_names.count(name)) continue;
      std::ostringstream msg;
      msg << "'" << name << "' is defined in In [" << last.count << "] in the same input as an #include that "
          << "read a header, and clang 19's interpreter cannot take a header back, so '" << name
          << "' cannot be redefined. Put the cell's #include lines at its top, before any code, "
          << "then Kernel > Restart & Run All.";
      return error("RedefinitionError", msg.str(), {"RedefinitionError: " + msg.str()});
    }
    if (rerun) {  // the edit-and-run-again loop: the most recent cell's input goes first
      std::set<std::string> dropped;
      for (const auto& n : last.names)
        if (!candidates.count(n) && !last.kept_names.count(n)) dropped.insert(n);
      if (!dropped.empty())  // this is not quite that cell again: say what else went
        stream("stderr", "note: took back In [" + std::to_string(last.count) + "] to redefine its names; " +
                             join(dropped) + " from it no longer defined\n");
      engine_->undo(last.inputs - last.kept);
      carried = last;  // its inputs that read headers stay: the new cell counts them as its own
      cells_.pop_back();
    }
  }

  // The cell's inputs (cell_rewrite.hpp), in order, up to the first that fails.
  Cell cell{count, carried.kept, carried.kept_names, false, carried.kept, carried.kept_names};
  RunResult r;
  std::string warnings;
  for (const std::string& input : rewrite_cell(code, statement_serial_)) {
    r = engine_->run(input);
    if (r.made_ptu) {
      ++cell.inputs;
      cell.names.insert(r.declared.begin(), r.declared.end());
      cell.lambdas = cell.lambdas || r.lambdas;
      if (r.header) {  // this input and every one below it stay
        cell.kept = cell.inputs;
        cell.kept_names = cell.names;
      }
    }
    if (r.status != RunResult::Status::ok) break;
    warnings += r.diagnostics;
  }
  if (r.status != RunResult::Status::ok && r.status != RunResult::Status::interrupted &&
      r.status != RunResult::Status::broken) {
    // A failed cell leaves the kernel as it found it: its inputs that parsed are taken back
    // (those that read a header cannot be, and stay). A stopped cell keeps what it made.
    const unsigned made = cell.inputs - cell.kept;
    if (cell.lambdas)
      for (const auto& name : cell.names)
        if (!cell.kept_names.count(name)) undone_lambdas_.emplace(name, count);
    cell.inputs = cell.kept;
    cell.names = cell.kept_names;
    cell.lambdas = false;
    try {
      engine_->undo(made);
    } catch (const std::exception&) {
      r.status = RunResult::Status::broken;
      r.ename = "KernelError";
      r.evalue = engine_->broken_message();
    }
    if (carried.count != count)  // this run replaced the most recent cell, which stays taken back
      stream("stderr", "note: In [" + std::to_string(carried.count) + "] was taken back to run this cell again, " +
                           "and this cell failed: what In [" + std::to_string(carried.count) +
                           "] defined is no longer defined\n");
  }
  if (cell.inputs > 0) cells_.push_back(cell);
  if (r.status == RunResult::Status::ok) r.diagnostics = warnings;
  switch (r.status) {
    case RunResult::Status::ok:
      if (!trim(r.diagnostics).empty()) stream("stderr", r.diagnostics);  // warnings
      return xeus::create_successful_reply();
    case RunResult::Status::broken:
      return error("KernelError", r.evalue, {"KernelError: " + r.evalue});
    case RunResult::Status::compile_error: {
      std::vector<std::string> lines = learner_diagnostics(r.diagnostics);
      std::string first = r.evalue;
      for (const auto& l : lines)
        if (l.find("error:") != std::string::npos) {
          first = l.substr(l.find("error:") + 7);
          break;
        }
      if (lines.empty()) lines.push_back(r.evalue);
      return error("CompileError", first, lines);
    }
    case RunResult::Status::interrupted:
      return error("KeyboardInterrupt", r.evalue, {"KeyboardInterrupt: " + r.evalue});
    case RunResult::Status::exception:
      return error(r.ename, r.evalue, {r.ename + ": " + r.evalue});
    case RunResult::Status::runtime_error:
    default: {
      std::vector<std::string> lines = learner_diagnostics(r.diagnostics);
      lines.push_back(r.ename + ": " + r.evalue);
      return error(r.ename, r.evalue, lines);
    }
  }
}

nl::json Interpreter::undo_magic(const std::string& args) {
  const std::string a = trim(args);
  size_t n = 1;
  if (!a.empty()) {
    char* end = nullptr;
    long v = std::strtol(a.c_str(), &end, 10);
    if (*end != '\0' || v < 1) return error("UsageError", "usage: %undo [N], N >= 1 cells", {"UsageError: %undo [N]"});
    n = static_cast<size_t>(v);
  }
  if (n > cells_.size()) {
    std::string msg = "%undo " + std::to_string(n) + ": only " + std::to_string(cells_.size()) +
                      " cell(s) can be undone";
    return error("UsageError", msg, {"UsageError: " + msg});
  }
  const size_t bottom = cells_.size() - n;
  for (size_t k = cells_.size(); k-- > bottom + 1;) {
    if (cells_[k].kept == 0) continue;
    // Undo takes inputs back from the most recent one down, and this cell's header input cannot go.
    std::ostringstream msg;
    msg << "%undo " << n << ": In [" << cells_[k].count << "] read a header (#include), which clang 19's "
        << "interpreter cannot take back, so the cells before it cannot be undone; %undo "
        << (cells_.size() - k) << " takes back In [" << cells_[k].count << "]'s code and the cells after it. "
        << "Kernel > Restart & Run All starts afresh.";
    return error("UsageError", msg.str(), {"UsageError: " + msg.str()});
  }
  unsigned inputs = 0;
  std::ostringstream said;
  for (size_t k = bottom; k < cells_.size(); ++k) {
    inputs += cells_[k].inputs - cells_[k].kept;
    std::set<std::string> names;
    for (const auto& name : cells_[k].names)
      if (!cells_[k].kept_names.count(name)) names.insert(name);
    if (cells_[k].lambdas)
      for (const auto& name : names) undone_lambdas_.emplace(name, cells_[k].count);
    said << "undid In [" << cells_[k].count << "]";
    if (!names.empty()) said << " (it defined " << join(names) << ")";
    if (cells_[k].kept > 0) said << "; its #include lines stay (a header cannot be taken back)";
    said << "\n";
  }
  engine_->undo(inputs);
  Cell rest = cells_[bottom];  // what stays of the oldest cell undone: its header inputs
  cells_.resize(bottom);
  if (rest.kept > 0) {
    rest.inputs = rest.kept;
    rest.names = rest.kept_names;
    rest.lambdas = false;
    cells_.push_back(rest);
  }
  stream("stdout", said.str());
  return xeus::create_successful_reply();
}

nl::json Interpreter::timeit_magic(const std::string& args) {
  // %timeit [-n LOOPS] [-r RUNS] statement
  std::istringstream in(args);
  long loops = 0, runs = 7;
  std::string word;
  std::streampos stmt_start = in.tellg();
  while (in >> word) {
    if (word == "-n" && (in >> loops)) {
    } else if (word == "-r" && (in >> runs)) {
    } else
      break;
    stmt_start = in.tellg();
  }
  std::string stmt = trim(args.substr(stmt_start == std::streampos(-1) ? args.size() : size_t(stmt_start)));
  if (stmt.empty() || runs < 1)
    return error("UsageError", "usage: %timeit [-n LOOPS] [-r RUNS] statement", {"UsageError: %timeit statement"});

  const std::string fn = "attn_kernel_timeit_" + std::to_string(++timeit_serial_);
  RunResult r = engine_->run("extern \"C\" void " + fn + "(long long attn_kernel_loops) {\n" +
                             "  for (long long attn_kernel_i = 0; attn_kernel_i < attn_kernel_loops; ++attn_kernel_i) {\n" +
                             stmt + "\n;\n  }\n}\n");
  if (r.status == RunResult::Status::broken) return error("KernelError", r.evalue, {"KernelError: " + r.evalue});
  if (r.status == RunResult::Status::compile_error) {
    std::vector<std::string> lines = learner_diagnostics(r.diagnostics);
    return error("CompileError", "%timeit: the statement does not compile", lines);
  }
  struct UndoAtEnd {  // the timing function is not the learner's: take it back
    Engine& e;
    bool made;
    ~UndoAtEnd() {
      if (made) try { e.undo(1); } catch (...) {}
    }
  } undo_at_end{*engine_, r.made_ptu};
  auto* body = reinterpret_cast<void (*)(long long)>(engine_->symbol_address(fn));
  if (!body) return error("KernelError", "%timeit: the timing function was not found", {"KernelError"});

  auto time_loops = [&](long long n) {
    const auto t0 = std::chrono::steady_clock::now();
    body(n);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  try {
    if (loops <= 0) {  // as IPython: the smallest 1, 2, 5, 10, 20, ... loops taking >= 0.2 s
      for (long long base = 1;; base *= 10) {
        for (long long f : {1, 2, 5}) {
          loops = base * f;
          if (time_loops(loops) >= 0.2 || loops >= 1000000000LL) goto chosen;
        }
      }
    }
  chosen:
    std::vector<double> per_loop;
    for (long i = 0; i < runs; ++i) {
      per_loop.push_back(time_loops(loops) / static_cast<double>(loops));
      if (attn::interrupt_requested()) throw attn::Interrupted{};
    }
    double mean = 0, var = 0;
    for (double t : per_loop) mean += t;
    mean /= static_cast<double>(per_loop.size());
    for (double t : per_loop) var += (t - mean) * (t - mean);
    const double std_dev = std::sqrt(var / static_cast<double>(per_loop.size()));
    std::ostringstream out;
    out << format_time(mean) << " \xC2\xB1 " << format_time(std_dev) << " per loop (mean \xC2\xB1 std. dev. of "
        << runs << " run" << (runs == 1 ? "" : "s") << ", " << loops << " loop" << (loops == 1 ? "" : "s")
        << " each)\n";
    stream("stdout", out.str());
  } catch (const attn::Interrupted& e) {
    return error("KeyboardInterrupt", e.what(), {std::string("KeyboardInterrupt: ") + e.what()});
  } catch (const std::exception& e) {
    return error("Exception", e.what(), {std::string("%timeit: the statement threw: ") + e.what()});
  }
  return xeus::create_successful_reply();
}

nl::json Interpreter::help_magic(const std::string& name) {
  HelpPage page = help_for(name, settings_.root);
  if (!page.found) {
    stream("stdout", "no help found for '" + name + "'\n");
    return xeus::create_successful_reply();
  }
  // As IPython: the page goes to the pager (Jupyter Notebook's bottom panel).
  nl::json payload = nl::json::array();
  payload.push_back({{"source", "page"}, {"data", {{"text/plain", page.text}, {"text/html", page.html}}}, {"start", 0}});
  return xeus::create_successful_reply(payload);
}

// Completes the identifier before the cursor from attn's names and the names
// the cells defined. (clang 19's own code completion, ReplCodeCompleter, was
// tried: it left the interpreter unable to compile later cells.)
nl::json Interpreter::complete_request_impl(const std::string& code, int cursor_pos) {
  const size_t cursor = byte_offset(code, cursor_pos);
  size_t begin = cursor;
  while (begin > 0 && (std::isalnum(static_cast<unsigned char>(code[begin - 1])) || code[begin - 1] == '_')) --begin;
  const std::string prefix = code.substr(begin, cursor - begin);
  if (attn_names_.empty()) attn_names_ = attn_names(settings_.root);
  std::set<std::string> matches;
  auto consider = [&](const std::string& name) {
    const std::string last = name.substr(name.rfind(':') == std::string::npos ? 0 : name.rfind(':') + 1);
    if (!prefix.empty() && last.compare(0, prefix.size(), prefix) == 0) matches.insert(last);
  };
  for (const auto& n : attn_names_) consider(n);
  for (const auto& cell : cells_)
    for (const auto& n : cell.names) consider(n);
  const int end = code_points(code, cursor);
  return xeus::create_complete_reply(std::vector<std::string>(matches.begin(), matches.end()),
                                     code_points(code, begin), end);
}

nl::json Interpreter::inspect_request_impl(const std::string& code, int cursor_pos, int /*detail_level*/) {
  const size_t cursor = byte_offset(code, cursor_pos);
  HelpPage page = help_for(name_at(code, cursor), settings_.root);
  if (!page.found) page = help_for(called_name_at(code, cursor), settings_.root);  // `attn::softmax(|`
  if (!page.found) return xeus::create_inspect_reply(false);
  return xeus::create_inspect_reply(true, {{"text/plain", page.text}, {"text/html", page.html}});
}

nl::json Interpreter::is_complete_request_impl(const std::string& code) {
  const std::string status = completeness(code);
  return xeus::create_is_complete_reply(status, status == "incomplete" ? "    " : "");
}

nl::json Interpreter::kernel_info_request_impl() {
  nl::json links = nl::json::array();
  links.push_back({{"text", "C++ reference"}, {"url", "https://en.cppreference.com/w/cpp"}});
  return xeus::create_info_reply("5.3", "attn-xcpp", "0.1.0", "c++", "17", "text/x-c++src", ".cpp", "c++",
                                 "text/x-c++src", "",
                                 "attn's C++17 kernel: clang 19's incremental interpreter with libattn loaded.\n"
                                 "Magics: %undo [N], %timeit statement; help: ?name",
                                 false, links);
}

void Interpreter::shutdown_request_impl() {
  // xeus ends the process with exit() after its reply. Registered last, this
  // runs first: the process ends before the cells' static objects and the JIT
  // are torn down one by one, in an order that can free JIT memory twice.
  // The shutdown reply is already queued on the control socket, but zmq's I/O
  // thread sends it: _Exit before that thread runs would drop it, and the
  // client would wait for a reply that never comes. zmq has no call that waits
  // for one socket's queue (terminating the context would wait forever on
  // xeus's publisher sockets, which are never closed), so the process gives
  // that thread a bounded moment first.
  std::atexit([] {
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    std::_Exit(0);
  });
}

}  // namespace kernel

// Called by xcpp::display and xcpp::clear_output (kernel/include/xcpp/xdisplay.hpp)
// from the cell's JIT-compiled code; exported by the kernel executable.
extern "C" __attribute__((visibility("default"))) void attn_kernel_display(const char* data, const char* metadata,
                                                                        const char* transient, int update) {
  if (kernel::the_interpreter) kernel::the_interpreter->display(data, metadata, transient, update != 0);
}

extern "C" __attribute__((visibility("default"))) void attn_kernel_execute_result(const char* data) {
  if (kernel::the_interpreter) kernel::the_interpreter->execute_result(data);
}

extern "C" __attribute__((visibility("default"))) void attn_kernel_clear_output(int wait) {
  if (kernel::the_interpreter) kernel::the_interpreter->clear(wait != 0);
}
