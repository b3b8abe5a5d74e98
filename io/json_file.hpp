// JSON from files someone else wrote (a shared run's config.json and
// vocab.json), read with bounds: a file larger than max_bytes is refused
// before it is read, one nested deeper than max_depth while it is parsed,
// so neither can take more memory than a legitimate file of that size.
//
//   nlohmann::json config = attn::io::read_json_file("runs/rev/config.json");
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace attn::io {

struct JsonLimits {
  std::size_t max_bytes = std::size_t(8) << 20;  // 8 MiB: a vocabulary of ~600,000 words
  std::size_t max_depth = 64;                    // attn's own files nest 3 deep
};

// Parses `text`, or throws an IOError starting with `where`: too long, too
// deeply nested, or not valid JSON (with nlohmann's message).
nlohmann::json parse_json(const std::string& text, const std::string& where, const JsonLimits& limits = {});

// Reads and parses the file at `path` (its size is checked first), or throws
// an IOError starting with the path: "cannot open (missing or unreadable)",
// too large, too deeply nested, or "not valid JSON (...)". A control character
// (NUL, ESC, a newline inside a string: raw or escaped as "\u0000", "\n") is refused as
// "path:line: a control character (NUL) ...": attn's files hold printable text only.
nlohmann::json read_json_file(const std::string& path, const JsonLimits& limits = {});

}  // namespace attn::io
