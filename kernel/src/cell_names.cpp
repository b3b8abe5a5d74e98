#include "cell_names.hpp"

#include <clang/AST/RecursiveASTVisitor.h>

#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/Basic/LangOptions.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Lexer.h>

#include <vector>

namespace kernel {

// ---- From the AST: what a parsed input did define -------------------------

namespace {

bool plain_name(const clang::NamedDecl& d) {
  return d.getDeclName().isIdentifier() && !d.getName().empty() && !d.getName().starts_with(kernel_prefix);
}

// Written in the cell itself (the interpreter names each input's buffer "input_line_N"),
// not in a header it included: a header's names are not the cell's to redefine.
bool in_cell_text(const clang::Decl& d) {
  const clang::SourceManager& sm = d.getASTContext().getSourceManager();
  const clang::SourceLocation loc = sm.getExpansionLoc(d.getLocation());
  return loc.isValid() && sm.getBufferName(loc).starts_with("input_line_");
}

void collect(const clang::DeclContext& dc, const std::string& prefix, std::set<std::string>& out) {
  for (const clang::Decl* d : dc.decls()) {
    if (d->getLexicalDeclContext() != &dc) continue;
    if (d->getDeclContext() != &dc && !llvm::isa<clang::NamespaceDecl>(d)) continue;  // out-of-line member
    if (!in_cell_text(*d)) continue;
    if (auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(d)) {
      // cell_rewrite.hpp's inline namespaces are the kernel's, not the cell's: their names are global
      const bool transparent = ns->isAnonymousNamespace() || ns->getName().starts_with(kernel_prefix);
      collect(*ns, transparent ? prefix : prefix + ns->getName().str() + "::", out);
    } else if (auto* ls = llvm::dyn_cast<clang::LinkageSpecDecl>(d)) {
      collect(*ls, prefix, out);
    } else if (auto* ft = llvm::dyn_cast<clang::FunctionTemplateDecl>(d)) {
      if (ft->getTemplatedDecl()->isThisDeclarationADefinition() && plain_name(*ft))
        out.insert(prefix + ft->getName().str());
    } else if (auto* fn = llvm::dyn_cast<clang::FunctionDecl>(d)) {
      if (fn->isThisDeclarationADefinition() && plain_name(*fn)) out.insert(prefix + fn->getName().str());
    } else if (auto* dd = llvm::dyn_cast<clang::DecompositionDecl>(d)) {
      for (const clang::BindingDecl* b : dd->bindings()) out.insert(prefix + b->getName().str());
    } else if (auto* var = llvm::dyn_cast<clang::VarDecl>(d)) {
      if (var->isThisDeclarationADefinition() != clang::VarDecl::DeclarationOnly && plain_name(*var))
        out.insert(prefix + var->getName().str());
    } else if (auto* ct = llvm::dyn_cast<clang::ClassTemplateDecl>(d)) {
      if (ct->getTemplatedDecl()->isThisDeclarationADefinition() && plain_name(*ct))
        out.insert(prefix + ct->getName().str());
    } else if (auto* vt = llvm::dyn_cast<clang::VarTemplateDecl>(d)) {
      if (plain_name(*vt)) out.insert(prefix + vt->getName().str());
    } else if (auto* tag = llvm::dyn_cast<clang::TagDecl>(d)) {
      if (tag->isThisDeclarationADefinition() && plain_name(*tag) &&
          !llvm::isa<clang::ClassTemplateSpecializationDecl>(tag))
        out.insert(prefix + tag->getName().str());
    }
  }
}

}  // namespace

std::set<std::string> defined_names(const clang::DeclContext& tu) {
  std::set<std::string> out;
  collect(tu, "", out);
  return out;
}

namespace {
struct LambdaFinder : clang::RecursiveASTVisitor<LambdaFinder> {
  bool found = false;
  bool VisitLambdaExpr(clang::LambdaExpr*) {
    found = true;
    return false;  // one is enough
  }
};
}  // namespace

bool has_lambda(const clang::DeclContext& tu) {
  LambdaFinder finder;
  for (clang::Decl* d : tu.decls()) {
    if (!in_cell_text(*d)) continue;
    // cell_rewrite.hpp's statement functions and namespaces have fresh names each time:
    // their lambdas' mangled names are new, so they can be taken back
    if (auto* nd = llvm::dyn_cast<clang::NamedDecl>(d); nd && nd->getDeclName().isIdentifier() &&
                                                        nd->getName().starts_with(kernel_prefix))
      continue;
    if (!finder.found) finder.TraverseDecl(d);
  }
  return finder.found;
}

bool reads_header(const clang::DeclContext& tu) {
  for (const clang::Decl* d : tu.decls()) {
    const clang::SourceManager& sm = d->getASTContext().getSourceManager();
    const clang::SourceLocation loc = sm.getExpansionLoc(d->getLocation());
    if (loc.isValid() && !sm.getBufferName(loc).starts_with("input_line_")) return true;
  }
  return false;
}

// ---- From the tokens: what a new cell is about to define -------------------

namespace {

// One element of a statement: a token, or a whole bracketed group (…), […], {…}.
struct Element {
  clang::tok::TokenKind kind;
  std::string text;                 // the identifier or punctuation
  std::vector<std::string> idents;  // for a group: identifiers directly inside
};

struct Tokens {
  std::vector<clang::Token> toks;
  std::vector<std::string> text;
};

Tokens lex(const std::string& code) {
  clang::LangOptions lo;
  lo.CPlusPlus = lo.CPlusPlus11 = lo.CPlusPlus14 = lo.CPlusPlus17 = true;
  lo.LineComment = true;
  lo.Bool = true;
  clang::Lexer lexer(clang::SourceLocation(), lo, code.data(), code.data(), code.data() + code.size());
  Tokens out;
  clang::Token tok;
  bool in_directive = false;
  while (!lexer.LexFromRawLexer(tok) || tok.isNot(clang::tok::eof)) {
    if (tok.is(clang::tok::eof)) break;
    if (tok.isAtStartOfLine()) in_directive = tok.is(clang::tok::hash);
    if (in_directive) continue;  // #include, #define, ... define no cell names
    out.toks.push_back(tok);
    const char* punct = clang::tok::getPunctuatorSpelling(tok.getKind());
    out.text.push_back(tok.is(clang::tok::raw_identifier) ? tok.getRawIdentifier().str() : punct ? punct : "");
  }
  return out;
}

bool is_control(const std::string& s) {
  static const std::set<std::string> words = {"if", "for", "while", "switch", "do", "try", "else", "catch",
                                              "return", "using", "typedef", "static_assert", "delete",
                                              "throw", "goto", "break", "continue", "friend", "extern",
                                              "case", "default", "namespace"};
  return words.count(s) > 0;
}

bool is_type_keyword(const std::string& s) {
  static const std::set<std::string> words = {
      "auto", "int", "long", "short", "char", "bool", "float", "double", "void", "unsigned", "signed",
      "const", "constexpr", "static", "inline", "volatile", "thread_local", "typename", "mutable",
      "size_t", "explicit", "virtual", "register", "wchar_t", "char16_t", "char32_t", "noexcept", "decltype"};
  return words.count(s) > 0;
}

// The names one top-level statement defines.
void names_of(const std::vector<Element>& st, const std::string& prefix, std::set<std::string>& out) {
  using clang::tok::TokenKind;
  namespace tok = clang::tok;
  size_t i = 0;
  if (st.empty()) return;
  if (st[0].kind == tok::raw_identifier && st[0].text == "template") {
    // template <...>: skip to the matching '>'
    int depth = 0;
    for (i = 1; i < st.size(); ++i) {
      if (st[i].kind == tok::less) ++depth;
      if (st[i].kind == tok::greater && --depth == 0) break;
      if (st[i].kind == tok::greatergreater && (depth -= 2) <= 0) break;
    }
    ++i;
  }
  if (i >= st.size()) return;
  const std::string& first = st[i].text;
  if (st[i].kind != tok::raw_identifier || is_control(first)) return;
  if (first == "struct" || first == "class" || first == "union" || first == "enum") {
    size_t j = i + 1;
    if (first == "enum" && j < st.size() && (st[j].text == "class" || st[j].text == "struct")) ++j;
    while (j < st.size() && st[j].kind == tok::l_square) ++j;  // [[attributes]]
    if (j + 1 < st.size() && st[j].kind == tok::raw_identifier) {
      const Element& next = st[j + 1];
      if (next.kind == tok::l_brace || next.kind == tok::colon || next.text == "final")
        out.insert(prefix + st[j].text);
    }
    return;
  }
  // A declaration: type tokens, then the name, then one of = ( { [ ; ,
  size_t head = 0;  // type tokens seen before the name
  for (; i < st.size(); ++i) {
    const Element& e = st[i];
    if (e.kind == tok::raw_identifier) {
      const Element* next = i + 1 < st.size() ? &st[i + 1] : nullptr;
      bool qualified = i > 0 && st[i - 1].kind == tok::coloncolon;
      bool ends = next && (next->kind == tok::equal || next->kind == tok::l_paren || next->kind == tok::l_brace ||
                           next->kind == tok::l_square || next->kind == tok::semi || next->kind == tok::comma);
      if (ends && head > 0 && !qualified && !is_type_keyword(e.text) && e.text != "operator") {
        out.insert(prefix + e.text);
        // Further declarators: `int a = 1, b = 2;`
        for (size_t k = i + 1; k + 1 < st.size(); ++k) {
          if (st[k].kind != tok::comma) continue;
          size_t m = k + 1;
          while (m < st.size() && (st[m].kind == tok::star || st[m].kind == tok::amp)) ++m;
          if (m + 1 < st.size() && st[m].kind == tok::raw_identifier &&
              (st[m + 1].kind == tok::equal || st[m + 1].kind == tok::semi || st[m + 1].kind == tok::comma ||
               st[m + 1].kind == tok::l_brace || st[m + 1].kind == tok::l_paren))
            out.insert(prefix + st[m].text);
        }
        return;
      }
      ++head;
      continue;
    }
    if (e.kind == tok::coloncolon || e.kind == tok::star || e.kind == tok::amp || e.kind == tok::ampamp) continue;
    if (e.kind == tok::less) {  // template arguments of the type
      int depth = 0;
      for (; i < st.size(); ++i) {
        if (st[i].kind == tok::less) ++depth;
        if (st[i].kind == tok::greater && --depth == 0) break;
        if (st[i].kind == tok::greatergreater && (depth -= 2) <= 0) break;
        if (st[i].kind == tok::semi) return;
      }
      ++head;
      continue;
    }
    if (e.kind == tok::l_square && head > 0 && i + 1 < st.size() && st[i + 1].kind == tok::equal) {
      for (const auto& id : e.idents) out.insert(prefix + id);  // auto [a, b] = ...
      return;
    }
    return;  // an operator or a call: an expression statement
  }
}

// A lambda among tokens [b, e): '[' where an expression starts, its ']' followed by ( { mutable or ->.
bool lambda_in(const Tokens& t, size_t b, size_t e) {
  static const std::set<std::string> starts = {"(", ",", "=", "{", "return", "?", ":", "&&", "||", "!", ";", "<<"};
  for (size_t k = b; k < e; ++k) {
    if (t.toks[k].isNot(clang::tok::l_square)) continue;
    if (k > b && !starts.count(t.text[k - 1])) continue;
    int depth = 0;
    size_t m = k;
    for (; m < e; ++m) {
      if (t.toks[m].is(clang::tok::l_square)) ++depth;
      if (t.toks[m].is(clang::tok::r_square) && --depth == 0) break;
    }
    if (m + 1 >= e) continue;
    const std::string& next = t.text[m + 1];
    if (next == "(" || next == "{" || next == "mutable" || next == "->") return true;
  }
  return false;
}

// `const T name = ...` (or `(...)`, `{...}`): a const object, not a pointer or reference to const.
bool const_object(const Tokens& t, size_t b, size_t e) {
  if (t.text[b] != "const") return false;
  int angle = 0;
  for (size_t k = b + 1; k < e; ++k) {
    const auto kind = t.toks[k].getKind();
    if (kind == clang::tok::less) ++angle;
    if (kind == clang::tok::greater) --angle;
    if (kind == clang::tok::greatergreater) angle -= 2;
    if (angle > 0) continue;
    if (kind == clang::tok::star || kind == clang::tok::amp || kind == clang::tok::ampamp) return false;
    if (kind == clang::tok::equal || kind == clang::tok::l_brace || kind == clang::tok::semi) return true;
    if (kind == clang::tok::l_paren) return k > b + 1 && t.toks[k - 1].is(clang::tok::raw_identifier) &&
                                              k + 1 < e;  // `const T x(args)`; a function's `(` too, harmless
  }
  return false;
}

class Splitter {
 public:
  Splitter(const Tokens& t, std::set<std::string>& out) : t_(t), out_(out) {}

  // The top-level statements, with their token ranges (for top_level_statements).
  std::vector<TopLevelStatement> statements;

  // Reads statements until the end, or the '}' closing the current scope.
  void scope(const std::string& prefix) {
    std::vector<Element> st;
    size_t begin = i_;  // the current statement's first token
    auto finish = [&](size_t end, bool semi) {
      std::set<std::string> names;
      names_of(st, prefix, names);
      out_.insert(names.begin(), names.end());
      if (depth_ == 0 && end > begin) record(begin, end, semi, std::move(names));
      st.clear();
    };
    while (i_ < t_.toks.size()) {
      if (st.empty()) begin = i_;
      const clang::Token& tok = t_.toks[i_];
      if (tok.is(clang::tok::r_brace)) {
        ++i_;
        return;
      }
      if (tok.is(clang::tok::semi)) {
        st.push_back({clang::tok::semi, ";", {}});
        ++i_;
        finish(i_, true);
        continue;
      }
      if (tok.is(clang::tok::l_brace)) {
        // namespace X { ... } and extern "C" { ... } open a scope.
        if (!st.empty() && st[0].text == "namespace") {
          ++i_;
          std::string name = st.size() >= 2 && st.back().kind == clang::tok::raw_identifier ? st.back().text : "";
          ++depth_;
          scope(name.empty() ? prefix : prefix + name + "::");
          --depth_;
          st.clear();
          continue;
        }
        if (st.size() == 2 && st[0].text == "extern") {
          ++i_;
          ++depth_;
          scope(prefix);
          --depth_;
          st.clear();
          continue;
        }
        st.push_back(group());
        if (ends_with_body(st)) finish(i_, false);
        continue;
      }
      if (tok.is(clang::tok::l_paren) || tok.is(clang::tok::l_square)) {
        st.push_back(group());
        continue;
      }
      st.push_back({tok.getKind(), t_.text[i_], {}});
      ++i_;
    }
    if (!st.empty()) {  // a last statement without ';'
      const size_t before = statements.size();
      finish(i_, false);
      if (statements.size() > before) statements.back().open = true;
    }
  }

 private:
  void record(size_t begin, size_t end, bool semi, std::set<std::string> names) {
    TopLevelStatement s;
    s.begin = t_.toks[begin].getLocation().getRawEncoding();  // the raw lexer's locations are offsets
    s.end = t_.toks[end - 1].getLocation().getRawEncoding() + t_.toks[end - 1].getLength();
    s.first = t_.text[begin];
    s.names = std::move(names);
    s.ends_with_semi = semi;
    s.lambda = lambda_in(t_, begin, end);
    s.const_object = const_object(t_, begin, end);
    statements.push_back(std::move(s));
  }

  // A bracketed group from here to its matching close.
  Element group() {
    Element e{t_.toks[i_].getKind(), t_.text[i_], {}};
    int depth = 0;
    for (; i_ < t_.toks.size(); ++i_) {
      const clang::Token& tok = t_.toks[i_];
      if (tok.isOneOf(clang::tok::l_paren, clang::tok::l_square, clang::tok::l_brace)) ++depth;
      if (tok.isOneOf(clang::tok::r_paren, clang::tok::r_square, clang::tok::r_brace) && --depth == 0) {
        ++i_;
        break;
      }
      if (depth == 1 && tok.is(clang::tok::raw_identifier)) e.idents.push_back(t_.text[i_]);
    }
    return e;
  }

  // After a { } group: does the statement end here (a function body, a
  // control statement's block) or go on (`S s{1};`, `auto f = [] { };`)?
  bool ends_with_body(const std::vector<Element>& st) const {
    bool next_continues = i_ < t_.toks.size() && (t_.text[i_] == "else" || t_.text[i_] == "catch" ||
                                                 t_.text[i_] == "while");
    if (next_continues) return false;
    if (st.size() == 1) return true;  // a bare block { ... }
    // `[](int a) { ... }(3);`: a lambda called at once, an expression that goes on
    if (st[0].kind == clang::tok::l_square && (st[1].kind == clang::tok::l_paren || st[1].kind == clang::tok::l_brace))
      return false;
    if (!st.empty() && is_control(st[0].text)) return st[0].text != "do";
    for (const auto& e : st)
      if (e.kind == clang::tok::equal) return false;
    for (size_t k = 0; k + 1 < st.size(); ++k)
      if (st[k].kind == clang::tok::l_paren) return true;  // f(...) { body }
    return false;
  }

  const Tokens& t_;
  std::set<std::string>& out_;
  size_t i_ = 0;
  int depth_ = 0;  // inside namespace or extern "C" blocks
};

}  // namespace

std::set<std::string> candidate_names(const std::string& code) {
  Tokens t = lex(code);
  std::set<std::string> out;
  Splitter s(t, out);
  s.scope("");
  return out;
}

std::vector<TopLevelStatement> top_level_statements(const std::string& code) {
  Tokens t = lex(code);
  std::set<std::string> out;
  Splitter s(t, out);
  s.scope("");
  return s.statements;
}

bool mentions_lambda(const std::string& code) {
  Tokens t = lex(code);
  return !t.toks.empty() && lambda_in(t, 0, t.toks.size());
}

}  // namespace kernel
