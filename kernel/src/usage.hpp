// What a notebook's run used, for its freshness (tools/execute_notebooks.py, docs/notebooks.md).
//
// With ATTN_KERNEL_USAGE=FILE in the kernel's environment, every input that parses appends one
// JSON line to FILE:
//   {"files": [...], "symbols": [...]}
// "files": the source files that declare (or define) what the input's code referred to: every
// function, variable, type, enumerator and macro its statements name, and the types of its
// expressions and variables, with each declaration's redeclarations and, for a template
// specialization, its pattern. Not the headers the precompiled header merely read.
// "symbols": the external names (mangled, as the linker sees them) that the input's generated
// code leaves for the JIT to resolve: functions and variables of libattn, the C++ library,
// or earlier inputs. The tools match them with libattn's object files.
#pragma once

#include <string>

namespace clang {
class CompilerInstance;
struct PartialTranslationUnit;
}  // namespace clang

namespace kernel {

// The file named by ATTN_KERNEL_USAGE, or "" when usage is not recorded.
const std::string& usage_log();

// Appends the input's usage to usage_log(); call it after a successful Parse, before Execute
// (Execute hands the input's module to the JIT).
void record_usage(clang::CompilerInstance& ci, const clang::PartialTranslationUnit& ptu);

}  // namespace kernel
