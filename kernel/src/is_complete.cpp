#include "is_complete.hpp"

#include <clang/Basic/LangOptions.h>
#include <clang/Lex/Lexer.h>

namespace kernel {

std::string completeness(const std::string& code) {
  clang::LangOptions lo;
  lo.CPlusPlus = lo.CPlusPlus11 = lo.CPlusPlus14 = lo.CPlusPlus17 = true;
  lo.LineComment = true;
  // The raw lexer skips comments and keeps string literals whole, so braces
  // inside them do not count.
  clang::Lexer lexer(clang::SourceLocation(), lo, code.data(), code.data(), code.data() + code.size());
  int depth = 0;
  clang::Token tok;
  for (;;) {
    lexer.LexFromRawLexer(tok);
    if (tok.is(clang::tok::eof)) break;
    if (tok.isOneOf(clang::tok::l_brace, clang::tok::l_paren, clang::tok::l_square)) ++depth;
    if (tok.isOneOf(clang::tok::r_brace, clang::tok::r_paren, clang::tok::r_square) && --depth < 0)
      return "invalid";
  }
  if (depth > 0) return "incomplete";
  size_t end = code.find_last_not_of(" \t\r\n");
  if (end != std::string::npos && code[end] == '\\') return "incomplete";
  // An unterminated block comment: the lexer ate the rest of the input.
  size_t open = code.rfind("/*");
  if (open != std::string::npos && code.find("*/", open) == std::string::npos) return "incomplete";
  return "complete";
}

}  // namespace kernel
