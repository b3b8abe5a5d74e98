#include "../helpers.hpp"

#include <sstream>

using namespace attn::data;

namespace {
const std::string data_dir = std::string(ATTN_REFERENCE_DIR) + "/../data/";

Corpus read(const std::string& text, const CorpusOptions& options = {}) {
  std::istringstream in(text);
  return read_tsv(in, "inline", options);
}
}  // namespace

TEST_CASE("the sample corpus loads word by word, extra columns ignored") {
  const Corpus c = load_tsv(data_dir + "sample_pairs.tsv");
  CHECK(c.lines == 25);
  REQUIRE(c.pairs.size() == 25);
  CHECK(c.malformed == 0);
  CHECK(c.too_long == 0);
  CHECK(c.pairs[0].src == Tokens{"Hello."});
  CHECK(c.pairs[0].tgt == Tokens{"Bonjour."});  // not "sample pair 1"
  CHECK(c.pairs[3].tgt == Tokens{"Je", "suis", "fatigué."});
  CHECK(c.pairs[6].tgt == Tokens{"Où", "est", "la", "gare", "?"});
  CHECK(c.pairs[24].tgt == Tokens{"À", "demain."});
  CHECK(c.pairs[0].alignment.empty());
}

TEST_CASE("lowercase, characters and a length limit") {
  CorpusOptions options;
  options.lowercase = true;
  const Corpus lower = load_tsv(data_dir + "sample_pairs.tsv", options);
  CHECK(lower.pairs[23].src == Tokens{"éric", "eats", "an", "apple."});
  CHECK(lower.pairs[23].tgt == Tokens{"éric", "mange", "une", "pomme."});
  CHECK(lower.pairs[24].tgt == Tokens{"à", "demain."});
  options.char_level = true;
  const Corpus chars = load_tsv(data_dir + "sample_pairs.tsv", options);
  CHECK(chars.pairs[1].src == Tokens{"t", "h", "a", "n", "k", " ", "y", "o", "u", "."});
  CHECK(join(chars.pairs[19].tgt, "") == "ma sœur est médecin.");
  CHECK(chars.pairs[19].tgt.size() == 20);  // œ and é are one character each
  CorpusOptions short_only;
  short_only.max_length = 5;
  const Corpus s = load_tsv(data_dir + "sample_pairs.tsv", short_only);
  // Only "I am learning to read slowly every morning." (8 words / 6 words) is longer.
  CHECK(s.too_long == 1);
  CHECK(s.pairs.size() == 24);
  for (const auto& p : s.pairs) CHECK((p.src.size() <= 5 && p.tgt.size() <= 5));
}

TEST_CASE("a vocabulary and batches from the corpus") {
  const Corpus c = load_tsv(data_dir + "sample_pairs.tsv", {false, true, 0, false});
  const Vocab src = Vocab::build(sources(c.pairs)), tgt = Vocab::build(targets(c.pairs));
  for (const auto& p : c.pairs) CHECK(tgt.decode(tgt.encode(p.tgt, /*strict=*/true)) == p.tgt);
  CHECK(src.id("is") == 4);  // 9 times: the most frequent English word
  CHECK(src.id("the") == 5);  // 7 times
  attn::Generator gen(0);
  const auto batches = make_batches(c.pairs, src, tgt, 8, true, gen);
  CHECK(batches.size() == 4);
  CHECK(batches.back().size() == 1);
  CHECK_THROWS_WITH_SUBSTR(tgt.encode({"bonjour.", "zut"}, true), attn::ValueError, "'zut'");
}

TEST_CASE("a malformed line is an IOError with file and line number") {
  const std::string path = data_dir + "malformed.tsv";
  CHECK_THROWS_WITH_SUBSTR(load_tsv(path), attn::IOError, "malformed.tsv:3: no tab between source and target");
  CHECK_THROWS_WITH_SUBSTR(read("a\tb\nc\t\n"), attn::IOError, "inline:2: empty target");
  CHECK_THROWS_WITH_SUBSTR(read(" \tb\n"), attn::IOError, "inline:1: empty source");
  CHECK_THROWS_WITH_SUBSTR(read(std::string("a\tb\nx\xC3\ty\n")), attn::IOError, "inline:2: not valid UTF-8");
}

TEST_CASE("skip_malformed skips and counts bad lines") {
  CorpusOptions options;
  options.skip_malformed = true;
  const Corpus c = load_tsv(data_dir + "malformed.tsv", options);
  CHECK(c.lines == 7);
  CHECK(c.pairs.size() == 4);
  CHECK(c.malformed == 3);
  CHECK(c.malformed_lines == std::vector<std::size_t>{3, 5, 6});
  CHECK(c.pairs[2].src == Tokens{"Good", "night."});
  CHECK(c.pairs[3].tgt == Tokens{"À", "demain."});
}

TEST_CASE("a missing file is an IOError naming it") {
  CHECK_THROWS_WITH_SUBSTR(load_tsv(data_dir + "no_such_file.tsv"), attn::IOError, "no_such_file.tsv");
  CHECK_THROWS_WITH_SUBSTR(load_tsv(data_dir), attn::IOError, "is a directory");
}

TEST_CASE("Windows line ends, a byte-order mark and blank lines are accepted") {
  const Corpus c = read("\xEF\xBB\xBFOne.\tUn.\r\n\r\nTwo.\tDeux.\tx\ty\r\n\n");
  CHECK(c.lines == 4);
  REQUIRE(c.pairs.size() == 2);
  CHECK(c.pairs[0].src == Tokens{"One."});
  CHECK(c.pairs[0].tgt == Tokens{"Un."});
  CHECK(c.pairs[1].tgt == Tokens{"Deux."});
  CHECK(c.malformed == 0);
  // Blanks around a side are trimmed; in character mode, inner spaces are tokens.
  CorpusOptions chars;
  chars.char_level = true;
  CHECK(read("  a b \t c\n", chars).pairs[0].src == Tokens{"a", " ", "b"});
}

TEST_CASE("to_lower handles ASCII and accented Latin letters only") {
  CHECK(to_lower("ÉCOLE Ça") == "école ça");
  CHECK(to_lower("ŒUVRE Ÿ ÀÞ") == "œuvre ÿ àþ");
  CHECK(to_lower("2 × 3") == "2 × 3");  // the multiplication sign is not a letter
  CHECK(to_lower("€ 😀 Straße") == "€ 😀 straße");
}

TEST_CASE("split_words: punctuation and French elisions as tokens of their own") {
  CHECK(split_words("Cannot open file.") == Tokens{"Cannot", "open", "file", "."});
  CHECK(split_words("Impossible d'ouvrir « x »...") == Tokens{"Impossible", "d'", "ouvrir", "«", "x", "»", "..."});
  CHECK(split_words("L\xE2\x80\x99" "archive (vide) ?") == Tokens{"L\xE2\x80\x99", "archive", "(", "vide", ")", "?"});
  CHECK(split_words("qu'il can't 3.5 e-mail") == Tokens{"qu'", "il", "can't", "3.5", "e-mail"});
  CHECK(split_words("\"Quoted,\" she said!!") == Tokens{"\"", "Quoted", ",", "\"", "she", "said", "!!"});
  CHECK(split_words("  ") == Tokens{});
  CHECK(split_words("...") == Tokens{"..."});
  CorpusOptions options;
  options.split_punctuation = true;
  const Corpus c = read("Cannot open file.\tImpossible d'ouvrir le fichier.\n", options);
  REQUIRE(c.pairs.size() == 1);
  CHECK(c.pairs[0].src == Tokens{"Cannot", "open", "file", "."});
  CHECK(c.pairs[0].tgt == Tokens{"Impossible", "d'", "ouvrir", "le", "fichier", "."});
}
