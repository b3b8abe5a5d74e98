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

// A guess, from the raw tokens, of the names `code` would define at the top
// level (same spelling as defined_names). A statement such as `x = 3;` or
// `f(2);` defines nothing; `auto x = 3;` and `int f(int);` define x and f.
std::set<std::string> candidate_names(const std::string& code);

}  // namespace kernel
