// BLEU against NLTK's corpus_bleu and sentence_bleu (tests/reference/bleu.json,
// written by tools/reference/bleu.py) and on cases counted by hand.
#include "../helpers.hpp"

#include "eval/bleu.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

using attn::data::Tokens;
using namespace attn::models;

namespace {

nlohmann::json nltk_cases() {
  std::ifstream in(std::string(ATTN_REFERENCE_DIR) + "/bleu.json");
  REQUIRE(in);
  return nlohmann::json::parse(in).at("cases");
}

Tokens words(const std::string& text) { return attn::data::split_whitespace(text); }

}  // namespace

TEST_CASE("corpus_bleu equals NLTK's, every smoothing, to 1e-9") {
  const nlohmann::json cases = nltk_cases();
  REQUIRE(cases.size() == 29);
  for (const auto& c : cases) {
    CAPTURE(c.at("name").get<std::string>());
    const auto references = c.at("references").get<std::vector<std::vector<Tokens>>>();
    const auto hypotheses = c.at("hypotheses").get<std::vector<Tokens>>();
    BleuOptions options;
    options.max_order = c.at("max_order");
    options.nltk_counts = true;
    const std::pair<const char*, Smoothing> methods[] = {
        {"method0", Smoothing::None}, {"method1", Smoothing::Epsilon}, {"method3", Smoothing::NistGeometric}};
    for (const auto& [name, smoothing] : methods) {
      CAPTURE(name);
      options.smoothing = smoothing;
      const double nltk = c.at("corpus").at(name);
      CHECK(std::abs(corpus_bleu(references, hypotheses, options).score - nltk) < 1e-9);
      // Papineni's counts are NLTK's when no hypothesis is shorter than the largest order.
      if (c.at("all_long")) {
        BleuOptions papineni = options;
        papineni.nltk_counts = false;
        CHECK(std::abs(corpus_bleu(references, hypotheses, papineni).score - nltk) < 1e-9);
      }
    }
  }
}

TEST_CASE("sentence_bleu equals NLTK's with methods 1 and 3, to 1e-9") {
  std::size_t checked = 0;
  for (const auto& c : nltk_cases()) {
    CAPTURE(c.at("name").get<std::string>());
    const auto references = c.at("references").get<std::vector<std::vector<Tokens>>>();
    const auto hypotheses = c.at("hypotheses").get<std::vector<Tokens>>();
    for (const auto& [name, smoothing] : {std::pair{"method1", Smoothing::Epsilon}, std::pair{"method3", Smoothing::NistGeometric}}) {
      const auto nltk = c.at("sentence").at(name).get<std::vector<double>>();
      REQUIRE(nltk.size() == hypotheses.size());
      for (std::size_t i = 0; i < hypotheses.size(); ++i, ++checked) {
        BleuOptions options;
        options.max_order = c.at("max_order");
        options.smoothing = smoothing;
        CHECK(std::abs(sentence_bleu(references[i], hypotheses[i], options) - nltk[i]) < 1e-9);
      }
    }
  }
  CHECK(checked > 100);
}

TEST_CASE("BLEU by hand: identical, clipped, brevity penalty") {
  const Tokens ref = words("le chat dort sur le tapis");
  CHECK(corpus_bleu(std::vector<Tokens>{ref}, {ref}).score == doctest::Approx(1.0).epsilon(1e-12));

  // "le" x7 against a reference with "le" twice: unigram precision clipped to 2/7;
  // no bigram matches, so 4-gram BLEU is 0.
  const Tokens seven = words("le le le le le le le");
  BleuOptions unigram;
  unigram.max_order = 1;
  const Bleu b1 = corpus_bleu(std::vector<Tokens>{ref}, {seven}, unigram);
  CHECK(b1.precisions[0] == doctest::Approx(2.0 / 7.0).epsilon(1e-12));
  CHECK(b1.brevity_penalty == 1.0);  // c = 7 > r = 6
  CHECK(b1.score == doctest::Approx(2.0 / 7.0).epsilon(1e-12));
  CHECK(corpus_bleu(std::vector<Tokens>{ref}, {seven}).score == 0.0);

  // "le chat" (2 words) against 6: every precision 1, BP = exp(1 - 6/2) = exp(-2).
  BleuOptions bigram;
  bigram.max_order = 2;
  const Bleu b2 = corpus_bleu(std::vector<Tokens>{ref}, {words("le chat")}, bigram);
  CHECK(b2.precisions == std::vector<double>{1.0, 1.0});
  CHECK(b2.hyp_length == 2);
  CHECK(b2.ref_length == 6);
  CHECK(b2.score == doctest::Approx(std::exp(-2.0)).epsilon(1e-12));

  // Of two references, the one closest in length sets r (the shorter on a tie: 5 and 7 for c = 6 -> 5).
  const BleuStats s = bleu_stats({words("a b c d e"), words("a b c d e f g")}, words("a b c d e f"));
  CHECK(s.ref_length == 5);
  CHECK(s.matches == std::vector<std::size_t>{6, 5, 4, 3});
  CHECK(s.totals == std::vector<std::size_t>{6, 5, 4, 3});
}

TEST_CASE("empty hypotheses and hypotheses shorter than n") {
  // An empty hypothesis alone: no words, BLEU 0, BP 0, whatever the smoothing.
  for (Smoothing smoothing : {Smoothing::None, Smoothing::Epsilon, Smoothing::NistGeometric}) {
    BleuOptions options;
    options.smoothing = smoothing;
    const Bleu b = corpus_bleu(std::vector<Tokens>{words("le chat")}, {Tokens{}}, options);
    CHECK(b.score == 0.0);
    CHECK(b.brevity_penalty == 0.0);
    CHECK(sentence_bleu({words("le chat")}, Tokens{}) == 0.0);
  }
  CHECK(corpus_bleu(std::vector<Tokens>{}, std::vector<Tokens>{}).score == 0.0);

  // "le chat dort sur" and "le chat", both exact. Papineni: p1 = 6/6, p2 = 4/4,
  // p3 = 2/2, p4 = 1/1, BP = 1, so BLEU = 1. NLTK also counts one trigram and
  // one 4-gram for "le chat": p3 = 2/3, p4 = 1/2, BLEU = (2/3 * 1/2)^(1/4).
  const std::vector<Tokens> refs = {words("le chat dort sur"), words("le chat")};
  const std::vector<Tokens> hyps = refs;
  BleuOptions papineni;
  papineni.nltk_counts = false;
  CHECK(corpus_bleu(refs, hyps, papineni).score == doctest::Approx(1.0).epsilon(1e-12));
  // NLTK's counts are the default, so the BLEU attn reports is the one NLTK recomputes.
  CHECK(corpus_bleu(refs, hyps).score == doctest::Approx(std::pow(1.0 / 3.0, 0.25)).epsilon(1e-12));

  // Every hypothesis shorter than 4: no 4-gram at all, so Papineni's p4 is 0/0 and BLEU 0,
  // smoothed or not; with max_order 2 the same pair scores 1.
  BleuOptions smoothed;
  smoothed.smoothing = Smoothing::NistGeometric;
  smoothed.nltk_counts = false;
  CHECK(corpus_bleu(std::vector<Tokens>{words("le chat")}, {words("le chat")}, smoothed).score == 0.0);
  BleuOptions bigram;
  bigram.max_order = 2;
  CHECK(corpus_bleu(std::vector<Tokens>{words("le chat")}, {words("le chat")}, bigram).score == 1.0);

  // Sentence BLEU of "le chat dort" against "le chat dort ici": p1..p3 = 1, p4 = 0/1,
  // smoothed (method3) to 1/2; BP = exp(1 - 4/3). With method1, p4 = 0.1 / 1.
  const Tokens hyp = words("le chat dort");
  const std::vector<Tokens> ref = {words("le chat dort ici")};
  CHECK(sentence_bleu(ref, hyp) == doctest::Approx(std::exp(-1.0 / 3.0) * std::pow(0.5, 0.25)).epsilon(1e-12));
  BleuOptions epsilon;
  epsilon.smoothing = Smoothing::Epsilon;
  CHECK(sentence_bleu(ref, hyp, epsilon) == doctest::Approx(std::exp(-1.0 / 3.0) * std::pow(0.1, 0.25)).epsilon(1e-12));
}

TEST_CASE("statistics add up: the BLEU of summed stats is corpus BLEU") {
  const std::vector<Tokens> refs = {words("le chat dort sur le tapis"), words("un chat dort"), words("le tapis")};
  const std::vector<Tokens> hyps = {words("le chat dort sur un tapis"), words("un chat dort ici"), words("le")};
  BleuStats sum;
  for (std::size_t i = 0; i < refs.size(); ++i) sum += bleu_stats({refs[i]}, hyps[i]);
  CHECK(bleu_from_stats(sum).score == corpus_bleu(refs, hyps).score);
}

TEST_CASE("BLEU's bad inputs name the function and what is wrong") {
  CHECK_THROWS_WITH_AS(corpus_bleu(std::vector<Tokens>{words("a")}, std::vector<Tokens>{}),
                       doctest::Contains("corpus_bleu: expected one list of references per hypothesis, got 1"),
                       attn::ValueError);
  CHECK_THROWS_WITH_AS(corpus_bleu(std::vector<std::vector<Tokens>>{{}}, {words("a")}),
                       doctest::Contains("hypothesis 0 has no reference"), attn::ValueError);
  BleuOptions zero;
  zero.max_order = 0;
  CHECK_THROWS_AS(bleu_stats({words("a")}, words("a"), zero), attn::ValueError);
  BleuStats two = bleu_stats({words("a b")}, words("a b"), BleuOptions{2});
  CHECK_THROWS_WITH_AS(bleu_from_stats(two), doctest::Contains("expected statistics of orders 1..4, got 1..2"),
                       attn::ValueError);
  BleuStats four = bleu_stats({words("a b")}, words("a b"));
  CHECK_THROWS_AS(four += two, attn::ValueError);
}
