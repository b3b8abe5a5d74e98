#include "engine.hpp"

#include "cell_names.hpp"
#include "core/interrupt.hpp"

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/ExternalASTSource.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Interpreter/Interpreter.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <csetjmp>
#include <csignal>
#include <cxxabi.h>
#include <cstdio>
#include <pthread.h>
#include <ucontext.h>
#include <stdexcept>
#include <cstring>
#include <typeinfo>
#include <vector>

namespace kernel {

namespace {

std::string demangle(const char* name) {
  int status = 0;
  char* s = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && s ? s : name;
  std::free(s);
  return out;
}

std::unique_ptr<clang::Interpreter> make_interpreter(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  clang::IncrementalCompilerBuilder builder;
  builder.SetCompilerArgs(argv);
  auto ci = builder.CreateCpp();
  if (!ci) throw std::runtime_error("attn kernel: cannot create the compiler: " + llvm::toString(ci.takeError()));
  auto interp = clang::Interpreter::create(std::move(*ci));
  if (!interp)
    throw std::runtime_error("attn kernel: cannot create the interpreter: " + llvm::toString(interp.takeError()));
  return std::move(*interp);
}

// Hands the definitions a precompiled header gives the cells to code generation.
// clang 19's interpreter never connects its AST reader to a consumer (ParseAST
// would), and its code generator ignores "interesting" declarations once its
// first input is done, so an inline function read from the PCH would never be
// emitted: "Symbols not found: g(int)". This consumer takes the reader's
// declarations and gives them to the interpreter's consumer as top-level ones,
// which code generation defers and emits in the first input that uses them.
class PchDeclarations : public clang::ASTConsumer {
 public:
  explicit PchDeclarations(clang::ASTConsumer& interpreter) : interpreter_(interpreter) {}
  void HandleInterestingDecl(clang::DeclGroupRef group) override { interpreter_.HandleTopLevelDecl(group); }

 private:
  clang::ASTConsumer& interpreter_;
};

// A fault in the cell's code (null pointer, stack overflow, integer division
// by zero, a trap) jumps back to Engine::run from the signal handler, which
// runs on its own stack; faults elsewhere end the process as before.
sigjmp_buf fault_jump;
std::atomic<bool> fault_armed{false};
pthread_t fault_thread;
volatile sig_atomic_t fault_signal = 0;

void on_fault(int sig, siginfo_t*, void*) {
  if (fault_armed.load() && pthread_equal(pthread_self(), fault_thread)) {
    fault_armed = false;
    fault_signal = sig;
    siglongjmp(fault_jump, 1);
  }
  signal(sig, SIG_DFL);  // not a cell's fault: the default action (the kernel dies, Jupyter restarts it)
  raise(sig);
}

// The code of the loaded files (executable, libraries), read before each cell:
// an address outside them is JIT-compiled cell code, which a stop may leave.
struct CodeRange {
  uintptr_t lo, hi;
};
CodeRange file_code[1024];
std::atomic<int> file_code_count{0};

void snapshot_file_code() {
  int n = 0;
  if (FILE* maps = std::fopen("/proc/self/maps", "r")) {
    char line[4096];
    while (n < 1024 && std::fgets(line, sizeof line, maps)) {
      unsigned long lo = 0, hi = 0;
      char perms[8] = {0};
      int path_at = 0;
      if (std::sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &path_at) < 3) continue;
      if (perms[2] != 'x') continue;
      if (line[path_at] == '/' || line[path_at] == '[') file_code[n++] = {lo, hi};
    }
    std::fclose(maps);
  }
  file_code_count = n;
}

bool in_cell_code(uintptr_t pc) {
  for (int i = 0, n = file_code_count.load(); i < n; ++i)
    if (pc >= file_code[i].lo && pc < file_code[i].hi) return false;
  return true;
}

// The stop button's second press (main.cpp): leave the cell if it is running its own code.
void on_stop(int, siginfo_t*, void* context) {
  if (!fault_armed.load() || !pthread_equal(pthread_self(), fault_thread)) return;
#if defined(__x86_64__)
  const auto pc = static_cast<uintptr_t>(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  const auto pc = static_cast<uintptr_t>(static_cast<ucontext_t*>(context)->uc_mcontext.pc);
#else
  const uintptr_t pc = 0;
  return;
#endif
  if (!in_cell_code(pc)) return;  // inside a library (attn, libstdc++): not a safe point
  fault_armed = false;
  fault_signal = SIGUSR2;
  siglongjmp(fault_jump, 1);
}

void install_fault_handlers() {
  struct sigaction stop {};
  stop.sa_sigaction = on_stop;
  stop.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&stop.sa_mask);
  sigaction(SIGUSR2, &stop, nullptr);
  struct sigaction action {};
  action.sa_sigaction = on_fault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) sigaction(sig, &action, nullptr);
}

// The handler needs a stack of its own on the thread that runs cells (a stack overflow has none left).
void ensure_signal_stack() {
  static thread_local bool done = false;
  if (done) return;
  static thread_local std::vector<char> stack(1 << 16);
  stack_t ss{};
  ss.ss_sp = stack.data();
  ss.ss_size = stack.size();
  sigaltstack(&ss, nullptr);
  done = true;
}

const char* fault_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SegmentationFault";
    case SIGBUS: return "BusError";
    case SIGFPE: return "FloatingPointError";
    default: return "IllegalInstruction";
  }
}

}  // namespace

struct Engine::Impl {
  std::vector<std::string> args;
  std::unique_ptr<PchDeclarations> pch_declarations;  // before interp: the reader holds it until interp goes
  std::unique_ptr<clang::Interpreter> interp;
  std::string diag_text;
  llvm::raw_string_ostream diag_stream{diag_text};
};

Engine::Engine(const std::vector<std::string>& args, const std::string& pch) : impl_(std::make_unique<Impl>()) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  impl_->args = args;
  if (!pch.empty()) {
    // The PCH was checked by a child first (pch.hpp): clang 19's interpreter crashes on one it
    // refuses. An error it does report is met the same way, by going on without the PCH.
    std::vector<std::string> with_pch = args;
    with_pch.insert(with_pch.end(), {"-include-pch", pch});
    try {
      impl_->interp = make_interpreter(with_pch);
      pch_ = pch;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "[attn kernel] not using the precompiled header %s (%s); cells read the headers they include\n",
                   pch.c_str(), e.what());
    }
  }
  if (!impl_->interp) impl_->interp = make_interpreter(args);
  // The compiler's messages go to a string, which becomes the cell's error or its stderr.
  clang::CompilerInstance* ci = impl_->interp->getCompilerInstance();
  auto* printer = new clang::TextDiagnosticPrinter(impl_->diag_stream, &ci->getDiagnosticOpts());
  ci->getDiagnostics().setClient(printer, /*ShouldOwnClient=*/true);
  printer->BeginSourceFile(ci->getLangOpts(), &ci->getPreprocessor());
  if (!pch_.empty()) {
    if (clang::ExternalASTSource* reader = ci->getASTContext().getExternalSource()) {
      impl_->pch_declarations = std::make_unique<PchDeclarations>(ci->getASTConsumer());
      reader->StartTranslationUnit(impl_->pch_declarations.get());
    }
  }
  install_fault_handlers();
}

Engine::~Engine() = default;

void Engine::load_library(const std::string& path) {
  if (auto err = impl_->interp->LoadDynamicLibrary(path.c_str()))
    throw std::runtime_error("cannot load " + path + ": " + llvm::toString(std::move(err)));
}

RunResult Engine::run(const std::string& code) {
  RunResult r;
  impl_->diag_text.clear();
  const auto t_parse = std::chrono::steady_clock::now();
  auto ptu = impl_->interp->Parse(code);
  const auto t_parsed = std::chrono::steady_clock::now();
  impl_->diag_stream.flush();
  r.diagnostics = impl_->diag_text;
  if (!ptu) {
    std::string msg = llvm::toString(ptu.takeError());
    r.status = RunResult::Status::compile_error;
    r.ename = "CompileError";
    r.evalue = msg;
    return r;
  }
  r.made_ptu = true;
  if (ptu->TUPart) {
    r.declared = defined_names(*ptu->TUPart);
    r.lambdas = has_lambda(*ptu->TUPart);
    r.header = reads_header(*ptu->TUPart);
  }
  ensure_signal_stack();
  snapshot_file_code();
  fault_signal = 0;
  if (sigsetjmp(fault_jump, 1) != 0) {
    if (fault_signal == SIGUSR2) {
      r.status = RunResult::Status::interrupted;
      r.ename = "KeyboardInterrupt";
      r.evalue = "stopped inside the cell's own code (its objects' destructors were skipped: if later cells "
                 "misbehave, Kernel > Restart)";
      return r;
    }
    r.status = RunResult::Status::exception;  // reported as the cell's error: ename, evalue
    r.ename = fault_name(fault_signal);
    r.evalue = std::string(fault_signal == SIGSEGV ? "the cell used memory it does not own (a null or dangling pointer?)"
                                                   : strsignal(fault_signal)) +
               "; the kernel caught it and lives on, but what the cell was building may be half made: "
               "if later cells misbehave, Kernel > Restart";
    return r;
  }
  fault_thread = pthread_self();
  fault_armed = true;
  struct Disarm {
    ~Disarm() { fault_armed = false; }
  } disarm;
  try {
    if (auto err = impl_->interp->Execute(*ptu)) {
      r.status = RunResult::Status::runtime_error;
      r.ename = "RuntimeError";
      r.evalue = llvm::toString(std::move(err));
    }
  } catch (const attn::Interrupted& e) {
    r.status = RunResult::Status::interrupted;
    r.ename = "KeyboardInterrupt";
    r.evalue = e.what();
  } catch (const std::exception& e) {
    r.status = RunResult::Status::exception;
    r.ename = demangle(typeid(e).name());
    r.evalue = e.what();
  } catch (...) {
    r.status = RunResult::Status::exception;
    std::type_info* t = abi::__cxa_current_exception_type();
    r.ename = t ? demangle(t->name()) : "unknown exception";
    r.evalue = "an exception that is not a std::exception";
  }
  impl_->diag_stream.flush();
  r.diagnostics = impl_->diag_text;
  if (const char* log = std::getenv("ATTN_KERNEL_TIMING")) {  // where a cell's time goes (bench/kernel_latency.py)
    if (FILE* f = std::fopen(log, "a")) {
      using ms = std::chrono::duration<double, std::milli>;
      std::fprintf(f, "parse+IR %8.1f ms  jit+run %8.1f ms  %.60s\n", ms(t_parsed - t_parse).count(),
                   ms(std::chrono::steady_clock::now() - t_parsed).count(), code.substr(0, code.find('\n')).c_str());
      std::fclose(f);
    }
  }
  return r;
}

void stop_cell() {
  if (fault_armed.load()) pthread_kill(fault_thread, SIGUSR2);
}

void Engine::undo(unsigned n) {
  if (n == 0) return;
  if (auto err = impl_->interp->Undo(n)) throw std::runtime_error(llvm::toString(std::move(err)));
}

void* Engine::symbol_address(const std::string& ir_name) {
  auto addr = impl_->interp->getSymbolAddress(ir_name);
  if (!addr) {
    llvm::consumeError(addr.takeError());
    return nullptr;
  }
  return addr->toPtr<void*>();
}

}  // namespace kernel
