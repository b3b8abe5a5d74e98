#include "../helpers.hpp"
#include "viz/display.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <random>

#include <xtensor/xview.hpp>

namespace viz = attn::viz;
using nlohmann::json;

namespace {

// A Transformer-like explorer: 2 layers, 3 heads, tokens that need escaping.
viz::Explorer transformer_explorer() {
  viz::Explorer e;
  e.title = "the </script> cat -> le chat";
  xt::xarray<double> w = xt::zeros<double>({2, 3, 2, 3});
  for (std::size_t l = 0; l < 2; ++l)
    for (std::size_t h = 0; h < 3; ++h)
      for (std::size_t r = 0; r < 2; ++r)
        for (std::size_t c = 0; c < 3; ++c) w(l, h, r, c) = double(1 + l + h + r + c) / 100.0;
  e.attentions.push_back({"cross", {"le", "chat"}, {"the", "</script>", "a&b"}, w});
  return e;
}

// The document the script is called with: between the root's id and the closing ");</script>".
json document_of(const std::string& html) {
  const std::string call = "attnExplorer(document.getElementById(\"";
  const std::size_t at = html.rfind(call);
  REQUIRE(at != std::string::npos);
  const std::size_t start = html.find("), ", at) + 3, end = html.rfind(");</script>");
  REQUIRE(end > start);
  return json::parse(html.substr(start, end - start));
}

// An attention's packed weights (viz/explorer.cpp: 3 base64 digits each) as numbers, NaN for null.
std::vector<double> unpacked(const json& attention) {
  const std::string digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const std::string text = attention.at("weights").get<std::string>();
  REQUIRE(text.size() % 3 == 0);
  std::vector<double> out;
  for (std::size_t i = 0; i < text.size(); i += 3) {
    const unsigned n = unsigned(digits.find(text[i]) << 12 | digits.find(text[i + 1]) << 6 | digits.find(text[i + 2]));
    const unsigned k = n >> 14, m = n & 16383;
    out.push_back(n == (1u << 18) - 1 ? std::nan("") : m / std::pow(10.0, 3 + k));
  }
  return out;
}

// The SVG of the static picture: the base64 of its <img>'s data: URI, decoded.
std::string fallback_svg(const std::string& html) {
  const std::string head = "<div class=\"attn-fallback\"><img class=\"attn-fallback-img\" alt=\"";
  REQUIRE(html.find(head) != std::string::npos);
  const std::string uri = "src=\"data:image/svg+xml;base64,";
  const std::size_t start = html.find(uri) + uri.size(), end = html.find('"', start);
  REQUIRE(start > uri.size());
  const std::string digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned bits = 0, n = 0;
  for (std::size_t i = start; i < end && html[i] != '='; ++i) {
    n = (n << 6) | unsigned(digits.find(html[i]));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += char((n >> bits) & 0xFF);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("explorer_html is one self-contained view: its picture, style, script and document") {
  const std::string html = viz::explorer_html(transformer_explorer());
  CHECK(html.rfind("<div class=\"attn-explorer\" id=\"attn-explorer-", 0) == 0);
  // The static picture is an image of a data: URI (Jupyter's sanitiser strips an inline <svg> to text).
  const std::string picture = fallback_svg(html);
  CHECK(picture.rfind("<svg", 0) == 0);
  CHECK(picture.find("head 2") != std::string::npos);             // every head of the last layer
  CHECK(picture.find("<title>le / the:") == std::string::npos);   // no cell tooltips: an image has none
  CHECK(picture.find("/>") != std::string::npos);
  CHECK(html.find("alt=\"Attention explorer (the &lt;/script&gt; cat -&gt; le chat), static picture: every head of the "
                  "cross attention's last layer.") != std::string::npos);
  CHECK(html.find("<svg") == std::string::npos);
  CHECK(html.find("<style>.attn-explorer") == std::string::npos);  // the style begins with its comment
  CHECK(html.find(".attn-explorer .attn-title") != std::string::npos);
  CHECK(html.find("function (global)") != std::string::npos);
  // Nothing is fetched: no source, link or import of another file.
  for (const char* fetch : {"href=\"http", "@import", "fetch(", "XMLHttpRequest"})
    CHECK_MESSAGE(html.find(fetch) == std::string::npos, fetch);
  for (std::size_t at = html.find("src="); at != std::string::npos; at = html.find("src=", at + 1))
    CHECK(html.compare(at, 10, "src=\"data:") == 0);
  // One script element and one end: the token "</script>" cannot close it early.
  std::size_t ends = 0;
  for (std::size_t at = html.find("</script"); at != std::string::npos; at = html.find("</script", at + 1)) ++ends;
  CHECK(ends == 1);
  const json doc = document_of(html);
  CHECK(html.find("id=\"" + doc.at("id").get<std::string>() + "\"") != std::string::npos);  // the call finds its root
  CHECK(doc.at("title") == "the </script> cat -> le chat");
  const json& a = doc.at("attentions").at(0);
  CHECK(a.at("name") == "cross");
  CHECK(a.at("cols") == json({"the", "</script>", "a&b"}));
  CHECK(a.at("shape") == json({2, 3, 2, 3}));         // layers, heads, rows, cols
  const std::vector<double> w = unpacked(a);
  REQUIRE(w.size() == 36);
  CHECK(w[((1 * 3 + 2) * 2 + 1) * 3 + 2] == 0.07);   // layer 1, head 2, row 1, col 2: (1 + 1 + 2 + 1 + 2) / 100
  CHECK_FALSE(a.contains("rows_read"));
  CHECK(doc.at("steps").empty());
}

TEST_CASE("every explorer has an id of its own, so views on one page stay apart") {
  const json first = document_of(viz::explorer_html(transformer_explorer()));
  const json second = document_of(viz::explorer_html(transformer_explorer()));
  CHECK(first.at("id") != second.at("id"));
}

TEST_CASE("explorer steps carry their row, beam, gate and path; non-finite weights become null") {
  viz::Explorer e;
  e.source = {"il", "dort"};
  viz::ExplorerStep one{"he", {0.9, 0.1}, {{"he", -0.1}, {"it", -2.5}}, 0.25, 0.4};
  viz::ExplorerStep two{"sleeps", {std::numeric_limits<double>::quiet_NaN(), 1.0}, {}, std::nullopt, std::nullopt};
  e.steps = {one, two};
  const std::string html = viz::explorer_html(e);
  const json doc = document_of(html);
  CHECK(doc.at("attentions").empty());
  CHECK(doc.at("source") == json({"il", "dort"}));
  const json& s0 = doc.at("steps").at(0);
  CHECK(s0.at("token") == "he");
  CHECK(s0.at("beam").at(1).at("text") == "it");
  CHECK(s0.at("gate").get<double>() == 0.25);
  CHECK(s0.at("path").get<double>() == 0.4);
  const json& s1 = doc.at("steps").at(1);
  CHECK(s1.at("row").at(0).is_null());
  CHECK_FALSE(s1.contains("beam"));
  CHECK_FALSE(s1.contains("gate"));
  CHECK(fallback_svg(html).find("dort") != std::string::npos);  // the steps as a heatmap
  CHECK(html.find("static picture: the decoding's attention rows") != std::string::npos);
}

TEST_CASE("explorer_html refuses weights and rows that do not fit their labels, by name") {
  viz::Explorer e = transformer_explorer();
  e.attentions[0].weights = xt::zeros<double>({3, 2, 3});
  CHECK_THROWS_WITH_SUBSTR(viz::explorer_html(e), attn::ShapeError, "attention 'cross': expected weights [layers, heads, 2, 3]");
  e.attentions[0].weights = xt::zeros<double>({1, 1, 3, 3});
  CHECK_THROWS_WITH_SUBSTR(viz::explorer_html(e), attn::ShapeError, "got [1, 1, 3, 3]");
  viz::Explorer steps;
  steps.source = {"a", "b"};
  steps.steps.push_back({"x", {1.0}, {}, std::nullopt, std::nullopt});
  CHECK_THROWS_WITH_SUBSTR(viz::explorer_html(steps), attn::ShapeError, "step 0 ('x'): expected a row of 2 weights");
  steps.source.clear();
  steps.steps[0].row.clear();
  CHECK_THROWS_WITH_SUBSTR(viz::explorer_html(steps), attn::ShapeError, "Explorer::source is empty");
  CHECK_THROWS_WITH_SUBSTR(viz::explorer_html(viz::Explorer{}), attn::ValueError, "nothing to show");
}

TEST_CASE("an explorer shows in the notebook as HTML") {
  const json bundle = attn::viz::mime_bundle_repr(transformer_explorer());
  CHECK(bundle.at("text/html").get<std::string>().find("attnExplorer(") != std::string::npos);
  CHECK(bundle.at("text/plain") == "<attention explorer: the </script> cat -> le chat>");
}

namespace {

// The 6-layer x 8-head page on 36 tokens of issue 67: three attentions of softmax rows from a
// fixed generator, and 36 decoding steps with a beam of 4.
viz::Explorer big_explorer() {
  const std::size_t L = 6, H = 8, T = 36;
  std::mt19937_64 gen(67);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::string> tokens;
  for (std::size_t t = 0; t < T; ++t) tokens.push_back("w" + std::to_string(t % 20));
  viz::Explorer e;
  e.title = "6 x 8 heads on 36 tokens";
  for (const char* name : {"encoder self", "decoder self", "cross"}) {
    xt::xarray<double> w = xt::zeros<double>({L, H, T, T});
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t r = 0; r < T; ++r) {
          double sum = 0.0;
          for (std::size_t c = 0; c < T; ++c) sum += w(l, h, r, c) = std::exp(4.0 * u(gen));
          for (std::size_t c = 0; c < T; ++c) w(l, h, r, c) /= sum;
        }
    e.attentions.push_back({name, tokens, tokens, w});
  }
  e.source = tokens;
  for (std::size_t t = 0; t < T; ++t) {
    viz::ExplorerStep s;
    s.token = tokens[t];
    for (std::size_t c = 0; c < T; ++c) s.row.push_back(xt::mean(xt::view(e.attentions[2].weights, 5, xt::all(), t, c))());
    for (int b = 0; b < 4; ++b) s.beam.emplace_back("w1 w2 w3 w" + std::to_string(b), -1.0 / 3.0 * (b + 1));
    e.steps.push_back(s);
  }
  return e;
}

}  // namespace

TEST_CASE("the 6-layer x 8-head page on 36 tokens stays small") {
  const std::string html = viz::explorer_html(big_explorer());
  MESSAGE("explorer_html of [6, 8, 36, 36] x 3 attentions with 36 beam steps: " << html.size() << " bytes");
  CHECK(html.size() < 2000000);  // 5.0 MB with 17-digit JSON numbers and an inline picture with tooltips
}

TEST_CASE("weights are written at 4 significant digits, packed; steps' numbers rounded too") {
  viz::Explorer e;
  xt::xarray<double> w = {{{{0.123456789, 1.0 / 3.0, 0.99996, 2.5e-7},
                            {0.0, std::numeric_limits<double>::quiet_NaN(), 1.0, 0.000123456}}}};  // [1, 1, 2, 4]
  e.attentions.push_back({"attention", {"a", "b"}, {"w", "x", "y", "z"}, w, true});
  e.source = {"w", "x"};
  viz::ExplorerStep step{"a", {0.123456789, 0.876543}, {{"a", -0.123456789}}, 0.33333333, 1.23456789};
  step.continued = 0;
  step.probability = 0.987654321;
  step.alternatives = {{"b", 0.0123456}};
  e.steps = {step};
  const json doc = document_of(viz::explorer_html(e));
  const json& a = doc.at("attentions").at(0);
  CHECK(a.at("rows_read") == true);
  const std::vector<double> got = unpacked(a);
  const std::vector<double> want = {0.1235, 0.3333, 1.0, 2.5e-7, 0.0, 0.0, 1.0, 0.0001235};
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    if (i == 5) CHECK(std::isnan(got[i]));
    else CHECK_MESSAGE(got[i] == doctest::Approx(want[i]).epsilon(1e-12), i);
  const json& s = doc.at("steps").at(0);
  CHECK(s.at("row").at(0).get<double>() == 0.1235);  // the shortest text of the rounded double
  CHECK(s.at("row").dump() == "[0.1235,0.8765]");
  CHECK(s.at("beam").at(0).at("score").get<double>() == -0.1235);
  CHECK(s.at("gate").get<double>() == 0.3333);
  CHECK(s.at("path").get<double>() == 1.235);
  CHECK(s.at("continued") == 0);
  CHECK(s.at("probability").get<double>() == 0.9877);
  CHECK(s.at("alternatives") == json::parse(R"([{"token": "b", "probability": 0.01235}])"));
  // Weights a code cannot hold (negative, 10 and more) are written as numbers, rounded too.
  e.attentions[0].weights(0, 0, 0, 0) = -0.123456789;
  const json plain = document_of(viz::explorer_html(e)).at("attentions").at(0);
  CHECK_FALSE(plain.contains("shape"));
  CHECK(plain.at("weights").at(0).at(0).at(0).dump() == "[-0.1235,0.3333,1.0,2.5e-07]");
  // A continued entry past the beam is refused.
  e.steps[0].continued = 1;
  CHECK_THROWS_WITH_SUBSTR(viz::explorer_html(e), attn::ShapeError, "continued beam entry 1 is past its 1 entries");
}
