// A picture in a notebook (viz/image.hpp): image/png holds the PNG's bytes in base64, enlarged
// by whole pixels.
#include "../helpers.hpp"

#include "viz/image.hpp"

namespace {

std::string unbase64(const std::string& text) {
  const std::string digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t v = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    v = (v << 6) | static_cast<std::uint32_t>(digits.find(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((v >> bits) & 0xff);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("image: base64 as RFC 4648 writes it") {
  using attn::viz::detail::base64;
  CHECK(base64("") == "");
  CHECK(base64("f") == "Zg==");
  CHECK(base64("fo") == "Zm8=");
  CHECK(base64("foo") == "Zm9v");
  CHECK(base64("foobar") == "Zm9vYmFy");
  CHECK(base64(std::string("\xff\xfe\x00", 3)) == "//4A");
}

TEST_CASE("image: the bundle's image/png is the picture, enlarged by whole pixels") {
  xt::xtensor<std::uint8_t, 3> p = xt::xtensor<std::uint8_t, 3>::from_shape({3, 2, 3});
  for (std::size_t i = 0; i < p.size(); ++i) p.flat(i) = static_cast<std::uint8_t>(i * 13);
  const nlohmann::json bundle = attn::viz::mime_bundle_repr(attn::viz::Image{p, 4});
  CHECK(bundle["text/plain"] == "<RGB picture 3x2>");
  const auto shown = attn::io::decode_png(unbase64(bundle["image/png"].get<std::string>()), "bundle");
  REQUIRE(shown.shape() == std::array<std::size_t, 3>{3, 8, 12});
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t y = 0; y < 8; ++y)
      for (std::size_t x = 0; x < 12; ++x) CHECK(shown(c, y, x) == p(c, y / 4, x / 4));
  CHECK(attn::io::decode_png(unbase64(bundle["image/png"].get<std::string>()), "bundle").size() == 3 * 8 * 12);
  CHECK_THROWS_WITH_SUBSTR(attn::viz::mime_bundle_repr(attn::viz::Image{p, 0}), attn::ValueError,
                           "scale must be 1..32, got 0");
}
