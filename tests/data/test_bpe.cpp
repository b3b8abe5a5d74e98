#include "../helpers.hpp"

#include "../../data/bpe.hpp"

#include <nlohmann/json.hpp>

#include <fstream>

using attn::data::Bpe;
using attn::data::Tokens;

namespace {

// tests/reference/bpe.json, written by tools/reference/bpe.py (the paper's Algorithm 1).
nlohmann::json bpe_reference() {
  std::ifstream in(std::string(ATTN_REFERENCE_DIR) + "/bpe.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

std::vector<Tokens> sentences_of(const nlohmann::json& c) {
  std::vector<Tokens> out;
  for (const auto& s : c["sentences"]) out.push_back(s.get<Tokens>());
  return out;
}

}  // namespace

TEST_CASE("learned merges and encodings equal the paper's algorithm, run by tools/reference/bpe.py") {
  const nlohmann::json reference = bpe_reference();  // kept alive: the loop reads into it
  for (const auto& c : reference["cases"]) {
    CAPTURE(c["name"].get<std::string>());
    const Bpe bpe = Bpe::learn(sentences_of(c), c["merges"].get<std::size_t>(), c["min_frequency"].get<std::size_t>());
    std::vector<Bpe::Pair> expected;
    for (const auto& p : c["learned"]) expected.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
    CHECK(bpe.merges() == expected);
    const Tokens words = c["words"].get<Tokens>();
    for (std::size_t i = 0; i < words.size(); ++i) {
      CAPTURE(words[i]);
      CHECK(bpe.encode({words[i]}) == c["encoded"][i].get<Tokens>());
    }
  }
}

TEST_CASE("the paper's first merges: es, est, est</w>, lo, low") {
  std::vector<Tokens> words;
  for (int i = 0; i < 5; ++i) words.push_back({"low"});
  for (int i = 0; i < 2; ++i) words.push_back({"lower"});
  for (int i = 0; i < 6; ++i) words.push_back({"newest"});
  for (int i = 0; i < 3; ++i) words.push_back({"widest"});
  const Bpe bpe = Bpe::learn(words, 5);
  CHECK(bpe.merges() == std::vector<Bpe::Pair>{{"e", "s"}, {"es", "t"}, {"est", "</w>"}, {"l", "o"}, {"lo", "w"}});
  CHECK(bpe.encode({"lowest", "low"}) == Tokens{"low@@", "est", "low"});
}

TEST_CASE("decode undoes encode, and no word is unknown to the pieces") {
  const std::vector<Tokens> text = {{"cannot", "open", "file"}, {"cannot", "read", "files"}, {"unreadable", "file"}};
  const Bpe bpe = Bpe::learn(text, 20, 1);
  const Tokens words = {"cannot", "reopen", "unreadable", "files", "ζ", "été"};
  const Tokens pieces = bpe.encode(words);
  CHECK(Bpe::decode(pieces) == words);
  CHECK(pieces.size() > words.size());
  // A model that stops in the middle of a word still gives the word so far.
  CHECK(Bpe::decode({"un@@", "read@@"}) == Tokens{"unread"});
  // Without merges a word is its characters.
  CHECK(Bpe().encode({"été"}) == Tokens{"é@@", "t@@", "é"});
}

TEST_CASE("a word takes the merges in the order they were learned, not left to right") {
  const Bpe bpe({{"b", "c"}, {"a", "b"}});
  CHECK(bpe.encode({"abc"}) == Tokens{"a@@", "bc"});
  const Bpe other({{"a", "b"}, {"b", "c"}});
  CHECK(other.encode({"abc"}) == Tokens{"ab@@", "c"});
}

TEST_CASE("min_frequency stops learning; ties go to the pair first in string order") {
  const Bpe rare = Bpe::learn({{"ab"}, {"cd"}}, 10, 2);
  CHECK(rare.merges().empty());
  const Bpe once = Bpe::learn({{"ab"}, {"cd"}}, 1, 1);
  CHECK(once.merges() == std::vector<Bpe::Pair>{{"a", "b"}});  // (a, b), (b, </w>), (c, d), (d, </w>) all once
}

TEST_CASE("bad words and bad files are refused with what is wrong") {
  const Bpe bpe;
  CHECK_THROWS_WITH_SUBSTR(bpe.encode({"ok", "x@@"}), attn::ValueError, "word 1 'x@@' ends with '@@'");
  CHECK_THROWS_WITH_SUBSTR(bpe.encode({""}), attn::ValueError, "word 0 is empty");
  CHECK_THROWS_WITH_SUBSTR(Bpe::from_text("a b\n", "codes.bpe"), attn::IOError, "codes.bpe:1: expected the header");
  CHECK_THROWS_WITH_SUBSTR(Bpe::from_text("#attn bpe 1\na b\nab\n", "codes.bpe"), attn::IOError,
                           "codes.bpe:3: expected two symbols");
}

TEST_CASE("the codes round-trip through text") {
  const Bpe bpe = Bpe::learn({{"cannot", "open", "file"}, {"cannot", "open", "files"}}, 15, 1);
  REQUIRE(bpe.merges().size() == 15);
  CHECK(Bpe::from_text(bpe.to_text()) == bpe);
}
