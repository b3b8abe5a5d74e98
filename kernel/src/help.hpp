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

// attn names: the declaration and its doc comment from attn's headers (under
// `root`), and the docs page that explains the op (docs/ops/*.md). Standard
// names (std::...): a link to cppreference.
HelpPage help_for(const std::string& name, const std::string& root);

// Names declared in attn's headers (functions, classes, structs, aliases), for
// Tab completion.
std::vector<std::string> attn_names(const std::string& root);

// The (possibly qualified) name around byte `cursor` of `code`, or "".
std::string name_at(const std::string& code, size_t cursor);

}  // namespace kernel
