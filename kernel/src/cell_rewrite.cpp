#include "cell_rewrite.hpp"

#include "cell_names.hpp"

#include <algorithm>
#include <set>

namespace kernel {

namespace {

// Statements that declare something even when the token guess finds no name.
bool declares(const TopLevelStatement& s) {
  static const std::set<std::string> words = {"using",  "typedef", "namespace", "template", "struct",
                                              "class",  "union",   "enum",      "extern",   "static_assert",
                                              "static", "inline",  "constexpr", "friend",   "operator"};
  return !s.names.empty() || words.count(s.first) > 0;
}

bool control(const TopLevelStatement& s) {
  static const std::set<std::string> words = {"for", "while", "do", "if", "switch", "try"};
  return words.count(s.first) > 0;
}

// A statement with a lambda and no definition: it runs in a function of its own. A bare block
// (`{ auto f = [](int a) { ... }; ... }`) is such a statement too.
bool wraps(const TopLevelStatement& s) {
  return s.lambda && !declares(s) && (s.ends_with_semi || control(s) || s.first == "{");
}

// A definition with a lambda inside: it goes into an inline namespace of its own.
bool encloses(const TopLevelStatement& s) {
  static const std::set<std::string> words = {"using", "typedef", "namespace", "extern", "static_assert", "friend"};
  return s.lambda && !s.names.empty() && words.count(s.first) == 0;
}

// A struct, class, union or enum defined (with its body): it goes into an inline namespace of
// its own too. Run again, the cell's new type then has new mangled names, and so do the
// templates instantiated over it (show_result<P>, std::vector<P>): with the old ones, clang 19's
// code generator met the undone type's instantiation under the same name and the kernel died.
bool defines_type(const TopLevelStatement& s, const std::string& code) {
  static const std::set<std::string> words = {"struct", "class", "union", "enum"};
  return words.count(s.first) > 0 && !s.names.empty() && s.ends_with_semi &&
         code.substr(s.begin, s.end - s.begin).find('{') != std::string::npos;
}

// The cell's last statement, without ';', when it is an expression: its value is shown.
bool shows(const TopLevelStatement& s) {
  static const std::set<std::string> words = {"return", "break", "continue", "goto", "case", "default", "else",
                                              "asm", "do"};
  return s.open && !declares(s) && !control(s) && words.count(s.first) == 0;
}

// The text before `at` as blanks (newlines kept), so the input's lines and columns are the cell's.
std::string blank(const std::string& code, size_t at) {
  std::string pad = code.substr(0, at);
  for (char& c : pad)
    if (c != '\n') c = ' ';
  return pad;
}

// Where the cell's code starts after its leading #include lines (with blank,
// comment and other directive lines among them); 0 if it does not start with an #include.
size_t after_leading_includes(const std::string& code) {
  size_t at = 0, code_start = 0;
  bool include = false, continued = false;
  int open_conditionals = 0;  // a split inside #if ... #endif would break both inputs
  while (at < code.size()) {
    size_t end = code.find('\n', at);
    if (end == std::string::npos) end = code.size();
    const std::string line = code.substr(at, end - at);
    const size_t first = line.find_first_not_of(" \t\r");
    const bool directive = continued || (first != std::string::npos && line[first] == '#');
    if (first != std::string::npos && !directive && line.compare(first, 2, "//") != 0) break;  // code
    if (directive && !continued) {
      const size_t word = line.find_first_not_of(" \t", first + 1);
      const std::string name = word == std::string::npos ? "" : line.substr(word, line.find_first_of(" \t(<\"", word) - word);
      if (name == "include") include = true;
      if (name == "if" || name == "ifdef" || name == "ifndef") ++open_conditionals;
      if (name == "endif") --open_conditionals;
    }
    const size_t last = line.find_last_not_of(" \t\r");
    continued = directive && last != std::string::npos && line[last] == '\\';
    at = end + 1;
    code_start = std::min(at, code.size());
  }
  return include && open_conditionals == 0 && at < code.size() ? code_start : 0;
}

}  // namespace

std::vector<std::string> rewrite_cell(const std::string& code, int& serial) {
  const std::vector<TopLevelStatement> statements = top_level_statements(code);
  std::vector<size_t> starts = {0};  // where each input begins in the cell
  // The leading #include lines are an input of their own: one that reads a header is never
  // taken back (cell_names.hpp: reads_header), and the cell's code after it can be.
  if (const size_t code_start = after_leading_includes(code)) starts.push_back(code_start);
  for (size_t k = 1; k < statements.size(); ++k)
    if (statements[k].begin > starts.back() && statements[k].ends_with_semi && statements[k].const_object && !statements[k].names.empty())
      starts.push_back(statements[k].begin);
  starts.push_back(code.size());

  std::vector<std::string> inputs;
  bool shown = false;
  for (size_t c = 0; c + 1 < starts.size(); ++c) {
    const size_t from = starts[c], to = starts[c + 1];
    std::string text = code.substr(from, to - from);
    // From the last statement back, so the earlier ones' offsets still hold.
    for (auto it = statements.rbegin(); it != statements.rend(); ++it) {
      if (it->begin < from || it->begin >= to) continue;
      if (shows(*it)) {
        // `((expr), no_value{})` is the value, or no_value for a void expression (xcpp/xdisplay.hpp).
        const std::string expr = text.substr(it->begin - from, it->end - it->begin);
        std::string call = "xcpp::detail::show_result(((" + expr + "), xcpp::detail::no_value{}));";
        if (it->lambda) {  // as a statement holding a lambda (above): in a function of its own
          const std::string fn = std::string(kernel_prefix) + "stmt_" + std::to_string(++serial);
          call = "void " + fn + "() { " + call + " } " + fn + "();";
        }
        text.replace(it->begin - from, it->end - it->begin, call);
        shown = true;
      } else if (wraps(*it)) {
        const std::string fn = std::string(kernel_prefix) + "stmt_" + std::to_string(++serial);
        text.insert(it->end - from, " } " + fn + "();");
        text.insert(it->begin - from, "void " + fn + "() { ");
      } else if (encloses(*it) || defines_type(*it, code)) {
        text.insert(it->end - from, " }");
        text.insert(it->begin - from, "inline namespace " + std::string(kernel_prefix) + "ns_" +
                                          std::to_string(++serial) + " { ");
      }
    }
    inputs.push_back(blank(code, from) + text);
  }
  // The shown value goes through xcpp/xdisplay.hpp, which the cell may not have included.
  if (shown) inputs.insert(inputs.begin(), "#include \"xcpp/xdisplay.hpp\"\n");
  return inputs;
}

}  // namespace kernel
