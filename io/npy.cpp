// numpy's .npy format: writing version 1.0, reading 1.0 to 3.0.
// Spec: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
#include "npy.hpp"

#include "../core/errors.hpp"

#include <cctype>
#include <cstdint>
#include <cstring>
#include <limits>

namespace attn::io {

namespace {

const std::string kMagic = "\x93NUMPY";

// Values are stored little-endian whatever the machine: we write and read
// them byte by byte, lowest byte first.
template <class Bits>
void put_le(std::string& out, Bits bits) {
  for (std::size_t i = 0; i < sizeof(Bits); ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

template <class Bits>
Bits get_le(const char* p) {
  Bits bits = 0;
  for (std::size_t i = 0; i < sizeof(Bits); ++i) bits |= static_cast<Bits>(static_cast<unsigned char>(p[i])) << (8 * i);
  return bits;
}

// "(2, 3)", "(3,)" or "()": how Python prints a tuple.
std::string shape_tuple(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

template <class T, class Bits>
void put_values(std::string& out, const xt::xarray<T>& a) {
  for (T v : a) {  // row-major order
    Bits bits;
    std::memcpy(&bits, &v, sizeof(bits));  // the float's bit pattern
    put_le(out, bits);
  }
}

// Reads the header dict {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& where) : s_(text), where_(where) {}

  void parse(std::string& descr, bool& fortran_order, Shape& shape) {
    bool has_descr = false, has_order = false, has_shape = false;
    expect('{');
    while (!eat('}')) {
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") descr = string_literal(), has_descr = true;
      else if (key == "fortran_order") fortran_order = boolean(), has_order = true;
      else if (key == "shape") shape = tuple(), has_shape = true;
      else fail("unknown key '" + key + "'");
      if (!eat(',')) {
        expect('}');
        break;
      }
    }
    skip_spaces();
    if (pos_ != s_.size()) fail("unexpected text after the closing '}'");
    if (!has_descr || !has_order || !has_shape) fail("it needs the keys 'descr', 'fortran_order' and 'shape'");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw IOError(where_ + ": the .npy header does not parse (" + what + "): " + s_);
  }
  void skip_spaces() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip_spaces();
    if (pos_ < s_.size() && s_[pos_] == c) return ++pos_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "' at offset " + std::to_string(pos_));
  }
  std::string string_literal() {  // 'text' or "text"
    skip_spaces();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) fail("expected a quoted string at offset " + std::to_string(pos_));
    const char quote = s_[pos_++];
    const std::size_t end = s_.find(quote, pos_);
    if (end == std::string::npos) fail("unterminated string");
    std::string text = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return text;
  }
  bool boolean() {
    skip_spaces();
    for (const char* word : {"True", "False"})
      if (s_.compare(pos_, std::strlen(word), word) == 0) return pos_ += std::strlen(word), word[0] == 'T';
    fail("expected True or False at offset " + std::to_string(pos_));
  }
  Shape tuple() {  // (2, 3), (3,) or ()
    Shape shape;
    expect('(');
    while (!eat(')')) {
      skip_spaces();
      if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_]))) fail("expected a size at offset " + std::to_string(pos_));
      std::size_t n = 0;
      for (; pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_])); ++pos_) {
        if (n > (std::numeric_limits<std::size_t>::max() - 9) / 10) fail("a size is too large");
        n = 10 * n + static_cast<std::size_t>(s_[pos_] - '0');
      }
      shape.push_back(n);
      if (!eat(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }

  const std::string& s_;
  const std::string& where_;
  std::size_t pos_ = 0;
};

// Converts n little-endian values of type Stored at p into out[0 .. n).
template <class T, class Stored, class Bits>
void get_values(const char* p, std::size_t n, T* out) {
  for (std::size_t i = 0; i < n; ++i) {
    const Bits bits = get_le<Bits>(p + i * sizeof(Bits));
    Stored v;
    std::memcpy(&v, &bits, sizeof(v));
    out[i] = static_cast<T>(v);
  }
}

template <class T>
void decode_into(const std::string& descr, const char* p, std::size_t n, T* out) {
  if (descr == "<f8") get_values<T, double, std::uint64_t>(p, n, out);
  else if (descr == "<f4") get_values<T, float, std::uint32_t>(p, n, out);
  else if (descr == "<i8") get_values<T, std::int64_t, std::uint64_t>(p, n, out);
  else get_values<T, std::int32_t, std::uint32_t>(p, n, out);
}

}  // namespace

std::string to_npy(const Tensor& t) {
  if (!t.defined()) throw ValueError("to_npy: the tensor is undefined");
  const bool f8 = t.dtype() == Dtype::Float64;
  std::string header = std::string("{'descr': '") + (f8 ? "<f8" : "<f4") +
                       "', 'fortran_order': False, 'shape': " + shape_tuple(t.shape()) + ", }";
  // magic (6) + version (2) + length (2) + header + '\n' is padded to a multiple of 64.
  const std::size_t unpadded = kMagic.size() + 4 + header.size() + 1;
  header += std::string((64 - unpadded % 64) % 64, ' ') + "\n";
  if (header.size() > 65535) throw ValueError("to_npy: a " + std::to_string(t.dim()) + "-d shape does not fit a .npy 1.0 header");

  std::string out = kMagic + '\x01' + '\x00';  // version 1.0
  put_le(out, static_cast<std::uint16_t>(header.size()));
  out += header;
  if (f8) put_values<double, std::uint64_t>(out, t.data<double>());
  else put_values<float, std::uint32_t>(out, t.data<float>());
  return out;
}

std::size_t npy_data_offset(const std::string& first_bytes, const std::string& where) {
  const std::string& bytes = first_bytes;
  if (bytes.size() < 8 || bytes.compare(0, kMagic.size(), kMagic) != 0)
    throw IOError(where + ": not a .npy array (it does not start with the magic \\x93NUMPY)");
  const int major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3)
    throw IOError(where + ": unsupported .npy version " + std::to_string(major) + " (attn reads 1.0 to 3.0)");
  // Version 1.0 stores the header length in 2 bytes, versions 2.0 and 3.0 in 4.
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + len_bytes) throw IOError(where + ": the .npy file is truncated inside its preamble");
  const std::size_t header_len = major == 1 ? get_le<std::uint16_t>(&bytes[8]) : get_le<std::uint32_t>(&bytes[8]);
  if (header_len > kMaxNpyHeader)
    throw IOError(where + ": the .npy header claims " + std::to_string(header_len) + " bytes, more than the " +
                  std::to_string(kMaxNpyHeader) + " attn reads");
  return 8 + len_bytes + header_len;
}

NpyHeader parse_npy_header(const std::string& head, const std::string& where) {
  NpyHeader h;
  h.data_offset = npy_data_offset(head.substr(0, 12), where);
  if (head.size() < h.data_offset)
    throw IOError(where + ": the .npy file is truncated inside its header (" + std::to_string(head.size()) +
                  " bytes, the header ends at byte " + std::to_string(h.data_offset) + ")");
  const std::size_t header_start = head[6] == 1 ? 10 : 12;
  bool fortran_order = false;
  const std::string header = head.substr(header_start, h.data_offset - header_start);
  HeaderParser(header, where).parse(h.descr, fortran_order, h.shape);
  if (fortran_order)
    throw IOError(where + ": fortran_order True (column-major data) is not supported; save np.ascontiguousarray(a)");

  if (h.descr == "<f8" || h.descr == "<i8") h.item_size = 8;
  else if (h.descr == "<f4" || h.descr == "<i4") h.item_size = 4;
  else throw IOError(where + ": unsupported dtype '" + h.descr + "' (attn reads '<f8', '<f4', '<i8' and '<i4')");

  // The number of bytes the shape needs, refusing sizes that overflow.
  h.data_bytes = h.item_size;
  for (std::size_t n : h.shape) {
    if (n != 0 && h.data_bytes > std::numeric_limits<std::size_t>::max() / n)
      throw IOError(where + ": the shape " + shape_str(h.shape) + " is impossibly large");
    h.data_bytes *= n;
  }
  return h;
}

void decode_npy_values(const NpyHeader& header, const char* p, std::size_t count, Tensor& dest, std::size_t first) {
  if (dest.dtype() == Dtype::Float64) decode_into(header.descr, p, count, dest.data<double>().data() + first);
  else decode_into(header.descr, p, count, dest.data<float>().data() + first);
}

Tensor from_npy(const std::string& bytes, const std::string& where) {
  const NpyHeader h = parse_npy_header(bytes, where);
  const std::size_t actual = bytes.size() - h.data_offset;
  if (actual != h.data_bytes)
    throw IOError(where + ": a " + h.descr + " array of shape " + shape_str(h.shape) + " needs " +
                  std::to_string(h.data_bytes) + " bytes of data, the file has " + std::to_string(actual) +
                  (actual < h.data_bytes ? " (truncated)" : ""));
  Tensor t = h.dtype() == Dtype::Float64 ? Tensor(xt::xarray<double>::from_shape(h.shape))
                                         : Tensor(xt::xarray<float>::from_shape(h.shape));
  decode_npy_values(h, bytes.data() + h.data_offset, h.numel(), t, 0);
  return t;
}

}  // namespace attn::io
