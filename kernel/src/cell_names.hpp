// Which names a cell defines, for re-running cells (issue 27).
//
// clang's interpreter cannot redefine a function, variable or class in a new
// input, and after a failed redefinition even Undo breaks ("Duplicate
// definition of symbol"). So the kernel decides before parsing: it compares
// the names a new cell is about to define (guessed from its tokens) with the
// names each earlier cell did define (read from its PTU's declarations).
#pragma once

#include <set>
#include <string>
#include <vector>

namespace clang {
class DeclContext;
struct LangOptions;
}  // namespace clang

namespace kernel {

// Names a parsed input defined: variables, functions, function templates,
// classes, structs, unions, enums, namespace-qualified ("ns::f") inside
// namespaces. Not using-declarations or aliases: those may be repeated.
std::set<std::string> defined_names(const clang::DeclContext& tu);

// Whether a parsed input contains a lambda. clang 19's interpreter cannot take
// one back: after Undo, the redefined function's lambdas get the old mangled
// names, and the old lambda runs or code generation fails (a null module, a crash).
bool has_lambda(const clang::DeclContext& tu);

// Whether a parsed input holds declarations read from a header (an #include
// of a file not included before). clang 19's Interpreter::Undo of such an
// input crashes in IncrementalParser::CleanUpPTU (a SIGSEGV: the kernel died
// and the client waited for a reply that never came), and the header's
// include guard would stay defined anyway, so an #include run again would
// read nothing. The kernel never takes such an input back.
bool reads_header(const clang::DeclContext& tu);

// A guess, from the raw tokens, of the names `code` would define at the top
// level (same spelling as defined_names). A statement such as `x = 3;` or
// `f(2);` defines nothing; `auto x = 3;` and `int f(int);` define x and f.
std::set<std::string> candidate_names(const std::string& code);

// One top-level statement of a cell, as that token guess sees it (cell_rewrite.hpp).
struct TopLevelStatement {
  size_t begin = 0, end = 0;    // byte offsets of its first and past its last token
  std::string first;            // its first token
  std::set<std::string> names;  // what it would define
  bool ends_with_semi = false;  // an expression or a declaration, not a block or a function body
  bool lambda = false;          // a lambda expression among its tokens
  bool const_object = false;    // `const T name ...`: a const object (no * or & in the declarator)
  bool open = false;            // the cell's last statement, ended by neither ';' nor a body
};
std::vector<TopLevelStatement> top_level_statements(const std::string& code);

// Whether the code's tokens hold a lambda expression (a guess, before parsing).
bool mentions_lambda(const std::string& code);

// Names the kernel gives its own helpers (cell_rewrite.hpp, %timeit): never a cell's names.
constexpr const char* kernel_prefix = "__attn_";

}  // namespace kernel
