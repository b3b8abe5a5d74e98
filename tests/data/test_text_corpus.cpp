// Plain text for a language model (data/text_corpus.hpp): words cut at blanks, characters as UTF-8
// code points, <eos> after each line with a sentence, the contiguous train/valid/test split, and text
// made from tokens again.
#include "../helpers.hpp"

#include "data/text_corpus.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>


using attn::data::Tokens;
using attn::data::TextUnit;
namespace data = attn::data;

TEST_CASE("unit names read back; another name is refused by name") {
  for (TextUnit u : {TextUnit::Words, TextUnit::Characters}) CHECK(data::text_unit(data::unit_name(u)) == u);
  CHECK(data::unit_name(TextUnit::Words) == "words");
  CHECK(data::unit_name(TextUnit::Characters) == "characters");
  CHECK_THROWS_WITH_SUBSTR(data::text_unit("bytes"), attn::ValueError, "'bytes' is not a unit of text");
}

TEST_CASE("line_tokens, words: runs of non-blank bytes; space, TAB, vertical tab and form feed are blanks") {
  CHECK(data::line_tokens("the cat sat", TextUnit::Words) == Tokens{"the", "cat", "sat"});
  CHECK(data::line_tokens("  the\t\tcat \v\fsat\t", TextUnit::Words) == Tokens{"the", "cat", "sat"});
  CHECK(data::line_tokens("a,b  c.", TextUnit::Words) == Tokens{"a,b", "c."});  // punctuation stays with its word
  CHECK(data::line_tokens("é€ 😀", TextUnit::Words) == Tokens{"é€", "😀"});
  CHECK(data::line_tokens(" \t ", TextUnit::Words).empty());
  CHECK(data::line_tokens("", TextUnit::Words).empty());
}

TEST_CASE("line_tokens, characters: one token per code point, its UTF-8 bytes kept together") {
  const Tokens t = data::line_tokens("é€😀", TextUnit::Characters);
  REQUIRE(t.size() == 3);
  CHECK(t[0] == "\xC3\xA9");          // U+00E9: 2 bytes
  CHECK(t[1] == "\xE2\x82\xAC");      // U+20AC: 3 bytes
  CHECK(t[2] == "\xF0\x9F\x98\x80");  // U+1F600: 4 bytes
  CHECK(t[0].size() == 2);
  CHECK(t[1].size() == 3);
  CHECK(t[2].size() == 4);
  // Blanks are characters too.
  CHECK(data::line_tokens("a b\t", TextUnit::Characters) == Tokens{"a", " ", "b", "\t"});
  CHECK(data::line_tokens("", TextUnit::Characters).empty());
}

TEST_CASE("line_tokens, characters: a line that is not UTF-8 is a ValueError") {
  for (const std::string& bad : {std::string("ab\xFF"), std::string("\xC3"), std::string("x\xE2\x82"),
                                std::string("\x80x"), std::string("\xF0\x9F\x98")}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_SUBSTR(data::line_tokens(bad, TextUnit::Characters), attn::ValueError,
                             "line_tokens: the line is not valid UTF-8");
  }
}

namespace {

// Runs line_tokens(line, Characters) in a child process with a 2-second alarm and 512 MB of memory:
// 0 if it threw ValueError, 1 if it returned, 2 for another exception, -signal if it was killed.
int characters_in_child(const std::string& line) {
  const pid_t pid = fork();
  if (pid == 0) {
    rlimit mem{512UL << 20, 512UL << 20};
    setrlimit(RLIMIT_AS, &mem);
    alarm(2);
    int code = 1;
    try {
      (void)data::line_tokens(line, TextUnit::Characters);
    } catch (const attn::ValueError&) {
      code = 0;
    } catch (...) {
      code = 2;
    }
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

}  // namespace

// is_valid_utf8 (data/vocab.cpp) takes the lead bytes 0xC0, 0xC1 (overlong 2-byte forms) and 0xF5..0xF7
// (beyond U+10FFFF) as valid: line_tokens must refuse them itself. Run in a child with an alarm and a memory
// limit, since the bug this is for looped forever pushing empty tokens.
TEST_CASE("line_tokens, characters: an overlong lead byte or one beyond U+10FFFF is a ValueError, not a hang") {
  for (const std::string& bad : {std::string("\xC0\xAF"), std::string("a\xC1\xBF"), std::string("\xF5\x80\x80\x80")}) {
    CAPTURE(bad);
    CHECK(characters_in_child(bad) == 0);
  }
}

TEST_CASE("text_stream: each line with a sentence followed by <eos>; lines of blanks give nothing") {
  const std::vector<std::string> lines = {"the cat", "", " \t ", "sat", "\v"};
  CHECK(data::text_stream(lines, TextUnit::Words) == Tokens{"the", "cat", "<eos>", "sat", "<eos>"});
  CHECK(data::text_stream(lines, TextUnit::Characters) ==
        Tokens{"t", "h", "e", " ", "c", "a", "t", "<eos>", "s", "a", "t", "<eos>"});
  CHECK(data::text_stream({"", "  "}, TextUnit::Words).empty());
  CHECK(data::text_stream({}, TextUnit::Characters).empty());
}

namespace {

// Lines "w0", "w1", ... with blank lines between some of them.
std::vector<std::string> numbered_lines(std::size_t n) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < n; ++i) {
    lines.push_back("w" + std::to_string(i) + " x");
    if (i % 3 == 0) lines.push_back(i % 2 ? "" : " \t");
  }
  return lines;
}

Tokens stream_of(std::size_t from, std::size_t to) {
  Tokens out;
  for (std::size_t i = from; i < to; ++i) out.insert(out.end(), {"w" + std::to_string(i), "x", "<eos>"});
  return out;
}

}  // namespace

TEST_CASE("split_text: the last ceil(test * n) lines test, the ceil(valid * n) before them valid, in order") {
  const std::vector<std::string> lines = numbered_lines(10);  // 10 sentences, 4 blank lines
  SUBCASE("fractions that are not whole numbers of lines round up") {
    const data::TextSplit s = data::split_text(lines, TextUnit::Words, 0.15, 0.25);  // 1.5 -> 2, 2.5 -> 3
    CHECK(s.train_lines == 5);
    CHECK(s.valid_lines == 2);
    CHECK(s.test_lines == 3);
    CHECK(s.train == stream_of(0, 5));
    CHECK(s.valid == stream_of(5, 7));
    CHECK(s.test == stream_of(7, 10));
  }
  SUBCASE("whole numbers of lines stay as they are") {
    const data::TextSplit s = data::split_text(lines, TextUnit::Words, 0.1, 0.2);
    CHECK(s.train_lines == 7);
    CHECK(s.valid_lines == 1);
    CHECK(s.test_lines == 2);
    CHECK(s.train == stream_of(0, 7));
    CHECK(s.valid == stream_of(7, 8));
    CHECK(s.test == stream_of(8, 10));
  }
  SUBCASE("a fraction of 0 is an empty part") {
    const data::TextSplit s = data::split_text(lines, TextUnit::Words, 0.0, 0.01);  // 0.1 line -> 1
    CHECK(s.train_lines == 9);
    CHECK(s.valid_lines == 0);
    CHECK(s.test_lines == 1);
    CHECK(s.valid.empty());
    CHECK(s.test == stream_of(9, 10));
    const data::TextSplit all = data::split_text(lines, TextUnit::Words, 0.0, 0.0);
    CHECK(all.train == stream_of(0, 10));
    CHECK(all.train_lines == 10);
    CHECK(all.valid.empty());
    CHECK(all.test.empty());
  }
  SUBCASE("characters: the same lines, cut into characters") {
    const data::TextSplit s = data::split_text({"ab", "", "é", "c d"}, TextUnit::Characters, 0.3, 0.3);
    CHECK(s.train == Tokens{"a", "b", "<eos>"});
    CHECK(s.valid == Tokens{"é", "<eos>"});
    CHECK(s.test == Tokens{"c", " ", "d", "<eos>"});
  }
}

// ceil(f * n) in doubles: 0.07 * 100 = 7.000000000000001, which must hold out 7 test lines of 100, not 8
// (also 0.14 * 50, 0.28 * 25, 0.55 * 100, 0.56 * 25, ...).
TEST_CASE("split_text: a fraction that is a whole number of lines takes exactly that many") {
  const std::vector<std::string> lines = numbered_lines(100);
  const data::TextSplit s = data::split_text(lines, TextUnit::Words, 0.0, 0.07);
  CHECK(s.test_lines == 7);
  CHECK(s.train_lines == 93);
  const data::TextSplit t = data::split_text(numbered_lines(50), TextUnit::Words, 0.14, 0.0);
  CHECK(t.valid_lines == 7);
}

TEST_CASE("split_text: bad fractions and too few lines are ValueErrors") {
  const std::vector<std::string> lines = numbered_lines(10);
  for (auto [v, t] : std::vector<std::pair<double, double>>{
           {-0.1, 0.1}, {0.1, -0.1}, {1.0, 0.0}, {0.0, 1.0}, {0.5, 0.5}, {0.6, 0.7}, {std::nan(""), 0.1}, {0.1, std::nan("")}}) {
    CAPTURE(v);
    CAPTURE(t);
    CHECK_THROWS_WITH_SUBSTR(data::split_text(lines, TextUnit::Words, v, t), attn::ValueError,
                             "split_text: the validation and test fractions must each be in [0, 1) and sum below 1");
  }
  // 2 sentences (the blank lines do not count): 1 valid + 1 test leave no training line.
  CHECK_THROWS_WITH_SUBSTR(data::split_text({"a", "", "b", " "}, TextUnit::Words, 0.1, 0.1), attn::ValueError,
                           "split_text: 2 lines with a sentence are too few");
  CHECK_THROWS_WITH_SUBSTR(data::split_text({"", " "}, TextUnit::Words, 0.0, 0.0), attn::ValueError,
                           "split_text: 0 lines with a sentence are too few");
  // 0.45 + 0.45 of 10 lines: 5 + 5 held out.
  CHECK_THROWS_WITH_SUBSTR(data::split_text(lines, TextUnit::Words, 0.45, 0.45), attn::ValueError, "too few");
  // 3 sentences are enough for one line in each part.
  const data::TextSplit s = data::split_text({"a", "b", "c"}, TextUnit::Words, 0.1, 0.1);
  CHECK(s.train == Tokens{"a", "<eos>"});
  CHECK(s.valid == Tokens{"b", "<eos>"});
  CHECK(s.test == Tokens{"c", "<eos>"});
}

TEST_CASE("tokens_text: words joined by spaces, characters as they are, <eos> a line end; a round trip") {
  CHECK(data::tokens_text({"the", "cat", "<eos>", "sat", "<eos>"}, TextUnit::Words) == "the cat\nsat\n");
  CHECK(data::tokens_text({"the", "cat"}, TextUnit::Words) == "the cat");
  CHECK(data::tokens_text({"a", " ", "b", "<eos>", "é", "<eos>"}, TextUnit::Characters) == "a b\né\n");
  CHECK(data::tokens_text({}, TextUnit::Words).empty());
  // Text -> tokens -> text: characters give the lines back byte for byte; words with single spaces.
  const std::vector<std::string> lines = {"le café coûte 2 €", "😀  x\ty", "", "fin"};
  CHECK(data::tokens_text(data::text_stream(lines, TextUnit::Characters), TextUnit::Characters) ==
        "le café coûte 2 €\n😀  x\ty\nfin\n");
  CHECK(data::tokens_text(data::text_stream(lines, TextUnit::Words), TextUnit::Words) ==
        "le café coûte 2 €\n😀 x y\nfin\n");
  // ... and the text read again gives the same tokens.
  for (TextUnit u : {TextUnit::Words, TextUnit::Characters}) {
    const Tokens t = data::text_stream(lines, u);
    std::vector<std::string> again;
    const std::string text = data::tokens_text(t, u);
    std::size_t start = 0;
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') again.push_back(text.substr(start, i - start)), start = i + 1;
    CHECK(data::text_stream(again, u) == t);
  }
}
