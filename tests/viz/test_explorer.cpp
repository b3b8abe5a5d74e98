#include "../helpers.hpp"
#include "viz/display.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

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

}  // namespace

TEST_CASE("explorer_html is one self-contained view: its picture, style, script and document") {
  const std::string html = viz::explorer_html(transformer_explorer());
  CHECK(html.rfind("<div class=\"attn-explorer\" id=\"attn-explorer-", 0) == 0);
  CHECK(html.find("<div class=\"attn-fallback\"><svg") != std::string::npos);
  CHECK(html.find("<style>.attn-explorer") == std::string::npos);  // the style begins with its comment
  CHECK(html.find(".attn-explorer .attn-title") != std::string::npos);
  CHECK(html.find("function (global)") != std::string::npos);
  // Nothing is fetched: no source, link or import of another file.
  for (const char* fetch : {"src=", "href=\"http", "@import", "fetch(", "XMLHttpRequest"})
    CHECK_MESSAGE(html.find(fetch) == std::string::npos, fetch);
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
  CHECK(a.at("weights").size() == 2);                 // layers
  CHECK(a.at("weights").at(0).size() == 3);           // heads
  CHECK(a.at("weights").at(1).at(2).at(1).at(2).get<double>() == doctest::Approx(0.07));  // (1 + 1 + 2 + 1 + 2) / 100
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
  CHECK(html.find("<div class=\"attn-fallback\"><svg") != std::string::npos);  // the steps as a heatmap
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
