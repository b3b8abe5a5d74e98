// What a learner's lab file sees of the graders: `lab::not_implemented`, the stubs'
// placeholder, and `lab::Result`, what a grading run returns. Each lab's header
// (labNN_*.hpp) declares the learner's functions as a struct of std::function and
// its `grade()`; the checks themselves are compiled into build/labs/libattn_labs.so,
// which tools/lab.sh links and which a notebook loads when it includes this header.
#pragma once

#include "attn.hpp"

#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

// A function of the learner's that can end without a `return` is a compile error, not a crash:
// falling off the end of a function that returns a Tensor is undefined behaviour, which the
// graders would meet as a segmentation fault (an illegal instruction in the notebook kernel)
// with no check named. From here to the end of the file that includes this header.
#if defined(__clang__)
#pragma clang diagnostic error "-Wreturn-type"
#elif defined(__GNUC__)
#pragma GCC diagnostic error "-Wreturn-type"
#endif

namespace lab {

using attn::Shape;
using attn::Tensor;

// What the untouched stub throws: a check that meets it fails with "not implemented".
struct NotImplemented : std::logic_error {
  explicit NotImplemented(const std::string& what);
  ~NotImplemented() override;  // defined in libattn_labs: one type_info for every module
};
[[noreturn]] void not_implemented(const std::string& what);

// The outcome of one grading run.
struct Result {
  int lab = 0;
  int passed = 0;
  int total = 0;
  std::vector<std::string> failures;  // "check name: message\n  hint: ..."
  bool all_pass() const { return total > 0 && passed == total; }
  int exit_code() const { return all_pass() ? 0 : 1; }
  bool failure_mentions(const std::string& text) const {
    for (const auto& f : failures)
      if (f.find(text) != std::string::npos) return true;
    return false;
  }
};

}  // namespace lab

#ifdef ATTN_KERNEL
// In the notebook kernel (which defines ATTN_KERNEL and has loaded libattn): load the
// compiled graders from the build folder libattn came from, so cells can call them.
// (Checks compiled by the kernel's interpreter instead could not catch an exception
// thrown in a cell, and the interpreter fails to emit some of their inline functions.)
#include <dlfcn.h>

namespace lab {
namespace detail {
inline void* load_graders() {
  Dl_info info{};
  auto softmax = static_cast<attn::Tensor (*)(const attn::Tensor&, long)>(&attn::softmax);
  std::string build = "build";
  if (dladdr(reinterpret_cast<void*>(softmax), &info) && info.dli_fname) {
    build = info.dli_fname;
    build = build.substr(0, build.rfind('/'));
  }
  const std::string path = build + "/labs/libattn_labs.so";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    std::cerr << "lab: cannot load the graders: " << dlerror() << "\n"
              << "build them with: ninja -C " << build << " labs/libattn_labs.so\n";
  return handle;
}
inline void* const graders = load_graders();
}  // namespace detail
}  // namespace lab
#endif
