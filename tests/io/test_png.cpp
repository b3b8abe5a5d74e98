// PNG pictures (io/png.hpp): bit-exact round trips, files written by another program
// (tools/reference/png_files.py) read as the pixels it wrote, every bad file refused with a
// message naming it, and an atomic write.
#include "../helpers.hpp"

#include "io/png.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace fs = std::filesystem;
using attn::IOError;
using Pixels = xt::xtensor<std::uint8_t, 3>;

namespace {

struct TempDir {
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() / ("attn_test_png_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  fs::path path;
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// tools/reference/png_files.py's pixels: 7 wide, 5 high.
Pixels python_pixels() {
  Pixels p = Pixels::from_shape({3, 5, 7});
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t y = 0; y < 5; ++y)
      for (std::size_t x = 0; x < 7; ++x) p(c, y, x) = static_cast<std::uint8_t>((x * 37 + y * 11 + c * 101) % 256);
  return p;
}

// Every byte value in every channel, distinct per channel, at an odd size.
Pixels test_pixels(std::size_t h = 13, std::size_t w = 17) {
  Pixels p = Pixels::from_shape({3, h, w});
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t y = 0; y < h; ++y)
      for (std::size_t x = 0; x < w; ++x) p(c, y, x) = static_cast<std::uint8_t>((y * w + x) * (2 * c + 1) + 50 * c);
  return p;
}

std::string chunk(const std::string& kind, const std::string& data) {
  std::string out;
  const std::uint32_t n = static_cast<std::uint32_t>(data.size());
  for (int s = 24; s >= 0; s -= 8) out += static_cast<char>((n >> s) & 0xff);
  const std::string body = kind + data;
  out += body;
  const std::uint32_t crc =
      static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())));
  for (int s = 24; s >= 0; s -= 8) out += static_cast<char>((crc >> s) & 0xff);
  return out;
}

// A PNG whose header declares width x height (8-bit RGB), its CRCs right, with no image data.
std::string declared(std::uint32_t width, std::uint32_t height) {
  std::string ihdr;
  for (std::uint32_t v : {width, height})
    for (int s = 24; s >= 0; s -= 8) ihdr += static_cast<char>((v >> s) & 0xff);
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);
  // One row of image data (libpng reads the header only up to the first IDAT).
  const std::string row(1 + 3 * 64, '\0');
  std::string idat(compressBound(static_cast<uLong>(row.size())), '\0');
  uLongf n = static_cast<uLongf>(idat.size());
  compress(reinterpret_cast<Bytef*>(idat.data()), &n, reinterpret_cast<const Bytef*>(row.data()), static_cast<uLong>(row.size()));
  idat.resize(n);
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IDAT", idat) + chunk("IEND", "");
}

const std::string reference_dir = std::string(ATTN_REFERENCE_DIR) + "/png/";

}  // namespace

TEST_CASE("png: a picture written and read back is the same, bit for bit") {
  TempDir dir;
  for (auto [h, w] : {std::pair<std::size_t, std::size_t>{13, 17}, {1, 1}, {64, 64}, {2, 300}}) {
    const Pixels p = test_pixels(h, w);
    const std::string path = dir.file("p.png");
    attn::io::write_png(path, p);
    const Pixels back = attn::io::read_png(path);
    REQUIRE(back.shape() == p.shape());
    CHECK(back == p);
    CHECK(attn::io::decode_png(attn::io::encode_png(p), "memory") == p);
  }
  // The file holds the pixels interleaved, row by row: its first pixel is (R, G, B) of (0, 0).
  const Pixels p = test_pixels();
  const std::string bytes = attn::io::encode_png(p);
  CHECK(bytes.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0);
  CHECK(static_cast<unsigned char>(bytes[16 + 3]) == 17);  // IHDR's width
  CHECK(static_cast<unsigned char>(bytes[20 + 3]) == 13);  // and height
}

TEST_CASE("png: files another program wrote read as the pixels it wrote") {
  const Pixels want = python_pixels();
  // python_gamma1.png says its values are linear light (gAMA 1.0) and python_rgb16_plain.png
  // has no colour chunk at all: both read as stored, not converted to sRGB.
  for (const char* name : {"python_rgb.png", "python_rgba_opaque.png", "python_rgb16.png", "python_rgb16_plain.png",
                           "python_gamma1.png", "python_palette.png"}) {
    INFO(std::string(name));
    const Pixels got = attn::io::read_png(reference_dir + name);
    REQUIRE(got.shape() == want.shape());
    CHECK(got == want);
  }
}

TEST_CASE("png: a grayscale or transparent picture is refused by name") {
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(reference_dir + "python_gray.png"), IOError,
                           "python_gray.png' is a grayscale picture");
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(reference_dir + "python_rgba_transparent.png"), IOError,
                           "python_rgba_transparent.png' has transparent pixels (the first at x 3, y 2, alpha 128)");
}

TEST_CASE("png: missing, empty, foreign, damaged and truncated files are refused, naming the file") {
  TempDir dir;
  const std::string missing = dir.file("missing.png");
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(missing), IOError, "cannot open '" + missing + "': No such file");
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(dir.path.string()), IOError, "is a folder");

  const std::string empty = dir.file("empty.png");
  write_bytes(empty, "");
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(empty), IOError, "'" + empty + "' is empty");

  const std::string text = dir.file("text.png");
  write_bytes(text, "hello, not a picture\n");
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(text), IOError, "'" + text + "' is not a PNG file");
  const std::string jpeg = dir.file("photo.png");
  write_bytes(jpeg, std::string("\xff\xd8\xff\xe0\x00\x10JFIF\x00", 11));
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(jpeg), IOError, "'" + jpeg + "' is not a PNG file");

  const std::string good = attn::io::encode_png(test_pixels());
  const std::string path = dir.file("bad.png");
  // One byte changed inside the image data: its chunk's CRC no longer matches.
  const std::size_t idat = good.find("IDAT");
  REQUIRE(idat != std::string::npos);
  std::string damaged = good;
  damaged[idat + 10] = static_cast<char>(damaged[idat + 10] ^ 0x55);
  write_bytes(path, damaged);
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(path), IOError, "'" + path + "' is damaged");
  // A damaged header (its CRC).
  damaged = good;
  damaged[17] = static_cast<char>(damaged[17] ^ 1);
  write_bytes(path, damaged);
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(path), IOError, "'" + path + "' is damaged");
  // Cut anywhere before the image data ends: the signature, the header, inside IDAT.
  const std::size_t idat_end = idat + 4 + 256 * 256;  // past any IDAT this small picture has
  for (std::size_t keep : {std::size_t(4), std::size_t(8), std::size_t(20), std::size_t(33), idat + 2, idat + 20,
                           (good.size() - 12) - 5, good.size() - 12, good.size() - 1}) {
    INFO("kept " << keep << " of " << good.size() << " bytes");
    (void)idat_end;
    write_bytes(path, good.substr(0, keep));
    CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(path), IOError, "'" + path + "' is ");
  }
  write_bytes(path, good.substr(0, good.size() - 12));
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(path), IOError, "'" + path + "' is truncated: it ends before its IEND chunk");
  write_bytes(path, good.substr(0, idat + 20));
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(path), IOError, "'" + path + "' is truncated: it ends inside its IDAT chunk");
}

TEST_CASE("png: a bad CRC anywhere, a palette index beyond the palette, extra image data and bytes after IEND are refused") {
  TempDir dir;
  const std::string path = dir.file("bad.png");
  const std::string good = attn::io::encode_png(test_pixels());
  const std::size_t iend = good.size() - 12;
  REQUIRE(good.compare(iend + 4, 4, "IEND") == 0);

  // IEND's CRC.
  std::string damaged = good;
  damaged.back() = static_cast<char>(damaged.back() ^ 1);
  write_bytes(path, damaged);
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(path), IOError, "'" + path + "' is damaged: its IEND chunk");

  // An ancillary chunk after the image data, its CRC wrong.
  std::string text = chunk("tEXt", std::string("Comment\0hello", 13));
  text.back() = static_cast<char>(text.back() ^ 1);
  write_bytes(path, good.substr(0, iend) + text + good.substr(iend));
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(path), IOError, "'" + path + "' is damaged: its tEXt chunk");

  // Bytes after IEND.
  write_bytes(path, good + "trailing bytes");
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(path), IOError, "'" + path + "' holds 14 bytes after its IEND chunk");

  // More image data than the picture needs: the good data and one more row, its CRC right.
  const std::size_t idat = good.find("IDAT") - 4;
  std::uint32_t length = 0;
  for (std::size_t i = 0; i < 4; ++i) length = (length << 8) | static_cast<unsigned char>(good[idat + i]);
  REQUIRE(good.compare(idat + 12 + length + 4, 4, "IEND") == 0);  // one IDAT chunk
  std::string raw(1 + 3 * 17 * 13 * 2, '\0');
  uLongf raw_size = static_cast<uLongf>(raw.size());
  REQUIRE(uncompress(reinterpret_cast<Bytef*>(raw.data()), &raw_size,
                     reinterpret_cast<const Bytef*>(good.data() + idat + 8), length) == Z_OK);
  REQUIRE(raw_size == 13 * (1 + 3 * 17));
  raw.resize(raw_size);
  raw += std::string(1 + 3 * 17, '\0');
  std::string more(compressBound(static_cast<uLong>(raw.size())), '\0');
  uLongf more_size = static_cast<uLongf>(more.size());
  compress(reinterpret_cast<Bytef*>(more.data()), &more_size, reinterpret_cast<const Bytef*>(raw.data()),
           static_cast<uLong>(raw.size()));
  more.resize(more_size);
  write_bytes(path, good.substr(0, idat) + chunk("IDAT", more) + good.substr(iend));
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(path), IOError, "'" + path + "' is damaged");

  // python_palette.png's pixels use its 35 colours, indices 0 to 34; with the palette cut to
  // 34 colours the last pixel's index 34 is one past its end, and with 2 colours most are.
  const std::string palette_file = read_bytes(reference_dir + "python_palette.png");
  const std::size_t plte = palette_file.find("PLTE") - 4;
  REQUIRE(palette_file.compare(plte, 4, std::string("\0\0\0\x69", 4)) == 0);  // 35 colours
  for (std::size_t colours : {std::size_t(34), std::size_t(2)}) {
    INFO(colours << " colours");
    const std::string cut = palette_file.substr(0, plte) + chunk("PLTE", palette_file.substr(plte + 8, 3 * colours)) +
                            palette_file.substr(plte + 12 + 3 * 35);
    write_bytes(path, cut);
    CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(path), IOError,
                             "'" + path + "' is damaged: pixel (x " + (colours == 34 ? "6, y 4" : "2, y 0") +
                                 ") has palette index " + (colours == 34 ? "34" : "2") + ", beyond its " +
                                 std::to_string(colours) + "-colour palette");
  }
}

TEST_CASE("png: a huge declared size is refused before anything is allocated") {
  TempDir dir;
  const std::string path = dir.file("huge.png");
  write_bytes(path, declared(100000, 100000));
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(path), IOError, "'" + path + "' declares a 100000x100000 picture");
  write_bytes(path, declared(8000, 8000));  // within each side's limit, not the pixels'
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(path), IOError, "declares a 8000x8000 picture, beyond the limits");
  attn::io::PngLimits small;
  small.max_width = 16;
  small.max_width = 7;
  CHECK(attn::io::read_png(reference_dir + "python_rgb.png", small) == python_pixels());
  small.max_width = 6;
  CHECK_THROWS_WITH_SUBSTR(attn::io::read_png(reference_dir + "python_rgb.png", small), IOError, "declares a 7x5");
}

TEST_CASE("png: a picture that is not [3, H, W] is refused, and the file kept") {
  TempDir dir;
  const std::string path = dir.file("keep.png");
  write_bytes(path, "old bytes");
  CHECK_THROWS_WITH_SUBSTR(attn::io::write_png(path, Pixels::from_shape({4, 2, 2})), attn::ValueError,
                           "expected an RGB picture [3, H, W] with H, W >= 1, got [4, 2, 2]");
  CHECK_THROWS_WITH_SUBSTR(attn::io::write_png(path, Pixels::from_shape({3, 0, 2})), attn::ValueError, "got [3, 0, 2]");
  CHECK(read_bytes(path) == "old bytes");
  CHECK_THROWS_WITH_SUBSTR(attn::io::write_png(dir.file("no/such/folder.png"), test_pixels()), IOError,
                           "write_png '" + dir.file("no/such/folder.png") + "': cannot write");
}

TEST_CASE("png: a write that fails midway leaves the old file whole and no temporary file") {
  TempDir dir;
  const std::string path = dir.file("scene.png");
  attn::io::write_png(path, test_pixels(4, 4));
  const std::string old = read_bytes(path);
  Pixels big = Pixels::from_shape({3, 200, 200});  // noise: about 120 KB encoded, far beyond the limit below
  std::uint32_t state = 1;
  for (auto& v : big) v = static_cast<std::uint8_t>((state = state * 1664525u + 1013904223u) >> 24);
  REQUIRE(attn::io::encode_png(big).size() > 4096);
  // A child process may write files of at most 4096 bytes: its write fails with EFBIG after the
  // first 4096 bytes of the temporary file are on disk.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // write() then returns EFBIG instead of killing the process
    rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      attn::io::write_png(path, big);
    } catch (const IOError& e) {
      const std::string what = e.what();
      ::_exit(what.find("write_png '" + path + "': writing failed") != std::string::npos ? 0 : 2);
    }
    ::_exit(1);  // the write succeeded: the limit did not apply
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(read_bytes(path) == old);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path)) ++files;
  CHECK(files == 1);  // no temporary left behind
  // And a write that succeeds replaces it whole.
  attn::io::write_png(path, big);
  CHECK(attn::io::read_png(path) == big);
}
