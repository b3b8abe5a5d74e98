// A text file read once (data/text_file.hpp): its lines (a byte-order mark and CR LF ends dropped), the
// checksum of exactly its bytes, the progress share, and each refusal naming the file, the line and what
// is wrong: a folder, a missing file, UTF-16/UTF-32, CR-only line ends, a word of over 4096 bytes, bytes
// that are not UTF-8, control characters, attn's own marks.
#include "../helpers.hpp"

#include "data/text_file.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

namespace data = attn::data;
using attn::data::TextUnit;

namespace {

std::string write(const std::string& name, const std::string& bytes) {
  const std::string dir = std::filesystem::temp_directory_path() / ("attn_text_file_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace

TEST_CASE("read_text_file: the lines without their ends, the first line's byte-order mark dropped") {
  const std::string path = write("lines.txt", "\xEF\xBB\xBFthe cat\r\nsat\n\n  on\tit\n");
  const data::TextFile f = data::read_text_file(path, TextUnit::Words);
  CHECK(f.lines == std::vector<std::string>{"the cat", "sat", "", "  on\tit"});
  // No final newline: the last line is read all the same.
  CHECK(data::read_text_file(write("open.txt", "a\nb"), TextUnit::Words).lines == std::vector<std::string>{"a", "b"});
  CHECK(data::read_text_file(write("empty.txt", ""), TextUnit::Words).lines.empty());
}

TEST_CASE("read_text_file: a pipe (attn score <(zcat book.gz)) is read whole, with the checksum of its bytes") {
  const std::string path = write("pipe.placeholder", "");
  const std::string fifo = path + ".fifo";
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&fifo] { std::ofstream(fifo, std::ios::binary) << "a b\r\nc\n"; });
  std::atomic<double> fraction{0.0};
  const data::TextFile f = data::read_text_file(fifo, TextUnit::Words, &fraction);
  writer.join();
  std::filesystem::remove(fifo);
  CHECK(f.lines == std::vector<std::string>{"a b", "c"});
  CHECK(f.checksum == "5e2e7da3f1096648");  // the regular file's below
  CHECK(fraction.load() == 1.0);
}

TEST_CASE("read_text_file: the checksum is FNV-1a 64 of every byte read, as a run records it") {
  // Computed by hand (Python) for these bytes; the empty file's is FNV's offset basis.
  CHECK(data::read_text_file(write("sum.txt", "a b\r\nc\n"), TextUnit::Words).checksum == "5e2e7da3f1096648");
  CHECK(data::read_text_file(write("none.txt", ""), TextUnit::Words).checksum == "cbf29ce484222325");
  CHECK(data::hex64(data::fnv1a64("a b\r\nc\n", 7)) == "5e2e7da3f1096648");
  // Chained over pieces as over the whole.
  CHECK(data::fnv1a64("c\n", 2, data::fnv1a64("a b\r\n", 5)) == data::fnv1a64("a b\r\nc\n", 7));
  // A file larger than one read buffer: every byte counts (one changed at the end changes the sum).
  std::string big(200000, 'x');
  big[1000] = '\n';
  const std::string a = data::read_text_file(write("big.txt", big), TextUnit::Characters).checksum;
  big.back() = 'y';
  const std::string b = data::read_text_file(write("big.txt", big), TextUnit::Characters).checksum;
  CHECK(a != b);
  CHECK(b == data::hex64(data::fnv1a64(big.data(), big.size())));
}

TEST_CASE("read_text_file: the progress share ends at 1") {
  std::atomic<double> fraction{0.0};
  (void)data::read_text_file(write("p.txt", std::string(300000, 'a')), TextUnit::Characters, &fraction);
  CHECK(fraction.load() == 1.0);
}

TEST_CASE("read_text_file refuses a folder and a missing file by name") {
  const std::string dir = std::filesystem::path(write("x.txt", "")).parent_path();
  CHECK_THROWS_WITH_SUBSTR(data::read_text_file(dir, TextUnit::Words), attn::IOError, dir + ": is a folder, not a text file");
  CHECK_THROWS_WITH_SUBSTR(data::read_text_file(dir + "/missing.txt", TextUnit::Words), attn::IOError,
                           "cannot read the text file '" + dir + "/missing.txt': No such file or directory");
}

TEST_CASE("read_text_file refuses UTF-16, UTF-32 and CR-only line ends by what they are, with the command that converts") {
  std::string utf16le;
  for (char c : std::string("the cat sat on the mat\n")) utf16le += std::string(1, c) + '\0';
  CHECK_THROWS_WITH_SUBSTR(data::read_text_file(write("le.txt", utf16le), TextUnit::Words), attn::IOError,
                           "the file is UTF-16 text (every other byte is NUL); attn reads UTF-8: convert it first, e.g. iconv -f UTF-16LE");
  CHECK_THROWS_WITH_SUBSTR(data::read_text_file(write("bom.txt", "\xFF\xFE" "a\0"), TextUnit::Words), attn::IOError,
                           "UTF-16 text (it begins with a byte-order mark)");
  CHECK_THROWS_WITH_SUBSTR(data::read_text_file(write("b32.txt", std::string("\xFF\xFE\0\0a\0\0\0", 8)), TextUnit::Words),
                           attn::IOError, "UTF-32 text");
  CHECK_THROWS_WITH_SUBSTR(data::read_text_file(write("mac.txt", "one\rtwo\rthree\r"), TextUnit::Characters), attn::IOError,
                           "its lines end with CR alone");
  // A name with a blank is quoted in the command.
  CHECK_THROWS_WITH_SUBSTR(data::read_text_file(write("my mac.txt", "one\rtwo\r"), TextUnit::Words), attn::IOError,
                           "tr '\\r' '\\n' < '");
}

TEST_CASE("read_text_file: a word of over 4096 bytes is refused at its line for words, read for characters") {
  const std::string text = "short line\n" + std::string(data::kMaxWordBytes + 1, 'w') + "\n";
  const std::string path = write("long.txt", text);
  CHECK_THROWS_WITH_SUBSTR(data::read_text_file(path, TextUnit::Words), attn::IOError,
                           path + ":2: holds a word of over 4096 bytes without a blank");
  CHECK(data::read_text_file(path, TextUnit::Characters).lines.size() == 2);
  // 4096 bytes is a word still.
  CHECK(data::read_text_file(write("edge.txt", std::string(data::kMaxWordBytes, 'w')), TextUnit::Words).lines.size() == 1);
}

TEST_CASE("read_text_file refuses bytes that are not UTF-8, control characters and attn's marks, at their line") {
  const std::string bad = write("bad.txt", "fine\nal\xE9 bad\n");
  CHECK_THROWS_WITH_SUBSTR(data::read_text_file(bad, TextUnit::Words), attn::IOError, bad + ":2: not valid UTF-8 text");
  const std::string esc = write("esc.txt", "a\nb\nc \x1b[31m red\n");
  CHECK_THROWS_WITH_SUBSTR(data::read_text_file(esc, TextUnit::Characters), attn::IOError,
                           esc + ":3: holds ESC (\\u001b, a terminal escape); a text to learn is printable");
  const std::string nul = write("nul.txt", std::string("a\0b\n", 4));
  CHECK_THROWS_WITH_SUBSTR(data::read_text_file(nul, TextUnit::Words), attn::IOError, nul + ":1: holds NUL (\\u0000)");
  // TAB, vertical tab and form feed are blanks, not refused.
  CHECK(data::read_text_file(write("blanks.txt", "a\tb\vc\fd\n"), TextUnit::Words).lines.size() == 1);
  const std::string marks = write("marks.txt", "a b\nthe <eos> end\n");
  CHECK_THROWS_WITH_SUBSTR(data::read_text_file(marks, TextUnit::Words), attn::IOError,
                           marks + ":2: holds the word <eos>, one of attn's marks");
  // As characters, "<eos>" is five characters of text.
  CHECK(data::read_text_file(marks, TextUnit::Characters).lines.size() == 2);
  CHECK(data::read_text_file(write("unk.txt", "an <unk> stays\n"), TextUnit::Words).lines.size() == 1);
}

TEST_CASE("control_character names the first control character; valid_utf8 is JSON's test") {
  CHECK(data::control_character("plain text é") == "");
  CHECK(data::control_character("a\tb") == "a TAB");
  CHECK(data::control_character("a\x7f") == "the control character 0x7f");
  CHECK(data::control_character("\x01\x1b") == "the control character 0x01");
  CHECK(data::valid_utf8("é€😀"));
  CHECK_FALSE(data::valid_utf8("\xC0\xAF"));   // an overlong "/"
  CHECK_FALSE(data::valid_utf8("\xED\xA0\x80"));  // a surrogate
  CHECK(data::shell_word("runs/a") == "runs/a");
  CHECK(data::shell_word("my runs/it's") == "'my runs/it'\\''s'");
}
