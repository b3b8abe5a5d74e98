// The kernel's input history, answering history_request as the messaging
// spec has it: tail, range and search (a glob pattern over the whole input,
// `*` and `?`, unique, n), each item [session, line, input] or, with output,
// [session, line, [input, output]], output a cell's shown value
// (set_output) or null.
//
// xeus 2.4's own history stores every cell under line 1 (it reads the line
// from the request's absent `execution_count`) and answers four-field items
// with the numbers as strings; the interpreter records the cells here instead.
#pragma once

#include <xeus/xhistory_manager.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kernel {

class History : public xeus::xhistory_manager {
 public:
  // The session number in replies: one session per kernel process, as IPython
  // numbers its first. A range request for session 0 (IPython's "current") or
  // this number reads this session; other sessions have no cells.
  static constexpr int session = 1;

  void record(int line, const std::string& input);
  void set_output(int line, const std::string& output);

 private:
  struct Entry {
    int line;
    std::string input;
    std::optional<std::string> output;
  };
  nl::json item(const Entry& e, bool output) const;

  void configure_impl() override {}
  void store_inputs_impl(int, int, const std::string&, const std::string&) override {}  // see record
  nl::json get_tail_impl(int n, bool raw, bool output) const override;
  nl::json get_range_impl(int session, int start, int stop, bool raw, bool output) const override;
  nl::json search_impl(const std::string& pattern, bool raw, bool output, int n, bool unique) const override;

  std::vector<Entry> entries_;
};

// Whether text matches a glob pattern as a whole: `*` any run of characters, `?` one character.
bool glob_match(const std::string& pattern, const std::string& text);

}  // namespace kernel
