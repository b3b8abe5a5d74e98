#include "../helpers.hpp"
#include "viz/display.hpp"

#include <nlohmann/json.hpp>
#include <xtensor/xview.hpp>

#include <cmath>
#include <memory>

namespace nn = attn::nn;
namespace viz = attn::viz;
using attn::Tensor;
using nlohmann::json;

namespace {

double max_diff(const xt::xarray<double>& a, const xt::xarray<double>& b) {
  REQUIRE(a.shape() == b.shape());
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a.flat(i) - b.flat(i)));
  return m;
}

// The document the script is called with: between the root's id and the closing ");</script>".
json document_of(const std::string& html) {
  const std::string call = "attnScoreView(document.getElementById(\"";
  const std::size_t at = html.rfind(call);
  REQUIRE(at != std::string::npos);
  const std::size_t start = html.find("), ", at) + 3, end = html.rfind(");</script>");
  REQUIRE(end > start);
  return json::parse(html.substr(start, end - start));
}

xt::xarray<double> matrix_of(const json& rows) {
  xt::xarray<double> a = xt::zeros<double>({rows.size(), rows.at(0).size()});
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t c = 0; c < rows.at(r).size(); ++c) a(r, c) = rows.at(r).at(c).get<double>();
  return a;
}

std::string base64_decode(const std::string& text) {
  const std::string digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned bits = 0, n = 0;
  for (char c : text) {
    if (c == '=') break;
    bits = (bits << 6) | unsigned(digits.find(c));
    n += 6;
    if (n >= 8) {
      n -= 8;
      out += char((bits >> n) & 0xFF);
    }
  }
  return out;
}

// Queries 4 x 3, keys 5 x 3, values 5 x 2; query 1 may not see keys 3 and 4, query 3 sees none.
struct DotCase {
  Tensor q = test::randn({4, 3}, 1, false), k = test::randn({5, 3}, 2, false), v = test::randn({5, 2}, 3, false);
  attn::Mask mask = xt::zeros<bool>({std::size_t(4), std::size_t(5)});
  DotCase() {
    mask(1, 3) = mask(1, 4) = true;
    for (std::size_t j = 0; j < 5; ++j) mask(3, j) = true;
  }
};

}  // namespace

TEST_CASE("a dot-product score view holds the weights scaled_dot_product_attention computes") {
  DotCase c;
  const viz::ScoreView view = viz::dot_product_scores(c.q, c.k, c.mask, c.v);
  const nn::AttentionOutput lib = nn::scaled_dot_product_attention(c.q, c.k, c.v, c.mask);
  CHECK(view.scale == doctest::Approx(1.0 / std::sqrt(3.0)));
  CHECK(max_diff(view.weights(), lib.weights.to_array()) < 1e-12);
  CHECK(max_diff(view.scaled_scores(), (attn::matmul(c.q, attn::transpose(c.k, 0, 1)) / std::sqrt(3.0)).to_array()) < 1e-12);
  CHECK(view.weights()(1, 3) == 0.0);  // blocked keys weigh nothing
  CHECK(view.weights()(3, 0) == 0.0);  // a query with no key: a row of 0, not NaN
  // The numbers the page shows are the same numbers.
  const json doc = document_of(viz::score_view_html(view));
  CHECK(doc.at("kind") == "dot");
  CHECK(max_diff(matrix_of(doc.at("weights")), lib.weights.to_array()) < 1e-12);
  CHECK(max_diff(matrix_of(doc.at("output")), lib.context.to_array()) < 1e-12);
  CHECK(max_diff(matrix_of(doc.at("q")), c.q.to_array()) == 0.0);
  CHECK(doc.at("mask").at(1).at(3) == true);
  CHECK(doc.at("mask").at(0).at(3) == false);
  CHECK(doc.at("queries") == json({"0", "1", "2", "3"}));  // positions when no labels are given
  CHECK(doc.at("scale").get<double>() == view.scale);
}

TEST_CASE("a NaN score gives NaN weights, as the layer's softmax, not the 0 of a row with every key blocked") {
  DotCase c;
  viz::ScoreView view = viz::dot_product_scores(c.q, c.k, c.mask);
  view.q(0, 1) = std::nan("");  // every score of query 0 is NaN
  const xt::xarray<double> lib = nn::scaled_dot_product_attention(Tensor(view.q), c.k, c.k, c.mask).weights.to_array();
  const xt::xarray<double> a = view.weights();
  for (std::size_t j = 0; j < 5; ++j) {
    CAPTURE(j);
    CHECK(std::isnan(lib(0, j)));
    CHECK(std::isnan(a(0, j)));
  }
  CHECK(a(3, 0) == 0.0);  // the row with every key blocked is still 0
  // The page shows null ("–") for them, not a weight.
  CHECK(document_of(viz::score_view_html(view)).at("weights").at(0).at(0).is_null());
}

TEST_CASE("a score view of one head of MultiheadAttention computes its q and k from the layer's weights") {
  for (std::size_t kv_heads : {4, 2}) {  // every head its own keys, then grouped heads sharing them
    CAPTURE(kv_heads);
    attn::manual_seed(4);
    nn::MultiheadAttention mha(8, 4, nn::GroupedQuery{kv_heads});
    mha.to(attn::Dtype::Float64);
    nn::init::uniform_(mha.in_proj_bias, -0.5, 0.5);  // biases are 0 at first: make them count
    const Tensor x = test::randn({2, 5, 8}, 7, false), memory = test::randn({2, 6, 8}, 8, false);
    const attn::Mask causal = nn::causal_mask(5);
    const auto self = mha(x, x, x, std::nullopt, true, causal, /*average_attn_weights=*/false);  // [2, 4, 5, 5]
    const xt::xarray<double> w_self = self.weights.to_array();
    const auto cross = mha(x, memory, memory, std::nullopt, true, std::nullopt, false);  // [2, 4, 5, 6]
    const xt::xarray<double> w_cross = cross.weights.to_array();
    for (std::size_t h = 0; h < 4; ++h) {
      CAPTURE(h);
      const viz::ScoreView s = viz::score_view(mha, x, x, h, causal, /*sentence=*/1);
      CHECK(max_diff(s.weights(), xt::xarray<double>(xt::view(w_self, 1, h))) < 1e-12);
      CHECK(s.scale == doctest::Approx(1.0 / std::sqrt(2.0)));
      const viz::ScoreView c = viz::score_view(mha, x, memory, h, std::nullopt, 0, /*with_values=*/true);
      CHECK(max_diff(c.weights(), xt::xarray<double>(xt::view(w_cross, 0, h))) < 1e-12);
      CHECK(c.values.shape() == std::vector<std::size_t>{6, 2});
    }
  }
}

TEST_CASE("an additive score view holds the weights of nn::Attention with an AdditiveScore") {
  attn::manual_seed(9);
  auto owned = std::make_unique<nn::AdditiveScore>(3, 4, 5);
  nn::AdditiveScore& score = *owned;
  nn::Attention attention(std::move(owned));
  attention.to(attn::Dtype::Float64);
  const Tensor s = test::randn({2, 3, 3}, 10, false), h = test::randn({2, 6, 4}, 11, false);
  const attn::Mask padding = nn::padding_mask(attn::Index{6, 4}, 6);  // sentence 1: keys 4 and 5 are padding
  const xt::xarray<double> lib = attention(s, h, h, padding).weights.to_array();  // [2, 3, 6]

  attn::Mask mask = xt::zeros<bool>({std::size_t(3), std::size_t(6)});
  for (std::size_t t = 0; t < 3; ++t) mask(t, 4) = mask(t, 5) = true;
  const viz::ScoreView view = viz::score_view(score, s, h, mask, /*sentence=*/1);
  CHECK(view.kind == viz::ScoreKind::Additive);
  CHECK(max_diff(view.weights(), xt::xarray<double>(xt::view(lib, 1))) < 1e-12);
  // The scores are v_a . tanh(W1 s + W2 h), nn::AdditiveScore's own.
  const xt::xarray<double> e = score(s, h).to_array();
  CHECK(max_diff(view.scores(), xt::xarray<double>(xt::view(e, 1))) < 1e-12);
  // The same view from its pieces, and the hidden activations the page shows.
  const Tensor Wq = attn::linear(attn::select(s, 0, 1), score.W1), Uk = attn::linear(attn::select(h, 0, 1), score.W2);
  const viz::ScoreView pieces = viz::additive_scores(Wq, Uk, score.v, mask);
  CHECK(max_diff(pieces.weights(), xt::xarray<double>(xt::view(lib, 1))) < 1e-12);
  const json doc = document_of(viz::score_view_html(view));
  CHECK(doc.at("kind") == "additive");
  CHECK(doc.at("va").size() == 5);
  CHECK(doc.at("hidden").size() == 3);
  CHECK(max_diff(matrix_of(doc.at("hidden").at(2)), attn::tanh(attn::unsqueeze(attn::select(Wq, 0, 2), 0) + Uk).to_array()) < 1e-12);
  CHECK(max_diff(matrix_of(doc.at("weights")), xt::xarray<double>(xt::view(lib, 1))) < 1e-12);
  CHECK(doc.at("scale").get<double>() == 1.0);  // additive scores are not scaled
}

TEST_CASE("the score view's HTML is self-contained: its picture as an image, style, script and document") {
  DotCase c;
  viz::ScoreView view = viz::dot_product_scores(c.q, c.k, c.mask);
  view.title = "</script> & <b>";
  view.queries = {"le", "chat", "<eos>", "a&b"};
  view.keys = {"the", "</script>", "cat", "x", "y"};
  view.query = 2;
  const std::string html = viz::score_view_html(view);
  CHECK(html.rfind("<div class=\"attn-score-view\" id=\"attn-score-view-", 0) == 0);
  // The static picture is an <img> of an SVG data URI (Jupyter's sanitiser keeps it; an inline <svg> it drops).
  const std::string img = "<div class=\"attn-sv-fallback\"><img alt=\"";
  REQUIRE(html.find(img) != std::string::npos);
  const std::string head = "src=\"data:image/svg+xml;base64,";
  const std::size_t at = html.find(head);
  REQUIRE(at != std::string::npos);
  const std::string svg = base64_decode(html.substr(at + head.size(), html.find('"', at + head.size()) - at - head.size()));
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("&lt;eos&gt;") != std::string::npos);  // the labels, escaped for XML
  CHECK(html.find("<svg") == std::string::npos);
  // Nothing is fetched: the only src is the data URI, no link or import of another file.
  CHECK(html.find("src=") == at);
  for (const char* fetch : {"href=\"http", "@import", "fetch(", "XMLHttpRequest", "url("})
    CHECK_MESSAGE(html.find(fetch) == std::string::npos, fetch);
  std::size_t ends = 0;
  for (std::size_t p = html.find("</script"); p != std::string::npos; p = html.find("</script", p + 1)) ++ends;
  CHECK(ends == 1);  // the label "</script>" cannot close the script early
  const json doc = document_of(html);
  CHECK(html.find("id=\"" + doc.at("id").get<std::string>() + "\"") != std::string::npos);
  CHECK(doc.at("title") == "</script> & <b>");
  CHECK(doc.at("keys").at(1) == "</script>");
  CHECK(doc.at("query") == 2);
  CHECK(document_of(viz::score_view_html(view)).at("id") != doc.at("id"));  // every view its own id
  const nlohmann::json bundle = mime_bundle_repr(view);  // found by xcpp::display through the namespace
  CHECK(bundle.at("text/html").get<std::string>().find("attnScoreView(") != std::string::npos);
  CHECK(bundle.at("text/plain") == "<score view: </script> & <b>>");
}

TEST_CASE("bad input to the score view names the view and the shapes") {
  DotCase c;
  CHECK_THROWS_WITH_SUBSTR(viz::dot_product_scores(c.q, test::randn({5, 2}, 4, false)), attn::ShapeError,
                           "dot_product_scores: expected queries q [T, d] and keys k [S, d] with the same d, got q [4, 3] and k [5, 2]");
  viz::ScoreView view = viz::dot_product_scores(c.q, c.k);
  view.mask = attn::Mask(xt::zeros<bool>({std::size_t(5), std::size_t(4)}));
  CHECK_THROWS_WITH_SUBSTR(viz::score_view_html(view), attn::ShapeError,
                           "score view (dot product): expected a mask [T, S] = [4, 5] for q [4, 3] and k [5, 3], got [5, 4]");
  view.mask.reset();
  view.query = 4;
  CHECK_THROWS_WITH_SUBSTR(view.weights(), attn::ValueError, "score view (dot product): query 4 is out of range for 4 queries (q [4, 3])");
  view.query = 0;
  view.k = xt::zeros<double>({5, 2});
  CHECK_THROWS_WITH_SUBSTR(view.scores(), attn::ShapeError, "sharing their last size (at least 1 of each), got q [4, 3] and k [5, 2]");
  view.k = c.k.to_array();
  view.keys = {"a", "b"};
  CHECK_THROWS_WITH_SUBSTR(viz::score_view_html(view), attn::ShapeError, "expected 4 query labels and 5 key labels (or none)");
  view.keys.clear();
  view.values = xt::zeros<double>({3, 2});
  CHECK_THROWS_WITH_SUBSTR(viz::score_view_html(view), attn::ShapeError, "expected values [S, dv] with S = 5");

  CHECK_THROWS_WITH_SUBSTR(viz::additive_scores(c.q, c.k, test::randn({2}, 5, false)), attn::ShapeError,
                           "score view (additive): expected v_a [3] for projections of size A = 3, got v_a [2]");
  nn::MultiheadAttention mha(8, 2);
  const Tensor x = test::randn({5, 8}, 6, false);
  CHECK_THROWS_WITH_SUBSTR(viz::score_view(mha, x, x, 2), attn::ValueError, "head 2 is out of range for a layer of 2 heads");
  CHECK_THROWS_WITH_SUBSTR(viz::score_view(mha, x, test::randn({5, 6}, 7, false), 0), attn::ShapeError,
                           "embed_dim 8, got query [5, 8] and key [5, 6]");
  CHECK_THROWS_WITH_SUBSTR(viz::score_view(mha, x, x, 0, std::nullopt, /*sentence=*/1), attn::ShapeError,
                           "expected query [N, D] or [B, N, D] with sentence 1 < B, got [5, 8]");
  mha.position = nn::AttentionPosition::Rotary;
  CHECK_THROWS_WITH_SUBSTR(viz::score_view(mha, x, x, 0), attn::ValueError, "the layer uses rotary positions");
}
