// What the kernel changes in a cell before clang sees it: two ways around
// clang 19 interpreter bugs, each keeping every line and column where it was
// written (so the compiler's messages point into the cell as the learner sees it).
//
//  - A top-level `const` object whose initializer reads a global made earlier
//    in the same input is initialised before that global is constructed
//    (`std::vector<int> v(100); const size_t n = v.size() / 10;` gives n == 0).
//    Such a declaration starts an input of its own: the cell runs as several
//    inputs, in order, and every global before it is built when it runs.
//  - A top-level statement holding a lambda (`std::sort(v.begin(), v.end(),
//    [](int a, int b) { return a > b; });`) crashes clang 19's name mangler,
//    which has no name for a lambda outside any function. The statement runs
//    in a function of its own, called at once:
//    `void __attn_stmt_7() { std::sort(...); } __attn_stmt_7();`. Each such
//    function gets a fresh number, so its lambdas can be taken back and run again.
//  - After Undo, clang 19 gives a redefined function's lambdas the mangled
//    names of the undone ones and keeps running the old lambdas' code. A
//    definition holding a lambda (`Run train(...) { ... [&](...) { ... } ... }`)
//    goes into an inline namespace of its own, `inline namespace __attn_ns_8 {
//    ... }`: its names are used as before, unqualified, and its lambdas' mangled
//    names are new each time, so the cell can be run again with new lambdas.
//    A struct, class, union or enum definition goes into one too: the templates
//    instantiated over the new type get new mangled names when the cell runs
//    again (the old ones killed the kernel: show_result<P> of a struct shown).
//  - The cell's last statement, an expression without ';', is shown as the
//    cell's result (execute_result), as in xeus-cling:
//    `xcpp::detail::show_result(((x), xcpp::detail::no_value{}));`, with
//    `#include "xcpp/xdisplay.hpp"` run first as an input of its own.
#pragma once

#include <string>
#include <vector>

namespace kernel {

// The inputs the cell runs as, in order (one, unless a const object splits it).
// `serial` numbers the statement functions; it grows with each one made.
std::vector<std::string> rewrite_cell(const std::string& code, int& serial);

}  // namespace kernel
