// RGB pictures as PNG files, through libpng (Debian's libpng-dev):
//
//   xt::xtensor<std::uint8_t, 3> rgb = attn::io::read_png("scene.png");  // [3, H, W]
//   attn::io::write_png("copy.png", rgb);
//
// Pixels are 8-bit and channel-first, [3, H, W] (red, green, blue planes), the layout
// conv2d's NCHW input takes; the file holds them interleaved, row by row, as PNG does.
//
// Reading checks everything before it allocates: a missing or empty file, a file that is
// not a PNG, a damaged one (a chunk whose CRC is wrong, wherever it is; image data that fails
// its Adler-32 or is too short or too long; a palette index beyond the palette), a truncated
// one, bytes after its IEND chunk, a declared size beyond the limits, a grayscale picture or
// one with transparent pixels each throw an IOError naming the file and what is wrong.
// Values come back as the file stores them: no gamma or colour conversion, whatever gAMA,
// sRGB, cHRM or iCCP chunk the file holds (attn reads none of them). Palette pictures are read
// as their colours, 16-bit ones scaled to 8 bits (a value v * 257 reads as v); an alpha
// channel whose pixels are all opaque is dropped. Writing is atomic: the file is written whole
// next to the target, forced to disk, then renamed over it, so a failed write leaves the old
// file as it was.
#pragma once

#include <xtensor/xtensor.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace attn::io {

// What read_png accepts: a declared size beyond these is refused before anything is
// allocated (a 1 KB file can declare a 2^31 x 2^31 picture).
struct PngLimits {
  std::size_t max_width = 8192;
  std::size_t max_height = 8192;
  std::size_t max_pixels = std::size_t(1) << 24;    // 16 Mi pixels: 48 MB of RGB
  std::size_t max_file_bytes = std::size_t(1) << 28;  // 256 MB
};

// The PNG file's bytes of an RGB picture [3, H, W] (8-bit RGB, no alpha). ValueError for
// another shape or an empty picture.
std::string encode_png(const xt::xtensor<std::uint8_t, 3>& rgb);

// The picture [3, H, W] in `bytes`, a PNG file's content; `name` is how errors name it.
xt::xtensor<std::uint8_t, 3> decode_png(const std::string& bytes, const std::string& name,
                                         const PngLimits& limits = {});

// Writes `rgb` [3, H, W] to `path` atomically; IOError naming the file and the cause.
void write_png(const std::string& path, const xt::xtensor<std::uint8_t, 3>& rgb);

// Reads the PNG at `path` as [3, H, W]; IOError naming the file and what is wrong.
xt::xtensor<std::uint8_t, 3> read_png(const std::string& path, const PngLimits& limits = {});

}  // namespace attn::io
