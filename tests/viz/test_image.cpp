// Pictures in a notebook: viz/image.hpp's image/png holds the PNG's bytes in base64, enlarged
// by whole pixels; viz/display.hpp shows an SVG as an <img> of its data URI.
#include "../helpers.hpp"

#include "viz/display.hpp"
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
  using attn::viz::base64;
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

TEST_CASE("display: an SVG picture is an <img> of its data URI, which untrusted notebooks keep, and a script that inlines it") {
  const std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"2\"><title>\u00e9</title></svg>\n";
  const nlohmann::json bundle = attn::viz::mime_bundle_repr(attn::viz::Svg{svg});
  CHECK(bundle.count("image/svg+xml") == 0);  // an untrusted notebook shows that as its text/plain
  CHECK(bundle["text/plain"] == "<svg picture>");
  const std::string html = bundle["text/html"].get<std::string>();
  const std::string head = "<img data-attn-svg=\"1\" alt=\"figure\" style=\"max-width:100%\" src=\"data:image/svg+xml;base64,";
  REQUIRE(html.rfind(head, 0) == 0);
  const std::size_t end = html.find('"', head.size());
  CHECK(unbase64(html.substr(head.size(), end - head.size())) == svg);  // the bytes, UTF-8 included
  CHECK(html.find("<script>") != std::string::npos);
  CHECK(html.find("<svg") == std::string::npos);  // nothing the sanitiser would strip to raw text
}
