// The .mo reader and the corpus built from catalogs, on .mo files written here,
// byte by byte, in both byte orders.
#include "../helpers.hpp"

#include "data/gettext.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace attn::data;

namespace {

// A .mo file of (original, translation) pairs, as msgfmt lays it out: header,
// the two tables of (length, offset), then the NUL-terminated strings.
std::string make_mo(const std::vector<std::pair<std::string, std::string>>& entries, bool big_endian = false) {
  std::string out;
  auto u32 = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out += static_cast<char>(big_endian ? (v >> (8 * (3 - i))) & 0xFF : (v >> (8 * i)) & 0xFF);
  };
  const auto n = static_cast<std::uint32_t>(entries.size());
  const std::uint32_t originals = 28, translations = originals + 8 * n;
  std::uint32_t offset = translations + 8 * n;
  u32(0x950412de);
  u32(0);
  u32(n);
  u32(originals);
  u32(translations);
  u32(0);  // no hash table
  u32(0);
  std::string strings;
  for (int side = 0; side < 2; ++side)
    for (const auto& e : entries) {
      const std::string& s = side == 0 ? e.first : e.second;
      u32(static_cast<std::uint32_t>(s.size()));
      u32(offset);
      offset += static_cast<std::uint32_t>(s.size()) + 1;
      strings += s + '\0';
    }
  return out + strings;
}

const std::string header = "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n > 1);\n";

// A temporary locale folder: <dir>/fr/LC_MESSAGES/<name>.mo
struct LocaleDir {
  std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("attn_test_gettext_" + std::to_string(::getpid()));
  LocaleDir() { std::filesystem::create_directories(root / "fr" / "LC_MESSAGES"); }
  ~LocaleDir() { std::filesystem::remove_all(root); }
  std::string write(const std::string& name, const std::string& bytes) {
    const auto path = root / "fr" / "LC_MESSAGES" / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path.string();
  }
};

}  // namespace

TEST_CASE("parse_mo reads both byte orders, the header, contexts and plurals") {
  const std::vector<std::pair<std::string, std::string>> entries = {
      {"", header},
      {"Permission denied", "Permission refusée"},
      {"menu\x04Open", "Ouvrir"},
      {std::string("%d file\0%d files", 16), std::string("%d fichier\0%d fichiers", 22)},
  };
  for (bool big : {false, true}) {
    CAPTURE(big);
    const MoCatalog c = parse_mo(make_mo(entries, big), "test.mo");
    CHECK(c.charset == "UTF-8");
    CHECK(c.header == header);
    REQUIRE(c.entries.size() == 3);
    CHECK(c.entries[0].msgid == "Permission denied");
    CHECK(c.entries[0].msgstr == std::vector<std::string>{"Permission refusée"});
    CHECK(c.entries[0].context.empty());
    CHECK(c.entries[1].context == "menu");
    CHECK(c.entries[1].msgid == "Open");
    CHECK(c.entries[2].msgid == "%d file");
    CHECK(c.entries[2].msgid_plural == "%d files");
    CHECK(c.entries[2].msgstr == std::vector<std::string>{"%d fichier", "%d fichiers"});
  }
}

TEST_CASE("parse_mo: bad files are IOErrors naming the file and what is wrong") {
  CHECK_THROWS_WITH_AS(parse_mo("abc", "x.mo"), doctest::Contains("x.mo: 3 bytes, too short"), attn::IOError);
  std::string bytes = make_mo({{"a b c", "d e f"}});
  std::string wrong = bytes;
  wrong[0] = 'X';
  CHECK_THROWS_WITH_AS(parse_mo(wrong, "x.mo"), doctest::Contains("not a .mo file (magic number 0x950412"),
                       attn::IOError);
  // Cut inside the strings: the translation runs past the end.
  CHECK_THROWS_WITH_AS(parse_mo(bytes.substr(0, bytes.size() - 3), "x.mo"),
                       doctest::Contains("x.mo: translation entry 0 (5 bytes at"), attn::IOError);
  // Cut inside the tables.
  CHECK_THROWS_WITH_AS(parse_mo(bytes.substr(0, 30), "x.mo"), doctest::Contains("past the end of the file"),
                       attn::IOError);
  std::string huge = bytes;
  huge[8] = '\xff';
  huge[9] = '\xff';
  CHECK_THROWS_WITH_AS(parse_mo(huge, "x.mo"), doctest::Contains("strings cannot fit"), attn::IOError);
  CHECK_THROWS_WITH_AS(read_mo("/nonexistent/x.mo"), doctest::Contains("cannot open '/nonexistent/x.mo'"),
                       attn::IOError);
}

TEST_CASE("clean_message: accelerators and label endings go, placeholders and multi-line are rejected") {
  std::string reason;
  CHECK(clean_message("_Open File", reason) == "Open File");
  CHECK(clean_message("Save _As...", reason) == "Save As");
  CHECK(clean_message("&Ouvrir le fichier\xE2\x80\xA6", reason) == "Ouvrir le fichier");
  CHECK(clean_message("Tom && Jerry", reason) == "Tom & Jerry");
  CHECK(clean_message("File name:", reason) == "File name");
  CHECK(clean_message("Cannot open file.\n", reason) == "Cannot open file.");
  CHECK(clean_message("  two   spaces ", reason) == "two spaces");
  CHECK(clean_message("100% done", reason) == "100% done");
  CHECK(clean_message("Fichier\xC2\xA0:", reason) == "Fichier");
  CHECK(reason.empty());
  CHECK(clean_message("cannot open %s", reason).empty());
  CHECK(reason == "format");
  for (const char* format : {"%1$d files", "%(name)s here", "ident : %.*s", "{0} items", "Hello ${USER}", "<b>bold</b> text",
                             "Tom &amp; Jerry"}) {
    CAPTURE(format);
    CHECK(clean_message(format, reason).empty());
    CHECK(reason == "format");
  }
  CHECK(clean_message("Usage:\n  attn train", reason).empty());
  CHECK(reason == "multi-line");
  CHECK(clean_message("Pr_eferences", reason) == "Preferences");
  for (const char* code : {"bfd_mach_o_symtab: cannot load", "-d, --delete USER remove USER", "use --force to overwrite"}) {
    CAPTURE(code);
    CHECK(clean_message(code, reason).empty());
    CHECK(reason == "code");
  }
  CHECK(clean_message("a\tb", reason).empty());
  CHECK(reason == "not text");
  CHECK(clean_message("?? !!", reason).empty());
  CHECK(reason == "not text");
  CHECK(clean_message("caf\xE9", reason).empty());
  CHECK(reason == "not UTF-8");
}

TEST_CASE("gettext_corpus: sorted catalogs, filters counted by reason, duplicates dropped") {
  LocaleDir dir;
  dir.write("b.mo", make_mo({{"", header},
                             {"Open the file", "Ouvrir le fichier"},            // a duplicate of a.mo's, in other case
                             {"Close the window now", "Fermer la fenêtre maintenant"}}));
  dir.write("a.mo", make_mo({{"", header},
                             {"open the File", "ouvrir le fichier"},
                             {"Permission denied", "Permission refusée"},          // 2 words: too short
                             {"cannot open %s", "impossible d'ouvrir %s"},         // format
                             {std::string("a b c\0a b cs", 12), std::string("x\0y", 3)},  // plural
                             {"Usage:\nthis and that", "Utilisation :\nceci et cela"},  // multi-line
                             {"GNU General Public License", "GNU General Public License"},  // not translated
                             {"one two three four five six", "un deux trois quatre cinq six sept huit neuf dix onze "
                                                             "douze treize"}}));  // 13 words: too long
  dir.write("latin1.mo", make_mo({{"", "Content-Type: text/plain; charset=ISO-8859-1\n"}, {"the red car", "la voiture \xE9" "carlate"}}));
  dir.write("koi8.mo", make_mo({{"", "Content-Type: text/plain; charset=KOI8-R\n"}, {"a b c", "d e f"}}));
  dir.write("broken.mo", "not a catalog at all");
  dir.write("notes.txt", "ignored");
  const std::vector<std::string> files = mo_files(dir.root.string(), "fr");
  REQUIRE(files.size() == 5);
  CHECK(std::filesystem::path(files[0]).filename() == "a.mo");
  CHECK(std::filesystem::path(files[4]).filename() == "latin1.mo");
  CHECK(mo_files(dir.root.string(), "xx").empty());

  const GettextCorpus c = gettext_corpus(files);
  CHECK(c.catalogs == 3);
  CHECK(c.entries == 10);
  REQUIRE(c.skipped_files.size() == 2);
  CHECK(c.skipped_files[0].find("broken.mo") != std::string::npos);
  CHECK(c.skipped_files[1].find("koi8.mo: charset KOI8-R, neither UTF-8 nor ISO-8859-1") != std::string::npos);
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  CHECK(c.pairs == Pairs{{"open the File", "ouvrir le fichier"}, {"Close the window now", "Fermer la fenêtre maintenant"},
                         {"the red car", "la voiture écarlate"}});
  CHECK(c.dropped == std::map<std::string, std::size_t>{{"duplicate", 1}, {"format", 1}, {"multi-line", 1},
                                                         {"plural", 1}, {"too long", 1}, {"too short", 1},
                                                         {"untranslated", 1}});
  GettextOptions two;
  two.min_words = 2;
  CHECK(gettext_corpus(files, two).pairs.size() == 4);
  two.max_words = 1;
  CHECK_THROWS_AS(gettext_corpus(files, two), attn::ValueError);
}
