#include "engine.hpp"

#include "cell_names.hpp"
#include "core/interrupt.hpp"
#include "usage.hpp"

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/ExternalASTSource.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Interpreter/Interpreter.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <csetjmp>
#include <csignal>
#include <cxxabi.h>
#include <set>
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
  void HandleInterestingDecl(clang::DeclGroupRef group) override {
    interpreter_.HandleTopLevelDecl(group);
    read_for_input.push_back(group);
  }
  // What the reader gave during the current input: if the input fails, code generation
  // ignored it, and gets it again (Engine::Impl::recover_from_failed_input).
  std::vector<clang::DeclGroupRef> read_for_input;

 private:
  clang::ASTConsumer& interpreter_;
};

// The definitions a failed input made, which code generation never saw. clang
// 19 instantiates the templates an input uses at its end, errors or not
// (show_result<int>, a tensor's display, std::max<long>), and reads the inline
// functions it uses from the precompiled header (xcpp::detail::dump), but its
// code generator ignores every declaration once an error occurred. Sema keeps
// them as made, so no later input makes them again and its code calls a
// function no module defines ("Symbols not found: xcpp::detail::show_result<int>").
// Walking what the failed input used, and on through the bodies instantiated
// for it, finds them; they go to code generation once the error is over
// (Engine::Impl::recover_from_failed_input), which emits each when a later input uses it.
class InstantiatedForInput : public clang::RecursiveASTVisitor<InstantiatedForInput> {
 public:
  explicit InstantiatedForInput(clang::ASTContext& ctx) : ctx_(ctx) {}
  std::vector<clang::Decl*> definitions;       // functions and variables each module may need a copy of
  std::vector<clang::CXXRecordDecl*> vtables;  // dynamic class templates constructed: their vtables

  bool shouldVisitImplicitCode() const { return true; }
  bool VisitDeclRefExpr(clang::DeclRefExpr* e) { return add(e->getDecl()); }
  bool VisitMemberExpr(clang::MemberExpr* e) { return add(e->getMemberDecl()); }
  bool VisitCXXConstructExpr(clang::CXXConstructExpr* e) {
    clang::CXXRecordDecl* record = e->getConstructor()->getParent();
    // Only an implicit instantiation's vtable is emitted by every module that needs it; an
    // explicitly instantiated one (std::ostream's) lives in its library.
    auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(record);
    if (spec && record->isDynamicClass() && spec->getSpecializationKind() == clang::TSK_ImplicitInstantiation &&
        seen_.insert(record).second)
      vtables.push_back(record);
    if (clang::CXXDestructorDecl* dtor = record->getDestructor()) add(dtor);
    return add(e->getConstructor());
  }
  bool VisitCXXNewExpr(clang::CXXNewExpr* e) { return add(e->getOperatorNew()); }
  bool VisitCXXDeleteExpr(clang::CXXDeleteExpr* e) { return add(e->getOperatorDelete()); }
  bool VisitCXXBindTemporaryExpr(clang::CXXBindTemporaryExpr* e) {
    return add(const_cast<clang::CXXDestructorDecl*>(e->getTemporary()->getDestructor()));
  }

  // Every specialization made of the function templates in namespace `name` (and those inside
  // it). The kernel's own display helpers (xcpp::detail::show_result, its operator,) are
  // instantiated for a shown value even when a parse error then discards the statement, where
  // no walk of what the input kept can find them.
  void add_specializations_in(clang::DeclContext& context, const char* name) {
    for (clang::NamedDecl* found : context.lookup(&ctx_.Idents.get(name)))
      if (auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(found)) add_specializations_in(*ns);
  }

 private:
  void add_specializations_in(clang::NamespaceDecl& ns) {
    for (clang::NamespaceDecl* part : ns.redecls())
      for (clang::Decl* decl : part->decls()) {
        if (auto* inner = llvm::dyn_cast<clang::NamespaceDecl>(decl)) {
          if (inner->isFirstDecl()) add_specializations_in(*inner);
        } else if (auto* tmpl = llvm::dyn_cast<clang::FunctionTemplateDecl>(decl)) {
          for (clang::FunctionDecl* spec : tmpl->specializations()) add(spec);
        }
      }
  }

  clang::ASTContext& ctx_;
  std::set<clang::Decl*> seen_;

  // Only a definition that every module using it emits a copy of (an instantiation, an inline
  // or implicit function, a template's static member) can be one code generation missed.
  bool add(clang::Decl* decl) {
    if (!decl || !seen_.insert(decl).second) return true;
    if (auto* var = llvm::dyn_cast<clang::VarDecl>(decl)) {
      clang::VarDecl* definition = var->getDefinition();
      if (definition && var->hasGlobalStorage() && clang::isDiscardableGVALinkage(ctx_.GetGVALinkageForVariable(definition))) {
        definitions.push_back(definition);
        if (clang::Expr* init = definition->getInit()) TraverseStmt(init);
      }
      return true;
    }
    auto* fn = llvm::dyn_cast<clang::FunctionDecl>(decl);
    const clang::FunctionDecl* definition = nullptr;
    if (!fn || !fn->isDefined(definition) || !definition) return true;
    auto* def = const_cast<clang::FunctionDecl*>(definition);
    if (def != fn && !seen_.insert(def).second) return true;
    if (!clang::isDiscardableGVALinkage(ctx_.GetGVALinkageForFunction(def))) return true;
    definitions.push_back(def);
    if (clang::Stmt* body = def->getBody()) TraverseStmt(body);
    if (auto* ctor = llvm::dyn_cast<clang::CXXConstructorDecl>(def))
      for (clang::CXXCtorInitializer* init : ctor->inits()) TraverseStmt(init->getInit());
    return true;
  }
};

// Keeps the machine code of inputs taken back (Undo). Once a C++ exception has
// unwound through the JIT's code, freeing a module (Undo of a cell that threw,
// or after an input refused for a missing symbol) leaves the unwinder (libgcc)
// with stale records, and the next exception from any cell crashes it (a
// SIGSEGV: tests/test_kernel.py, FailedCell). Registered after the JIT's linking
// layer, this manager hears of a removal first and moves the module's memory
// and its registered unwind frames to a tracker that is never removed; the
// module's symbols still go, so its names can be defined again. The cost: the
// code of cells taken back stays in memory (about 1.8 MB for each re-run of a
// cell that shows a tensor, measured; 0.24 MB before).
class KeepRemovedCode : public llvm::orc::ResourceManager {
 public:
  KeepRemovedCode(llvm::orc::ExecutionSession& session, llvm::orc::ResourceManager& layer, llvm::orc::JITDylib& jd)
      : session_(session), layer_(layer), kept_(jd.createResourceTracker()) {
    session_.registerResourceManager(*this);
  }
  ~KeepRemovedCode() override { session_.deregisterResourceManager(*this); }

  llvm::Error handleRemoveResources(llvm::orc::JITDylib& jd, llvm::orc::ResourceKey key) override {
    session_.runSessionLocked([&] { layer_.handleTransferResources(jd, kept_->getKeyUnsafe(), key); });
    return llvm::Error::success();
  }
  void handleTransferResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey, llvm::orc::ResourceKey) override {}

 private:
  llvm::orc::ExecutionSession& session_;
  llvm::orc::ResourceManager& layer_;
  llvm::orc::ResourceTrackerSP kept_;
};

// The JIT's linking layer as the resource manager it privately is (both of ORC's layers are).
llvm::orc::ResourceManager* linking_layer(llvm::orc::LLJIT& jit) {
  llvm::orc::ObjectLayer& layer = jit.getObjLinkingLayer();
  if (auto* jitlink = llvm::dyn_cast<llvm::orc::ObjectLinkingLayer>(&layer))
    return (llvm::orc::ResourceManager*)jitlink;  // a C-style cast reaches the private base
  if (auto* rtdyld = llvm::dyn_cast<llvm::orc::RTDyldObjectLinkingLayer>(&layer))
    return (llvm::orc::ResourceManager*)rtdyld;
  return nullptr;
}

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
  std::unique_ptr<KeepRemovedCode> keep_code;  // after interp: deregisters from its JIT first
  std::string diag_text;
  llvm::raw_string_ostream diag_stream{diag_text};
  std::string broken;  // why the interpreter cannot go on; "" while it can

  // Leaves the interpreter as it was before a failed input. Two things stay behind in clang 19:
  // the IR of the input's declarations before its error, in the module being built, which would
  // run (or clash) with the next input: an empty input takes that module, and Undo drops it
  // unrun; and the templates it instantiated, which code generation must be given
  // (InstantiatedForInput).
  void recover_from_failed_input();
  // Takes back the most recent input; on failure the interpreter is broken (see `broken`).
  void take_back(const char* what);
  // The demangled names of the symbols `module` uses that nothing defines.
  std::vector<std::string> unresolved_symbols(llvm::Module& module);
  // An input whose run failed in the JIT (its link) can leave its module's initializer pending
  // there, which the next run would fail on: after the input is undone, an empty run clears it.
  bool jit_failed = false;
  void settle_jit();
};

std::vector<std::string> Engine::Impl::unresolved_symbols(llvm::Module& module) {
  std::vector<std::string> missing;
  auto check = [&](llvm::GlobalValue& value) {
    if (!value.isDeclaration() || value.hasExternalWeakLinkage() || !value.hasName()) return;
    if (auto* fn = llvm::dyn_cast<llvm::Function>(&value); fn && fn->isIntrinsic()) return;
    auto address = interp->getSymbolAddress(value.getName());
    if (address) return;
    llvm::consumeError(address.takeError());
    missing.push_back(demangle(value.getName().str().c_str()));
  };
  for (llvm::Function& fn : module.functions()) check(fn);
  for (llvm::GlobalVariable& var : module.globals()) check(var);
  return missing;
}

void Engine::Impl::settle_jit() {
  jit_failed = false;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto empty = interp->Parse("");
    if (!empty) {
      broken = "clang could not start a new input (" + llvm::toString(empty.takeError()) + ")";
      return;
    }
    llvm::Error err = interp->Execute(*empty);
    const std::string why = err ? llvm::toString(std::move(err)) : "";
    take_back("an empty input");
    if (why.empty() || !broken.empty()) return;
    if (attempt == 1) broken = "the JIT still fails on a cell taken back (" + why.substr(0, 200) + ")";
  }
}

void Engine::Impl::recover_from_failed_input() {
  InstantiatedForInput made(interp->getASTContext());
  clang::TranslationUnitDecl* failed = interp->getASTContext().getTranslationUnitDecl();
  for (clang::Decl* decl : failed->decls()) made.TraverseDecl(decl);
  made.add_specializations_in(*failed->getPrimaryContext(), "xcpp");
  // clang 19 keeps a failed input's (empty) PTU in its list, where Undo(n) would count it in
  // place of one of the cells' inputs: it goes first.
  take_back("the failed input");
  if (!broken.empty()) return;
  auto empty = interp->Parse("");
  if (!empty) {
    broken = "clang could not start a new input after the failed one (" + llvm::toString(empty.takeError()) + ")";
    return;
  }
  take_back("the failed input's code");
  clang::ASTConsumer& codegen = interp->getCompilerInstance()->getASTConsumer();
  if (pch_declarations)
    for (clang::DeclGroupRef group : pch_declarations->read_for_input) codegen.HandleTopLevelDecl(group);
  for (clang::Decl* decl : made.definitions) codegen.HandleTopLevelDecl(clang::DeclGroupRef(decl));
  for (clang::CXXRecordDecl* record : made.vtables) codegen.HandleVTable(record);
}

void Engine::Impl::take_back(const char* what) {
  if (auto err = interp->Undo(1)) broken = std::string("clang could not take back ") + what + " (" + llvm::toString(std::move(err)) + ")";
}

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
  if (auto jit = impl_->interp->getExecutionEngine()) {
    if (llvm::orc::ResourceManager* layer = linking_layer(*jit))
      impl_->keep_code = std::make_unique<KeepRemovedCode>(jit->getExecutionSession(), *layer, jit->getMainJITDylib());
  } else {
    llvm::consumeError(jit.takeError());
  }
  install_fault_handlers();
}

Engine::~Engine() {
  impl_->keep_code.reset();  // before the JIT it listens to
}

void Engine::load_library(const std::string& path) {
  if (auto err = impl_->interp->LoadDynamicLibrary(path.c_str()))
    throw std::runtime_error("cannot load " + path + ": " + llvm::toString(std::move(err)));
}

RunResult Engine::run(const std::string& code) {
  RunResult r;
  if (!impl_->broken.empty()) {
    r.status = RunResult::Status::broken;
    r.ename = "KernelError";
    r.evalue = broken_message();
    return r;
  }
  impl_->diag_text.clear();
  if (impl_->pch_declarations) impl_->pch_declarations->read_for_input.clear();
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
    impl_->recover_from_failed_input();
    if (!impl_->broken.empty()) r.status = RunResult::Status::broken, r.ename = "KernelError", r.evalue = broken_message();
    return r;
  }
  clang::DiagnosticsEngine& diags = impl_->interp->getCompilerInstance()->getDiagnostics();
  if (diags.hasErrorOccurred() || !ptu->TheModule) {
    // An error clang reports after the input's declarations were accepted (a template
    // instantiated at the input's end): the input is taken back unrun, as a compile error.
    r.status = RunResult::Status::compile_error;
    r.ename = "CompileError";
    r.evalue = "Parsing failed.";
    diags.Reset(/*soft=*/true);
    diags.getClient()->clear();
    impl_->take_back("an input that failed at its end");
    if (!impl_->broken.empty()) r.status = RunResult::Status::broken, r.ename = "KernelError", r.evalue = broken_message();
    return r;
  }
  r.made_ptu = true;
  record_usage(*impl_->interp->getCompilerInstance(), *ptu);  // ATTN_KERNEL_USAGE (usage.hpp)
  if (ptu->TUPart) {
    r.declared = defined_names(*ptu->TUPart);
    r.lambdas = has_lambda(*ptu->TUPart);
    r.header = reads_header(*ptu->TUPart);
  }
  // A symbol no module or library defines would fail the JIT's link and leave the module's
  // initializer pending there, failing every later cell: the input is refused before it is run.
  const std::vector<std::string> missing = impl_->unresolved_symbols(*ptu->TheModule);
  if (!missing.empty()) {
    r.status = RunResult::Status::runtime_error;
    r.ename = "LinkError";
    std::string names;
    for (size_t i = 0; i < missing.size() && i < 5; ++i) names += (i ? ", " : "") + missing[i];
    if (missing.size() > 5) names += ", ...";
    r.evalue = "declared but defined nowhere (no cell, nor a library, defines it): " + names +
               "; define it, or check its spelling and arguments";
    return r;
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
      impl_->jit_failed = true;
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
  if (!impl_->broken.empty()) throw std::runtime_error(broken_message());
  if (auto err = impl_->interp->Undo(n)) {
    impl_->broken = "clang could not take back " + std::to_string(n) + " input(s) (" + llvm::toString(std::move(err)) + ")";
    throw std::runtime_error(broken_message());
  }
  if (impl_->jit_failed) impl_->settle_jit();
  if (!impl_->broken.empty()) throw std::runtime_error(broken_message());
}

std::string Engine::broken_message() const {
  return "The C++ interpreter cannot go on: " + impl_->broken + "; Kernel > Restart, then run the cells again.";
}

bool Engine::broken() const { return !impl_->broken.empty(); }

void* Engine::symbol_address(const std::string& ir_name) {
  auto addr = impl_->interp->getSymbolAddress(ir_name);
  if (!addr) {
    llvm::consumeError(addr.takeError());
    return nullptr;
  }
  return addr->toPtr<void*>();
}

}  // namespace kernel
