// Bounded JSON reading (json_file.hpp).
#include "json_file.hpp"

#include "../core/errors.hpp"

#include <fstream>

namespace attn::io {

namespace {

// `bytes` is the size when known, else 0 (a pipe, read until past the limit).
std::string too_large(const std::string& where, std::size_t bytes, const JsonLimits& limits) {
  return where + ": " + (bytes ? std::to_string(bytes) + " bytes, larger than" : std::string("more than")) + " the " +
         std::to_string(limits.max_bytes) + " bytes attn reads from a JSON file (not a file attn wrote, or damaged)";
}

}  // namespace

nlohmann::json parse_json(const std::string& text, const std::string& where, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) throw IOError(too_large(where, text.size(), limits));
  // nlohmann's parser calls this at each value; stopping at the first too-deep
  // array or object keeps the document it builds small.
  auto bounded = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    if ((event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start) &&
        static_cast<std::size_t>(depth) >= limits.max_depth)
      throw IOError(where + ": nested more than " + std::to_string(limits.max_depth) +
                    " levels deep (not a file attn wrote, or damaged)");
    return true;
  };
  try {
    return nlohmann::json::parse(text, bounded);
  } catch (const nlohmann::json::exception& e) {
    // "[json.exception.parse_error.101] parse error at ..." -> "parse error at ...": the library's tag means nothing to a user.
    std::string message = e.what();
    if (message.rfind("[json.exception.", 0) == 0 && message.find("] ") != std::string::npos)
      message = message.substr(message.find("] ") + 2);
    throw IOError(where + ": not valid JSON (" + message + ")");
  }
}

nlohmann::json read_json_file(const std::string& path, const JsonLimits& limits) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(path + ": cannot open (missing or unreadable)");
  // The size first, where the file has one (a regular file): a huge file is refused unread.
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size > 0 && static_cast<std::size_t>(size) > limits.max_bytes)
    throw IOError(too_large(path, static_cast<std::size_t>(size), limits));
  in.clear();
  in.seekg(0, std::ios::beg);
  // Then at most max_bytes + 1 bytes, whatever the file holds by now.
  std::string text(size > 0 ? static_cast<std::size_t>(size) + 1 : limits.max_bytes + 1, '\0');
  in.read(&text[0], static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw IOError(path + ": cannot read (an I/O error)");
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > limits.max_bytes) throw IOError(too_large(path, 0, limits));
  return parse_json(text, path, limits);
}

}  // namespace attn::io
