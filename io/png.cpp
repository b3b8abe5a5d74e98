// libpng rather than stb_image (libstb-dev): libpng is the reference decoder and checks what
// stb_image skips (the zlib stream's Adler-32, image data too short or too long), so a damaged
// file is refused instead of read as wrong pixels; and its errors say what is wrong ("bad
// adaptive filter value"), which the messages pass on.
//
// Writing uses libpng's "simplified" API (png_image_*). Reading does not: that API always
// converts to sRGB, so a file with a gAMA chunk, or a 16-bit one without an sRGB chunk, would
// come back with other values than it stores. Reading uses the low-level API with no gamma or
// colour transform. libpng reports its errors there by longjmp to a setjmp of the caller's; a
// longjmp across a C++ frame skips its destructors, so each setjmp sits in a small function
// (read_header, read_layout, read_rows) that holds plain data only, and the error text is
// copied out.
#include "png.hpp"

#include "../core/errors.hpp"
#include "atomic_file.hpp"

#include <png.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

namespace attn::io {

namespace {

const unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

// Frees the simplified API's state however the function leaves.
struct ImageGuard {
  png_image* image;
  ~ImageGuard() { png_image_free(image); }
};

std::string quoted(const std::string& name) { return "'" + name + "'"; }

void check_shape(const xt::xtensor<std::uint8_t, 3>& rgb, const std::string& what) {
  const auto& s = rgb.shape();
  if (s[0] != 3 || s[1] == 0 || s[2] == 0)
    throw ValueError(what + ": expected an RGB picture [3, H, W] with H, W >= 1, got [" + std::to_string(s[0]) +
                     ", " + std::to_string(s[1]) + ", " + std::to_string(s[2]) + "]");
  if (s[1] > PNG_UINT_31_MAX || s[2] > PNG_UINT_31_MAX / 3)
    throw ValueError(what + ": a " + std::to_string(s[1]) + "x" + std::to_string(s[2]) +
                     " picture is larger than PNG allows");
}

// CRC-32 as PNG chunks use it (the zlib/ISO-HDLC polynomial, reflected). Computed here because
// libattn links libpng but not zlib, whose crc32 libpng does not export.
std::uint32_t crc32_of(const char* data, std::size_t n) {
  static const std::vector<std::uint32_t> table = [] {
    std::vector<std::uint32_t> t(256);
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xffffffffu;
  for (std::size_t i = 0; i < n; ++i) c = table[(c ^ static_cast<unsigned char>(data[i])) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

std::uint32_t big_endian(const std::string& bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

std::string hex(std::uint32_t v) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08x", v);
  return text;
}

// A chunk type as the message shows it: PNG's are four ASCII letters; anything else is damage.
std::string chunk_name(const std::string& type) {
  for (char c : type)
    if (!std::isalpha(static_cast<unsigned char>(c))) return "chunk of type " + hex(big_endian(type, 0));
  return type + " chunk";
}

// What is wrong with the file's chunks (each a 4-byte length, a 4-byte type, the data and a
// CRC of type and data), as the rest of a sentence naming the file, or "" when they run whole,
// each CRC right, up to IEND and the file ends there. libpng would not say all of it: it stops
// reading after IEND, checks the CRC of a chunk after the image data only as a warning, and
// reads a file cut inside its last chunks as a whole one when asked for the image only.
std::string chunk_problem(const std::string& bytes) {
  std::size_t at = sizeof kSignature;
  for (;;) {
    if (at == bytes.size()) return "is truncated: it ends before its IEND chunk";
    if (at + 8 > bytes.size()) return "is truncated: it ends inside a chunk's header, at byte " + std::to_string(at);
    const std::uint32_t length = big_endian(bytes, at);
    const std::string type = bytes.substr(at + 4, 4);
    if (length > PNG_UINT_31_MAX)
      return "is damaged: the chunk at byte " + std::to_string(at) + " declares a length of " +
             std::to_string(length) + ", beyond PNG's limit of 2^31 - 1";
    const std::size_t end = at + 12 + std::size_t(length);
    if (end > bytes.size())
      return "is truncated: it ends inside its " + type + " chunk, at byte " + std::to_string(bytes.size()) + " of " +
             std::to_string(end);
    const std::uint32_t stored = big_endian(bytes, end - 4);
    const std::uint32_t computed = crc32_of(bytes.data() + at + 4, 4 + std::size_t(length));
    if (stored != computed)
      return "is damaged: its " + chunk_name(type) + " at byte " + std::to_string(at) + " fails its CRC check (stored " +
             hex(stored) + ", computed " + hex(computed) + ")";
    if (type == "IEND") {
      if (end == bytes.size()) return "";
      return "holds " + std::to_string(bytes.size() - end) + " bytes after its IEND chunk (a PNG file ends there)";
    }
    at = end;
  }
}

// One low-level read: libpng's state, the file in memory it reads from, and the text of the
// error that stopped it. Plain data: the functions holding a setjmp hold nothing else.
struct Reader {
  png_structp png = nullptr;
  png_infop info = nullptr;
  const char* data = nullptr;
  std::size_t size = 0;
  std::size_t at = 0;
  char message[256] = {0};
};

// Frees libpng's state however decode_png leaves.
struct ReaderGuard {
  Reader& reader;
  ~ReaderGuard() { png_destroy_read_struct(&reader.png, &reader.info, nullptr); }
};

// libpng's error callback: keeps the message and jumps back to the active setjmp (libpng
// requires that it does not return).
void on_error(png_structp png, png_const_charp message) {
  Reader* reader = static_cast<Reader*>(png_get_error_ptr(png));
  std::snprintf(reader->message, sizeof reader->message, "%s", message);
  png_longjmp(png, 1);
}

// Warnings are about what libpng can go on with; what attn refuses is an error (benign errors
// are made errors below), so warnings are dropped rather than printed to stderr.
void on_warning(png_structp, png_const_charp) {}

void on_read(png_structp png, png_bytep out, std::size_t n) {
  Reader* reader = static_cast<Reader*>(png_get_io_ptr(png));
  if (n > reader->size - reader->at) png_error(png, "read past the end of the file");
  std::memcpy(out, reader->data + reader->at, n);
  reader->at += n;
}

// Reads the signature and the chunks up to the image data (IHDR, PLTE, tRNS); false, with
// reader.message, when libpng refuses them. Holds no object with a destructor.
bool read_header(Reader& reader) {
  if (setjmp(png_jmpbuf(reader.png))) return false;
  png_read_info(reader.png, reader.info);
  return true;
}

// Sets the transforms and says what a row then holds: its bytes and channels. `palette`: the
// rows are left as one palette index a byte, for the caller to check and expand. No gamma or
// colour transform: the values come back as stored. False, with reader.message, on an error.
bool read_layout(Reader& reader, bool palette, std::size_t* row_bytes, int* channels) {
  if (setjmp(png_jmpbuf(reader.png))) return false;
  if (palette) {
    png_set_packing(reader.png);  // 1, 2 and 4-bit indices to one a byte
  } else {
    png_set_expand(reader.png);    // a tRNS colour key to an alpha channel
    png_set_scale_16(reader.png);  // 16 bits to 8 by scaling: v * 257 reads as v
  }
  png_set_interlace_handling(reader.png);
  png_read_update_info(reader.png, reader.info);
  *row_bytes = png_get_rowbytes(reader.png, reader.info);
  *channels = png_get_channels(reader.png, reader.info);
  return true;
}

// Reads the image into `rows`, then the chunks after it up to IEND; false, with
// reader.message, when libpng refuses the file. Holds no object with a destructor.
bool read_rows(Reader& reader, png_bytepp rows) {
  if (setjmp(png_jmpbuf(reader.png))) return false;
  png_read_image(reader.png, rows);
  png_read_end(reader.png, nullptr);
  return true;
}

}  // namespace

std::string encode_png(const xt::xtensor<std::uint8_t, 3>& rgb) {
  check_shape(rgb, "encode_png");
  const std::size_t h = rgb.shape()[1], w = rgb.shape()[2];
  std::vector<std::uint8_t> interleaved(3 * h * w);  // [H, W, 3], as the file holds them
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t y = 0; y < h; ++y)
      for (std::size_t x = 0; x < w; ++x) interleaved[(y * w + x) * 3 + c] = rgb(c, y, x);

  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(w);
  image.height = static_cast<png_uint_32>(h);
  image.format = PNG_FORMAT_RGB;
  ImageGuard guard{&image};
  png_alloc_size_t size = 0;  // first call: how many bytes the file takes
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, interleaved.data(), 0, nullptr))
    throw IOError(std::string("encode_png: libpng: ") + image.message);
  std::string bytes(size, '\0');
  if (!png_image_write_to_memory(&image, bytes.data(), &size, 0, interleaved.data(), 0, nullptr))
    throw IOError(std::string("encode_png: libpng: ") + image.message);
  bytes.resize(size);
  return bytes;
}

xt::xtensor<std::uint8_t, 3> decode_png(const std::string& bytes, const std::string& name, const PngLimits& limits) {
  const std::string where = "read_png: " + quoted(name);
  if (bytes.empty()) throw IOError(where + " is empty, not a PNG file");
  if (bytes.size() < sizeof kSignature || std::memcmp(bytes.data(), kSignature, sizeof kSignature) != 0)
    throw IOError(where + " is not a PNG file (it does not start with PNG's 8-byte signature)");

  if (const std::string problem = chunk_problem(bytes); !problem.empty()) throw IOError(where + " " + problem);

  Reader reader;
  reader.data = bytes.data();
  reader.size = bytes.size();
  reader.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &reader, on_error, on_warning);
  if (reader.png != nullptr) reader.info = png_create_info_struct(reader.png);
  ReaderGuard guard{reader};
  if (reader.png == nullptr || reader.info == nullptr) throw IOError(where + ": libpng could not start (out of memory)");
  png_set_read_fn(reader.png, &reader, on_read);
  // What libpng would take as "benign" (extra image data, a bad CRC after the image data) is
  // damage: an error. The size is attn's to limit, below, with its own message.
  png_set_benign_errors(reader.png, 0);
  png_set_crc_action(reader.png, PNG_CRC_ERROR_QUIT, PNG_CRC_ERROR_QUIT);
  png_set_user_limits(reader.png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
  // Every ancillary chunk but tRNS (gAMA, cHRM, iCCP, sRGB, text, ...) is skipped, its CRC
  // still checked: attn reads the values as stored and uses none of them.
  png_set_keep_unknown_chunks(reader.png, PNG_HANDLE_CHUNK_NEVER, nullptr, -1);

  if (!read_header(reader)) throw IOError(where + " is damaged (libpng: " + reader.message + ")");
  const std::size_t w = png_get_image_width(reader.png, reader.info);
  const std::size_t h = png_get_image_height(reader.png, reader.info);
  if (w > limits.max_width || h > limits.max_height || w * h > limits.max_pixels)
    throw IOError(where + " declares a " + std::to_string(w) + "x" + std::to_string(h) +
                  " picture, beyond the limits (" + std::to_string(limits.max_width) + "x" +
                  std::to_string(limits.max_height) + ", " + std::to_string(limits.max_pixels) + " pixels)");
  const int colour_type = png_get_color_type(reader.png, reader.info);
  if (!(colour_type & PNG_COLOR_MASK_COLOR))
    throw IOError(where + " is a grayscale picture; attn reads RGB pictures (save it as RGB)");
  const bool palette = colour_type == PNG_COLOR_TYPE_PALETTE;

  std::size_t row_bytes = 0;
  int channels = 0;
  if (!read_layout(reader, palette, &row_bytes, &channels))
    throw IOError(where + " is damaged (libpng: " + reader.message + ")");
  // After the transforms: one byte a sample, an index a pixel or RGB with or without alpha.
  const bool expected = palette ? channels == 1 : channels == 3 || channels == 4;
  if (!expected || row_bytes != w * std::size_t(channels))
    throw IOError(where + ": libpng gave rows of " + std::to_string(row_bytes) + " bytes, " + std::to_string(channels) +
                  " channels for a " + std::to_string(w) + "-wide picture (a libpng build attn does not support)");
  std::vector<std::uint8_t> samples(row_bytes * h);
  std::vector<png_bytep> rows(h);
  for (std::size_t y = 0; y < h; ++y) rows[y] = samples.data() + y * row_bytes;
  if (!read_rows(reader, rows.data()))
    throw IOError(where + " is damaged or truncated (libpng: " + reader.message + ")");

  // A palette picture's colours and their alphas (tRNS: the first num_alpha entries; the rest opaque).
  png_colorp colours = nullptr;
  int num_colours = 0;
  png_bytep alphas = nullptr;
  int num_alphas = 0;
  if (palette) {
    png_get_PLTE(reader.png, reader.info, &colours, &num_colours);
    if (png_get_valid(reader.png, reader.info, PNG_INFO_tRNS))
      png_get_tRNS(reader.png, reader.info, &alphas, &num_alphas, nullptr);
  }

  xt::xtensor<std::uint8_t, 3> rgb = xt::xtensor<std::uint8_t, 3>::from_shape({3, h, w});
  for (std::size_t y = 0; y < h; ++y)
    for (std::size_t x = 0; x < w; ++x) {
      const std::uint8_t* p = &samples[y * row_bytes + x * std::size_t(channels)];
      std::uint8_t r, g, b, alpha = 255;
      if (palette) {
        // Checked here: libpng's own check (png_set_check_for_invalid_index) compares the
        // largest index with the palette's size by ">", so an index one past the end passes.
        if (*p >= num_colours)
          throw IOError(where + " is damaged: pixel (x " + std::to_string(x) + ", y " + std::to_string(y) +
                        ") has palette index " + std::to_string(*p) + ", beyond its " + std::to_string(num_colours) +
                        "-colour palette");
        r = colours[*p].red, g = colours[*p].green, b = colours[*p].blue;
        if (*p < num_alphas) alpha = alphas[*p];
      } else {
        r = p[0], g = p[1], b = p[2];
        if (channels == 4) alpha = p[3];
      }
      if (alpha != 255)
        throw IOError(where + " has transparent pixels (the first at x " + std::to_string(x) + ", y " +
                      std::to_string(y) + ", alpha " + std::to_string(alpha) +
                      "); attn reads opaque RGB pictures (flatten it first)");
      rgb(0, y, x) = r, rgb(1, y, x) = g, rgb(2, y, x) = b;
    }
  return rgb;
}

void write_png(const std::string& path, const xt::xtensor<std::uint8_t, 3>& rgb) {
  check_shape(rgb, "write_png " + quoted(path));
  // Encoded whole before the file is touched; written whole or not at all.
  io::write_file_atomically(path, encode_png(rgb), {true, "write_png " + quoted(path)});
}

xt::xtensor<std::uint8_t, 3> read_png(const std::string& path, const PngLimits& limits) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw IOError("read_png: " + quoted(path) + " is a folder, not a PNG file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError("read_png: cannot open " + quoted(path) + ": " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw IOError("read_png: cannot read " + quoted(path));
  if (static_cast<std::size_t>(size) > limits.max_file_bytes)
    throw IOError("read_png: " + quoted(path) + " is " + std::to_string(size) + " bytes, more than the limit of " +
                  std::to_string(limits.max_file_bytes));
  in.seekg(0);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  if (!in.read(bytes.data(), size)) throw IOError("read_png: cannot read " + quoted(path));
  return decode_png(bytes, path, limits);
}

}  // namespace attn::io
