// Bounded JSON reading (json_file.hpp).
#include "json_file.hpp"

#include "../core/errors.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace attn::io {

namespace {

// `bytes` is the size when known, else 0 (a pipe, read until past the limit).
std::string too_large(const std::string& where, std::size_t bytes, const JsonLimits& limits) {
  return where + ": " + (bytes ? std::to_string(bytes) + " bytes, larger than" : std::string("more than")) + " the " +
         std::to_string(limits.max_bytes) + " bytes attn reads from a JSON file (not a file attn wrote, or damaged)";
}

// "NUL", "0x1b": how a message names a control character.
std::string control_name(unsigned code) {
  if (code == 0) return "NUL";
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", code);
  return hex;
}

// attn's JSON files hold printable text only: a control character in a string, raw or
// escaped ("\u0000", "\n"), is refused with the file and line where it is.
void check_control_characters(const std::string& text, const std::string& where) {
  std::size_t line = 1;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    unsigned code = 256;  // none
    if (!in_string) {
      if (c == '"') in_string = true;
      else if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') code = c;  // between values: JSON's blanks only
    } else if (c == '"') {
      in_string = false;
    } else if (c < 0x20 || c == 0x7f) {
      code = c;
    } else if (c == '\\' && i + 1 < text.size()) {
      const char e = text[++i];
      const std::string escapes = "bfnrt";
      if (escapes.find(e) != std::string::npos) code = std::string("\b\f\n\r\t")[escapes.find(e)];
      if (e == 'u' && i + 4 < text.size()) {
        const unsigned long u = std::strtoul(text.substr(i + 1, 4).c_str(), nullptr, 16);
        if (u < 0x20 || u == 0x7f) code = static_cast<unsigned>(u);
        i += 4;
      }
    }
    if (code < 256)
      throw IOError(where + ":" + std::to_string(line) + ": a control character (" + control_name(code) +
                    ") in the text; attn's JSON files hold printable text only (damaged, or edited by hand)");
    if (c == '\n') ++line;
  }
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
  check_control_characters(text, path);
  return parse_json(text, path, limits);
}

}  // namespace attn::io
