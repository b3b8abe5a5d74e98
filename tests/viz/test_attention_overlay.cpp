// The attention overlays of Show, Attend and Tell (viz/attention_overlay.hpp): bilinear
// upsampling equal to PyTorch's F.interpolate (align_corners=False), pixels dimmed by the
// weight, and a strip of PNG overlays inside an SVG, each the overlay's exact pixels.
#include "../helpers.hpp"

#include "io/png.hpp"
#include "viz/attention_overlay.hpp"

#include <xtensor/xview.hpp>

#include <regex>

using Pixels = xt::xtensor<std::uint8_t, 3>;

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

// The PNG pictures of an SVG's <image> elements, in order.
std::vector<Pixels> embedded_pictures(const std::string& svg) {
  std::vector<Pixels> out;
  const std::regex href("href=\"data:image/png;base64,([A-Za-z0-9+/=]*)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), href); it != std::sregex_iterator(); ++it)
    out.push_back(attn::io::decode_png(unbase64((*it)[1].str()), "embedded"));
  return out;
}

Pixels flat_picture(std::size_t h, std::size_t w, std::uint8_t value) {
  Pixels p = Pixels::from_shape({3, h, w});
  p.fill(value);
  return p;
}

}  // namespace

TEST_CASE("overlay: bilinear upsampling gives PyTorch's values") {
  // torch.nn.functional.interpolate(a[None, None], size=(4, 4), mode="bilinear", align_corners=False)
  const xt::xarray<double> a = {{0.0, 1.0}, {0.0, 0.0}};
  const xt::xarray<double> expected = {
      {0, 0.25, 0.75, 1}, {0, 0.1875, 0.5625, 0.75}, {0, 0.0625, 0.1875, 0.25}, {0, 0, 0, 0}};
  const auto up = attn::viz::upsample_bilinear(a, 4, 4);
  for (std::size_t y = 0; y < 4; ++y)
    for (std::size_t x = 0; x < 4; ++x) CHECK(up(y, x) == expected(y, x));

  // 3 x 3 to 7 x 5 (another scale on each axis), float64, the values PyTorch 1.13 printed.
  const xt::xarray<double> b = {{0.1, 0.2, 0.3}, {0.0, 0.5, 0.1}, {0.7, 0.05, 0.15}};
  const auto up2 = attn::viz::upsample_bilinear(b, 7, 5);
  CHECK(up2(0, 0) == doctest::Approx(0.1).epsilon(1e-14));
  CHECK(up2(1, 1) == doctest::Approx(0.148571428571428577).epsilon(1e-14));
  CHECK(up2(2, 2) == doctest::Approx(0.371428571428571441).epsilon(1e-14));
  CHECK(up2(3, 2) == doctest::Approx(0.5).epsilon(1e-14));
  CHECK(up2(4, 3) == doctest::Approx(0.195714285714285757).epsilon(1e-14));
  CHECK(up2(5, 1) == doctest::Approx(0.405714285714285694).epsilon(1e-14));
  CHECK(up2(6, 4) == doctest::Approx(0.15).epsilon(1e-14));

  CHECK_THROWS_WITH_SUBSTR(attn::viz::upsample_bilinear(xt::xarray<double>({1.0, 2.0}), 4, 4), attn::ShapeError,
                           "expected cells [rows, cols] (non-empty) and a size above 0, got cells [2] and 4x4");
}

TEST_CASE("overlay: each pixel keeps its colour where attended and is dimmed to the floor where not") {
  const Pixels image = flat_picture(4, 4, 200);
  const xt::xarray<double> a = {{0.0, 1.0}, {0.0, 0.0}};  // upsampled as in the test above
  attn::viz::OverlayOptions o;
  o.scale = 1;
  o.floor = 0.2;
  const Pixels out = attn::viz::attention_overlay(image, a, o);
  REQUIRE(out.shape() == std::array<std::size_t, 3>{3, 4, 4});
  CHECK(out(0, 0, 3) == 200);  // upsampled 1: full brightness
  CHECK(out(1, 0, 0) == 40);   // upsampled 0: 200 * 0.2
  CHECK(out(2, 3, 3) == 40);
  CHECK(out(0, 0, 1) == 80);   // 0.25: 200 * (0.2 + 0.8 * 0.25)
  CHECK(out(0, 0, 2) == 160);  // 0.75
  CHECK(out(1, 1, 1) == 70);   // 0.1875
  CHECK(out(2, 1, 2) == 130);  // 0.5625

  // Scaled to the map's highest weight: half the weight looks the same; on the absolute scale it is dimmer.
  const xt::xarray<double> half = 0.5 * a;
  CHECK(attn::viz::attention_overlay(image, half, o) == out);
  o.per_word_max = false;
  const Pixels absolute = attn::viz::attention_overlay(image, half, o);
  CHECK(absolute(0, 0, 3) == 120);  // 200 * (0.2 + 0.8 * 0.5)
  CHECK(absolute(0, 0, 0) == 40);

  // Colours are kept, each channel scaled alike.
  Pixels red = flat_picture(4, 4, 0);
  for (std::size_t y = 0; y < 4; ++y)
    for (std::size_t x = 0; x < 4; ++x) {
      red(0, y, x) = 220;
      red(1, y, x) = 40;
    }
  o.per_word_max = true;
  const Pixels r = attn::viz::attention_overlay(red, a, o);
  CHECK(r(0, 0, 3) == 220);
  CHECK(r(1, 0, 3) == 40);
  CHECK(r(0, 0, 2) == 176);  // 220 * 0.8
  CHECK(r(1, 0, 2) == 32);   // 40 * 0.8

  // Enlarged: the picture by whole pixels, the map upsampled to the enlarged size.
  o.scale = 3;
  const Pixels big = attn::viz::attention_overlay(image, a, o);
  REQUIRE(big.shape() == std::array<std::size_t, 3>{3, 12, 12});
  const auto map = attn::viz::upsample_bilinear(a, 12, 12);
  for (std::size_t y = 0; y < 12; ++y)
    for (std::size_t x = 0; x < 12; ++x) CHECK(big(0, y, x) == std::lround(200 * (0.2 + 0.8 * map(y, x))));

  CHECK_THROWS_WITH_SUBSTR(attn::viz::attention_overlay(flat_picture(4, 4, 1), xt::xarray<double>({1.0}), o),
                           attn::ShapeError, "expected one word's weights [rows, cols], got [1]");
  CHECK_THROWS_WITH_SUBSTR(attn::viz::attention_overlay(Pixels::from_shape({1, 4, 4}), a, o), attn::ShapeError,
                           "expected a picture [3, H, W], got [1, 4, 4]");
  o.floor = 1.5;
  CHECK_THROWS_WITH_SUBSTR(attn::viz::attention_overlay(image, a, o), attn::ValueError, "floor must be 0..1, got 1.5");
  o.floor = 0.2;
  o.scale = 0;
  CHECK_THROWS_WITH_SUBSTR(attn::viz::attention_overlay(image, a, o), attn::ValueError, "scale must be 1..16, got 0");
}

TEST_CASE("overlay: a strip is the picture then one overlay per word, each the overlay's pixels, its word beneath; strips stack") {
  Pixels image = Pixels::from_shape({3, 8, 8});
  for (std::size_t i = 0; i < image.size(); ++i) image.flat(i) = static_cast<std::uint8_t>(i * 7);
  xt::xarray<double> soft = xt::zeros<double>({3, 2, 2});
  soft(0, 0, 0) = 1;
  soft(1, 1, 1) = 0.7;
  soft(1, 0, 1) = 0.3;
  soft(2, 1, 0) = 1;
  xt::xarray<double> hard = xt::zeros<double>({2, 2, 2});
  hard(0, 0, 1) = 1;
  hard(1, 1, 1) = 1;
  attn::viz::StripOptions o;
  o.overlay.scale = 2;
  o.title = "where the captioner looked";
  const attn::viz::AttentionStrip s{"soft", {"a", "red", "<cross>"}, soft, {"", "in mask 0.9", ""}};
  const attn::viz::AttentionStrip h{"hard", {"a", "red"}, hard, {}};
  const std::string svg = attn::viz::attention_strips_svg(image, {s, h}, o);

  const auto pictures = embedded_pictures(svg);
  REQUIRE(pictures.size() == 1 + 3 + 1 + 2);
  Pixels enlarged = Pixels::from_shape({3, 16, 16});
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t y = 0; y < 16; ++y)
      for (std::size_t x = 0; x < 16; ++x) enlarged(c, y, x) = image(c, y / 2, x / 2);
  CHECK(pictures[0] == enlarged);
  for (std::size_t t = 0; t < 3; ++t)
    CHECK(pictures[1 + t] == attn::viz::attention_overlay(image, xt::xarray<double>(xt::view(soft, t)), o.overlay));
  CHECK(pictures[4] == enlarged);
  for (std::size_t t = 0; t < 2; ++t)
    CHECK(pictures[5 + t] == attn::viz::attention_overlay(image, xt::xarray<double>(xt::view(hard, t)), o.overlay));

  // Labels and words, in order, escaped; the soft strip above the hard one.
  const std::size_t soft_at = svg.find(">soft</text>"), hard_at = svg.find(">hard</text>");
  REQUIRE(soft_at != std::string::npos);
  REQUIRE(hard_at != std::string::npos);
  CHECK(soft_at < hard_at);
  CHECK(svg.find(">&lt;cross&gt;</text>") != std::string::npos);
  CHECK(svg.find(">in mask 0.9</text>") != std::string::npos);
  CHECK(svg.find(">where the captioner looked</text>") != std::string::npos);
  CHECK(svg.find("<title>red: highest cell weight 0.7</title>") != std::string::npos);
  CHECK(svg.find("<script") == std::string::npos);

  // A long caption wraps: 12 words at 4 pictures a line are 4 lines, the picture heights apart.
  xt::xarray<double> many = xt::ones<double>({12, 2, 2});
  o.per_line = 4;
  o.title.clear();
  const std::string wrapped = attn::viz::attention_strip_svg(image, std::vector<std::string>(12, "w"), many, o);
  CHECK(embedded_pictures(wrapped).size() == 13);
  const std::regex ys("<image x=\"12\" y=\"([0-9]+)\"");
  std::vector<int> line_tops;
  for (auto it = std::sregex_iterator(wrapped.begin(), wrapped.end(), ys); it != std::sregex_iterator(); ++it)
    line_tops.push_back(std::stoi((*it)[1].str()));
  REQUIRE(line_tops.size() == 4);
  for (std::size_t i = 1; i < 4; ++i) CHECK(line_tops[i] - line_tops[i - 1] == 16 + 20 + 8);

  CHECK_THROWS_WITH_SUBSTR(attn::viz::attention_strips_svg(image, {attn::viz::AttentionStrip{"hard", {"a"}, hard, {}}}),
                           attn::ShapeError, "strip 0 ('hard'): expected weights [T, rows, cols] with T = 1 (its words), got [2, 2, 2]");
  CHECK_THROWS_WITH_SUBSTR(
      attn::viz::attention_strips_svg(image, {h, attn::viz::AttentionStrip{"soft", {"a", "red", "x"}, soft, {"1"}}}),
      attn::ValueError, "strip 1 ('soft'): expected a note per word or none, got 1 notes for 3 words");
  CHECK_THROWS_WITH_SUBSTR(attn::viz::attention_strips_svg(image, {}), attn::ValueError, "expected at least one strip");
}
