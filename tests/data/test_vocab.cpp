#include "../helpers.hpp"

using attn::data::Tokens;
using attn::data::Vocab;

TEST_CASE("the special tokens have fixed ids") {
  Vocab v;
  CHECK(v.size() == 4);
  CHECK(v.id("<pad>") == 0);
  CHECK(v.id("<bos>") == 1);
  CHECK(v.id("<eos>") == 2);
  CHECK(v.id("<unk>") == 3);
  CHECK(Vocab::pad_id == 0);
  CHECK(Vocab::bos_id == 1);
  CHECK(Vocab::eos_id == 2);
  CHECK(Vocab::unk_id == 3);
  CHECK(v.token(Vocab::eos_id) == "<eos>");
  CHECK(Vocab::is_special(3));
  CHECK_FALSE(Vocab::is_special(4));
}

TEST_CASE("build orders tokens by frequency, then alphabetically, and honours min_freq") {
  const std::vector<Tokens> sentences = {{"the", "cat", "sat"}, {"the", "dog", "sat"}, {"the", "end"}};
  Vocab v = Vocab::build(sentences);
  // the x3, sat x2, then cat, dog, end once each in alphabetical order.
  CHECK(v.tokens() == std::vector<std::string>{"<pad>", "<bos>", "<eos>", "<unk>", "the", "sat", "cat", "dog", "end"});
  Vocab frequent = Vocab::build(sentences, 2);
  CHECK(frequent.size() == 6);
  CHECK(frequent.contains("sat"));
  CHECK_FALSE(frequent.contains("cat"));
  CHECK(frequent.id("cat") == Vocab::unk_id);
}

TEST_CASE("build keeps at most max_size tokens, the most frequent, besides the specials") {
  const std::vector<Tokens> sentences = {{"the", "cat", "sat"}, {"the", "dog", "sat"}, {"the", "end"}};
  CHECK(Vocab::build(sentences, 1, 3).tokens() ==
        std::vector<std::string>{"<pad>", "<bos>", "<eos>", "<unk>", "the", "sat", "cat"});  // cat wins the tie
  CHECK(Vocab::build(sentences, 1, 100).size() == 9);
  CHECK(Vocab::build(sentences, 2, 1).tokens() == std::vector<std::string>{"<pad>", "<bos>", "<eos>", "<unk>", "the"});
  CHECK(Vocab::build(sentences, 1, 3).encode({"the", "end"}) == std::vector<std::int64_t>{4, Vocab::unk_id});
}

TEST_CASE("encode and decode are inverse on known tokens") {
  Vocab v({"a", "b", "c", "a"});  // the repeat is ignored
  CHECK(v.size() == 7);
  const Tokens sentence = {"c", "a", "b", "b"};
  const auto ids = v.encode(sentence);
  CHECK(ids == std::vector<std::int64_t>{6, 4, 5, 5});
  CHECK(v.decode(ids) == sentence);
  // A model's output: <bos> ... <eos> then padding. Specials go, decoding stops at <eos>.
  CHECK(v.decode({1, 6, 4, 2, 5, 0, 0}) == Tokens{"c", "a"});
  CHECK(v.decode({1, 6, 2, 0}, /*skip_special=*/false) == Tokens{"<bos>", "c", "<eos>", "<pad>"});
  CHECK(v.add("d") == 7);
  CHECK(v.add("a") == 4);
}

TEST_CASE("unknown tokens become <unk>, or throw in strict mode naming the token") {
  Vocab v({"a", "b"});
  CHECK(v.encode({"a", "zebra", "b"}) == std::vector<std::int64_t>{4, 3, 5});
  CHECK(v.decode(v.encode({"a", "zebra"})) == Tokens{"a", "<unk>"});
  CHECK_THROWS_WITH_SUBSTR(v.encode({"a", "zebra"}, /*strict=*/true), attn::ValueError, "'zebra' at position 1");
  CHECK_NOTHROW(v.encode({"a", "b"}, true));
  CHECK_THROWS_WITH_SUBSTR(v.token(7), attn::ValueError, "id 7 is out of range for a vocabulary of 6");
  CHECK_THROWS_AS(v.token(-1), attn::ValueError);
  CHECK_THROWS_AS(v.decode({4, 99}), attn::ValueError);
}

TEST_CASE("JSON round trip keeps every id") {
  Vocab v = Vocab::build({{"é", "\"quoted\"", "tab\there", "x"}});
  const std::string text = v.to_json();
  CHECK(text.rfind("{\"tokens\":[\"<pad>\",\"<bos>\",\"<eos>\",\"<unk>\"", 0) == 0);
  Vocab back = Vocab::from_json(text);
  CHECK(back == v);
  CHECK(back.id("é") == v.id("é"));
  CHECK(back.id("tab\there") == v.id("tab\there"));
}

TEST_CASE("from_json rejects what is not a vocabulary") {
  CHECK_THROWS_WITH_SUBSTR(Vocab::from_json("not json"), attn::IOError, "Vocab::from_json");
  CHECK_THROWS_AS(Vocab::from_json("{\"words\": []}"), attn::IOError);
  CHECK_THROWS_AS(Vocab::from_json("{\"tokens\": [1, 2]}"), attn::IOError);
  CHECK_THROWS_WITH_SUBSTR(Vocab::from_json("{\"tokens\": [\"a\", \"<pad>\"]}"), attn::IOError, "start with <pad>");
  CHECK_THROWS_WITH_SUBSTR(Vocab::from_json(R"({"tokens": ["<pad>", "<bos>", "<eos>", "<unk>", "a", "a"]})"),
                           attn::IOError, "twice");
}

TEST_CASE("whitespace tokenizer splits on runs of blanks") {
  using attn::data::split_whitespace;
  CHECK(split_whitespace("Va  !\n") == Tokens{"Va", "!"});
  CHECK(split_whitespace("  a\tb\r\nc ") == Tokens{"a", "b", "c"});
  CHECK(split_whitespace("").empty());
  CHECK(split_whitespace(" \t ").empty());
  CHECK(attn::data::join(split_whitespace("le chat  noir")) == "le chat noir");
}

TEST_CASE("character tokenizer keeps UTF-8 characters whole") {
  using attn::data::split_chars;
  CHECK(split_chars("été 1") == Tokens{"é", "t", "é", " ", "1"});
  CHECK(split_chars("a€b") == Tokens{"a", "€", "b"});     // 3-byte character
  CHECK(split_chars("😀!") == Tokens{"😀", "!"});         // 4-byte character
  CHECK(split_chars("").empty());
  const std::string text = "Ça va? Très bien.";
  CHECK(attn::data::join(split_chars(text), "") == text);
  // Bytes that are not UTF-8 are kept one by one, never lost.
  const std::string bad = std::string("a") + char(0xC3) + "b" + char(0xFF);
  CHECK(split_chars(bad).size() == 4);
  CHECK(attn::data::join(split_chars(bad), "") == bad);
  CHECK(attn::data::is_valid_utf8(text));
  CHECK_FALSE(attn::data::is_valid_utf8(bad));
  CHECK_FALSE(attn::data::is_valid_utf8(std::string("\xE2\x82", 2)));  // truncated €
}

TEST_CASE("a character vocabulary round-trips a French sentence") {
  const std::string text = "où est la gare ?";
  const Tokens chars = attn::data::split_chars(text);
  Vocab v = Vocab::build({chars});
  CHECK(attn::data::join(v.decode(v.encode(chars, true)), "") == text);
  CHECK(v.size() == 4 + 11);  // o ù ' ' e s t l a g r ?
}
