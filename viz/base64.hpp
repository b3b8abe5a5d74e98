// Base64 (RFC 4648) for what a notebook output embeds: a PNG's bytes (image/png outputs) and SVG
// pictures as data URIs, which Jupyter's HTML sanitiser keeps where it strips an inline <svg>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attn::viz {

inline std::string base64(const std::string& bytes) {
  static const char* const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = bytes.size() - i < 3 ? bytes.size() - i : 3;
    std::uint32_t v = 0;
    for (std::size_t j = 0; j < 3; ++j)
      v = (v << 8) | (j < n ? static_cast<unsigned char>(bytes[i + j]) : 0u);
    for (std::size_t j = 0; j < 4; ++j) out += j <= n ? digits[(v >> (18 - 6 * j)) & 63] : '=';
  }
  return out;
}

// An SVG picture as the source of an <img>: "data:image/svg+xml;base64,...".
inline std::string svg_data_uri(const std::string& svg) { return "data:image/svg+xml;base64," + base64(svg); }

}  // namespace attn::viz
