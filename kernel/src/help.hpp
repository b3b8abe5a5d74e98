// `?name` and Shift-Tab (inspect_request): what a name is, from its header.
#pragma once

#include <string>
#include <vector>

namespace kernel {

struct HelpPage {
  bool found = false;
  std::string text;  // text/plain
  std::string html;  // text/html, with links
};

// attn names: the declarations (every overload) and their doc comment from
// attn's headers (under `root`), those of the name's own namespace first and
// alone when there are any (`attn::softmax` is not the backend's
// attn::fused::softmax), and the docs page that explains the op
// (docs/ops/*.md). Standard names (std::...): a link to cppreference.
HelpPage help_for(const std::string& name, const std::string& root);

// Names declared in attn's headers (functions, classes, structs, aliases), for
// Tab completion.
std::vector<std::string> attn_names(const std::string& root);

// The (possibly qualified) name around byte `cursor` of `code`, or "".
std::string name_at(const std::string& code, size_t cursor);

// The name of the function whose call's parentheses hold byte `cursor`
// (`attn::softmax(x, |` gives attn::softmax), or "".
std::string called_name_at(const std::string& code, size_t cursor);

}  // namespace kernel
