#include "usage.hpp"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Interpreter/PartialTranslationUnit.h>
#include <llvm/IR/Module.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <vector>

namespace kernel {

namespace {

// Collects the files of every declaration an input's code refers to.
class Uses : public clang::RecursiveASTVisitor<Uses> {
 public:
  explicit Uses(const clang::SourceManager& sm) : sm_(sm) {}

  // Instantiations of the cell's own templates refer to what the pattern left dependent;
  // implicit code (constructors, destructors, conversions) refers to what a class holds.
  bool shouldVisitTemplateInstantiations() const { return true; }
  bool shouldVisitImplicitCode() const { return true; }

  bool VisitDeclRefExpr(clang::DeclRefExpr* e) {
    use(e->getDecl());
    use(e->getFoundDecl());
    return true;
  }
  bool VisitMemberExpr(clang::MemberExpr* e) {
    use(e->getMemberDecl());
    return true;
  }
  bool VisitCallExpr(clang::CallExpr* e) {
    use(e->getCalleeDecl());
    return true;
  }
  bool VisitCXXConstructExpr(clang::CXXConstructExpr* e) {
    use(e->getConstructor());
    return true;
  }
  bool VisitCXXBindTemporaryExpr(clang::CXXBindTemporaryExpr* e) {
    if (const clang::CXXTemporary* t = e->getTemporary()) use(t->getDestructor());
    return true;
  }
  bool VisitCXXNewExpr(clang::CXXNewExpr* e) {
    use(e->getOperatorNew());
    return true;
  }
  bool VisitCXXDeleteExpr(clang::CXXDeleteExpr* e) {
    use(e->getOperatorDelete());
    return true;
  }
  // A macro from a header (ATTN_CHECK, a constant) leaves tokens spelled in that header.
  bool VisitStmt(clang::Stmt* s) {
    spelled(s->getBeginLoc());
    spelled(s->getEndLoc());
    return true;
  }
  bool VisitExpr(clang::Expr* e) {
    use_type(e->getType());
    return true;
  }
  bool VisitValueDecl(clang::ValueDecl* d) {
    use_type(d->getType());  // `auto t = attn::softmax(x, 1);` names no type, but uses Tensor
    return true;
  }
  bool VisitTypeLoc(clang::TypeLoc tl) {
    use_type(tl.getType());
    if (auto td = tl.getAs<clang::TypedefTypeLoc>()) use(td.getTypedefNameDecl());
    if (auto ts = tl.getAs<clang::TemplateSpecializationTypeLoc>())
      use(ts.getTypePtr()->getTemplateName().getAsTemplateDecl());
    return true;
  }
  bool VisitCXXRecordDecl(clang::CXXRecordDecl* d) {
    if (d->hasDefinition())
      for (const auto& base : d->bases()) use_type(base.getType());
    return true;
  }

  std::set<std::string> files;
  std::vector<clang::Stmt*> bodies;  // function bodies to traverse next (see use)

  bool in_input(clang::SourceLocation loc) const {
    loc = sm_.getExpansionLoc(loc);
    return loc.isValid() && sm_.getBufferName(loc).starts_with("input_line_");
  }

 private:
  // The declarations behind a type: its typedefs and its class, through pointers, references, arrays.
  void use_type(clang::QualType t) {
    const clang::Type* type = t.isNull() ? nullptr : t.getTypePtrOrNull();
    for (int depth = 0; type && depth < 8; ++depth) {
      if (const auto* td = type->getAs<clang::TypedefType>()) use(td->getDecl());
      if (clang::TagDecl* tag = type->getAsTagDecl()) {
        use(tag);
        return;
      }
      clang::QualType next = type->getPointeeType();  // pointers, references, member pointers
      if (next.isNull() && type->isArrayType()) next = type->getAsArrayTypeUnsafe()->getElementType();
      type = next.isNull() ? nullptr : next.getTypePtrOrNull();
    }
  }

  void spelled(clang::SourceLocation loc) {
    if (loc.isValid() && loc.isMacroID()) file_of(sm_.getSpellingLoc(loc));
  }

  void file_of(clang::SourceLocation loc) {
    if (loc.isInvalid()) return;
    const clang::FileID id = sm_.getFileID(sm_.getExpansionLoc(loc));
    if (auto entry = sm_.getFileEntryRefForID(id)) files.insert(entry->getName().str());
  }

  void use(const clang::Decl* d) {
    // A namespace is opened again by every header: naming it uses none of them.
    if (!d || llvm::isa<clang::NamespaceDecl, clang::TranslationUnitDecl>(d) || !seen_.insert(d).second) return;
    for (const clang::Decl* r : d->redecls()) file_of(r->getLocation());
    file_of(d->getLocation());
    if (const auto* f = llvm::dyn_cast<clang::FunctionDecl>(d)) {
      // A project function's body, an instantiated template's above all, reaches what its header
      // does not include (a call found by argument-dependent lookup: show_result<Tensor> calls
      // viz/display.hpp's mime_bundle_repr): follow it. The library's system headers are not followed.
      const clang::FunctionDecl* def = nullptr;
      if (f->hasBody(def) && def && !sm_.isInSystemHeader(def->getLocation()) && !in_input(def->getLocation()))
        bodies.push_back(def->getBody());
      if (const clang::FunctionDecl* pattern = f->getTemplateInstantiationPattern()) use(pattern);
      if (const clang::FunctionTemplateDecl* t = f->getPrimaryTemplate()) use(t);
    }
    if (const auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(d)) {
      use(spec->getSpecializedTemplate());
      for (const auto& arg : spec->getTemplateArgs().asArray())
        if (arg.getKind() == clang::TemplateArgument::Type) use_type(arg.getAsType());
    }
    if (const auto* r = llvm::dyn_cast<clang::CXXRecordDecl>(d)) {
      if (const clang::CXXRecordDecl* pattern = r->getTemplateInstantiationPattern()) use(pattern);
      if (const clang::CXXRecordDecl* def = r->getDefinition())
        for (const auto& base : def->bases()) use_type(base.getType());
    }
    if (const auto* m = llvm::dyn_cast<clang::CXXMethodDecl>(d)) use(m->getParent());
    if (const auto* t = llvm::dyn_cast<clang::TemplateDecl>(d)) use(t->getTemplatedDecl());
    if (const auto* e = llvm::dyn_cast<clang::EnumConstantDecl>(d))
      use(llvm::dyn_cast_or_null<clang::Decl>(e->getDeclContext()));
  }

  const clang::SourceManager& sm_;
  std::set<const clang::Decl*> seen_;
};

}  // namespace

const std::string& usage_log() {
  static const std::string path = [] {
    const char* p = std::getenv("ATTN_KERNEL_USAGE");
    return std::string(p ? p : "");
  }();
  return path;
}

void record_usage(clang::CompilerInstance& ci, const clang::PartialTranslationUnit& ptu) {
  if (usage_log().empty()) return;
  nlohmann::json line;
  std::set<std::string> files, symbols;
  if (ptu.TUPart) {
    Uses uses(ci.getSourceManager());
    for (clang::Decl* d : ptu.TUPart->decls())  // the declarations a header or the PCH brings are read, not used
      if (uses.in_input(d->getLocation())) uses.TraverseDecl(d);
    while (!uses.bodies.empty()) {
      clang::Stmt* body = uses.bodies.back();
      uses.bodies.pop_back();
      if (body) uses.TraverseStmt(body);
    }
    files = std::move(uses.files);
  }
  if (ptu.TheModule) {
    // What the module declares without defining is what the JIT resolves elsewhere.
    for (const llvm::Function& f : *ptu.TheModule)
      if (f.isDeclaration() && !f.isIntrinsic()) symbols.insert(f.getName().str());
    for (const llvm::GlobalVariable& g : ptu.TheModule->globals())
      if (g.isDeclaration()) symbols.insert(g.getName().str());
  }
  line["files"] = files;
  line["symbols"] = symbols;
  if (FILE* f = std::fopen(usage_log().c_str(), "a")) {
    const std::string text = line.dump() + "\n";
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
}

}  // namespace kernel
