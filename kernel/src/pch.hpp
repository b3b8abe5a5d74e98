// The course's header, precompiled (kernel/meson.build makes build/kernel/attn_notebook.pch
// with clang 19 and the cells' flags): the interpreter loads it once, at its start, so the
// first cell finds attn's names without parsing xtensor (seconds) and instantiates nothing
// the header already did.
//
// clang 19's interpreter does not survive a PCH it refuses (older than a header it read,
// made by another clang or with other flags): it prints why and dies in its constructor.
// So a child process (the kernel itself, `attn-xcpp --check-pch FILE`) tries it first.
#pragma once

#include <string>
#include <vector>

namespace kernel {

// True when a fresh interpreter with these flags takes the PCH and parses an input;
// otherwise false, with clang's reason (its diagnostics, or how the child ended) in why.
bool pch_loads(const std::string& kernel_exe, const std::string& pch, std::string& why);

// The child's side: exit status 0 when the PCH loads.
int check_pch_main(const std::vector<std::string>& compiler_args, const std::string& pch);

}  // namespace kernel
