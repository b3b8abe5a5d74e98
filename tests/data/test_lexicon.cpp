// IBM model 1 (data/lexicon.hpp): NLTK's values on Koehn's German-English example
// (tools/reference/ibm_model1.py), rows that are distributions, a likelihood that never falls, bad input.
#include "../helpers.hpp"

#include "data/lexicon.hpp"

#include <nlohmann/json.hpp>
#include <xtensor/xview.hpp>

#include <cmath>
#include <fstream>

namespace data = attn::data;
using Sentences = std::vector<std::vector<std::int64_t>>;

namespace {

nlohmann::json reference() {
  std::ifstream in(std::string(ATTN_REFERENCE_DIR) + "/ibm_model1.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

// log p(e | f) of the corpus under IBM model 1 with NULL: sum over target words of log(sum_j t(e | f_j) / (m + 1)).
double log_likelihood(const Sentences& src, const Sentences& tgt, const xt::xarray<double>& t, const xt::xarray<double>& null_row) {
  double ll = 0;
  for (std::size_t p = 0; p < src.size(); ++p)
    for (std::int64_t e : tgt[p]) {
      double s = null_row(std::size_t(e));
      for (std::int64_t f : src[p]) s += t(std::size_t(f), std::size_t(e));
      ll += std::log(s / double(src[p].size() + 1));
    }
  return ll;
}

}  // namespace

TEST_CASE("ibm_model1 equals NLTK's IBMModel1 after 1, 2 and 5 iterations") {
  const nlohmann::json ref = reference();
  const Sentences src = ref.at("src").get<Sentences>(), tgt = ref.at("tgt").get<Sentences>();
  const std::size_t F = ref.at("src_vocab").get<std::size_t>(), E = ref.at("tgt_vocab").get<std::size_t>();
  for (const auto& item : ref.at("cases").items()) {
    const nlohmann::json& c = item.value();
    INFO(item.key());
    xt::xarray<double> null_row;
    const xt::xarray<double> t = data::ibm_model1(src, tgt, F, E, {c.at("iterations").get<std::size_t>()}, &null_row);
    REQUIRE(t.shape() == std::vector<std::size_t>{F, E});
    for (const auto& p : c.at("pairs")) {
      INFO("f " << p[0] << ", e " << p[1]);
      CHECK(t(p[0].get<std::size_t>(), p[1].get<std::size_t>()) == doctest::Approx(p[2].get<double>()).epsilon(1e-12));
    }
    for (const auto& p : c.at("null")) CHECK(null_row(p[0].get<std::size_t>()) == doctest::Approx(p[1].get<double>()).epsilon(1e-12));
  }
}

TEST_CASE("ibm_model1: every row a distribution, 0 for words that never meet, uniform for unseen ids") {
  const Sentences src = {{1, 2}, {1, 3}, {4}}, tgt = {{5, 6}, {5, 7}, {8}};
  const xt::xarray<double> t = data::ibm_model1(src, tgt, 6, 9, {4});
  for (std::size_t f = 0; f < 6; ++f) CHECK(xt::sum(xt::view(t, f, xt::all()))() == doctest::Approx(1.0).epsilon(1e-14));
  CHECK(t(2, 7) == 0.0);  // 2 and 7 never share a pair
  CHECK(t(4, 5) == 0.0);
  CHECK(t(0, 3) == doctest::Approx(1.0 / 9));  // id 0 never occurs
  // 1 is in both pairs that hold 5: it takes 5 from its neighbours.
  CHECK(t(1, 5) > t(2, 5));
  CHECK(t(1, 5) > t(3, 5));
}

TEST_CASE("ibm_model1: the likelihood never falls from one iteration to the next; without NULL, 1-1 words pair up") {
  const nlohmann::json ref = reference();
  const Sentences src = ref.at("src").get<Sentences>(), tgt = ref.at("tgt").get<Sentences>();
  const std::size_t F = ref.at("src_vocab").get<std::size_t>(), E = ref.at("tgt_vocab").get<std::size_t>();
  double previous = -1e300;
  for (std::size_t it = 1; it <= 8; ++it) {
    xt::xarray<double> null_row;
    const xt::xarray<double> t = data::ibm_model1(src, tgt, F, E, {it}, &null_row);
    const double ll = log_likelihood(src, tgt, t, null_row);
    INFO("iteration " << it);
    CHECK(ll >= previous - 1e-12);
    previous = ll;
  }
  data::IBMModel1Options no_null;
  no_null.iterations = 20;
  no_null.null_word = false;
  const xt::xarray<double> t = data::ibm_model1({{1, 2}, {1}}, {{3, 4}, {3}}, 3, 5, no_null);
  CHECK(t(1, 3) > 0.99);
  CHECK(t(2, 4) > 0.95);  // slower: 2 shares its pair with 1, which t(3 | 1) explains first
}

TEST_CASE("ibm_model1 counts every token: a word written twice is credited twice (by hand)") {
  // Without NULL and with one source word, every target token is wholly a's: c(x, a) = 2, c(y, a) = 1.
  // (Crediting a word once per sentence, as NLTK's IBMModel1 does with its NULL, would give 1/2 here.)
  data::IBMModel1Options no_null;
  no_null.iterations = 3;
  no_null.null_word = false;
  xt::xarray<double> null_row;
  xt::xarray<double> t = data::ibm_model1({{1}, {1}}, {{2, 2}, {3}}, 2, 4, no_null, &null_row);
  CHECK(t(1, 2) == doctest::Approx(2.0 / 3).epsilon(1e-14));
  CHECK(t(1, 3) == doctest::Approx(1.0 / 3).epsilon(1e-14));
  for (std::size_t e = 0; e < 4; ++e) CHECK(null_row(e) == doctest::Approx(0.25));  // no NULL: its row untouched
  // With NULL, one iteration from the uniform start: each of 2, 2, 1 is split evenly between NULL and 1,
  // so both rows get c(2) = 1, c(1) = 1/2: t(2 | .) = 2/3, t(1 | .) = 1/3.
  t = data::ibm_model1({{1}}, {{2, 2, 1}}, 2, 3, {1}, &null_row);
  CHECK(t(1, 2) == doctest::Approx(2.0 / 3).epsilon(1e-14));
  CHECK(t(1, 1) == doctest::Approx(1.0 / 3).epsilon(1e-14));
  CHECK(null_row(2) == doctest::Approx(2.0 / 3).epsilon(1e-14));
  CHECK(null_row(0) == 0.0);
}

TEST_CASE("ibm_model1: bad input names what is wrong") {
  CHECK_THROWS_WITH_SUBSTR(data::ibm_model1({{1}}, {}, 3, 3), attn::ValueError, "1 source sentences but 0 target sentences");
  CHECK_THROWS_WITH_SUBSTR(data::ibm_model1({{1}, {}}, {{1}, {2}}, 3, 3), attn::ValueError, "source sentence 1 is empty");
  CHECK_THROWS_WITH_SUBSTR(data::ibm_model1({{1}}, {{3}}, 3, 3), attn::ValueError, "target sentence 0 holds id 3, outside the vocabulary 0..2");
  CHECK_THROWS_WITH_SUBSTR(data::ibm_model1({{1}}, {{1}}, 0, 3), attn::ValueError, "must not be empty");
  CHECK_THROWS_WITH_SUBSTR(data::ibm_model1({{1}}, {{1}}, 3, 3, {0}), attn::ValueError, "iterations must be at least 1");
  // Refused before any table is allocated: (8192 + 1) x 8192 > 2^26.
  CHECK_THROWS_WITH_SUBSTR(data::ibm_model1({{1}}, {{1}}, 8192, 8192), attn::ValueError,
                           "a table of 8192 x 8192 entries is more than");
}
