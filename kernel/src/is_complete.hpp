// Jupyter's is_complete request: does the cell need more lines?
#pragma once

#include <string>

namespace kernel {

// "complete", "incomplete" (an open brace, parenthesis or bracket, or a
// trailing backslash) or "invalid" (a closing one without its opening one).
std::string completeness(const std::string& code);

}  // namespace kernel
