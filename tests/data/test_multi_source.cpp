// data/multi_source.hpp: joining two gettext corpora on their English side, and packing
// several sources into one row.
#include "../helpers.hpp"

#include "data/multi_source.hpp"

using attn::data::TwoTranslations;

TEST_CASE("join_translations keeps the sources both corpora have, in the first corpus's order") {
  const std::vector<std::pair<std::string, std::string>> fr{
      {"File not found", "Fichier introuvable"}, {"Permission denied", "Permission refusée"}, {"Quit", "Quitter"}};
  const std::vector<std::pair<std::string, std::string>> de{
      {"Quit", "Beenden"}, {"Permission denied", "Zugriff verweigert"}, {"Save as", "Speichern unter"}};
  const std::vector<TwoTranslations> joined = attn::data::join_translations(fr, de);
  REQUIRE(joined.size() == 2);
  CHECK(joined[0].source == "Permission denied");
  CHECK(joined[0].first == "Permission refusée");
  CHECK(joined[0].second == "Zugriff verweigert");
  CHECK(joined[1].source == "Quit");
  CHECK(joined[1].second == "Beenden");
  CHECK(attn::data::join_translations(fr, {}).empty());
  CHECK(attn::data::join_translations({{"quit", "quitter"}}, de).empty());  // the same text exactly, case included
}

TEST_CASE("join_translations: a source listed twice is named") {
  CHECK_THROWS_WITH_SUBSTR(attn::data::join_translations({{"Quit", "a"}}, {{"Quit", "b"}, {"Open", "c"}, {"Quit", "d"}}),
                           attn::ValueError, "the second corpus lists the source \"Quit\" twice (pairs 0 and 2)");
  CHECK_THROWS_WITH_SUBSTR(attn::data::join_translations({{"Quit", "a"}, {"Quit", "b"}}, {}), attn::ValueError,
                           "the first corpus");
}

TEST_CASE("pack_sources puts <sep> between the sources, and refuses what could not be split again") {
  using attn::data::Tokens;
  CHECK(attn::data::pack_sources({{"file", "not", "found"}, {"datei", "nicht", "gefunden"}}) ==
        Tokens{"file", "not", "found", "<sep>", "datei", "nicht", "gefunden"});
  CHECK(attn::data::pack_sources({{"quit"}}) == Tokens{"quit"});
  CHECK(attn::data::pack_sources({{"a"}, {"b"}, {"c"}}) == Tokens{"a", "<sep>", "b", "<sep>", "c"});
  CHECK_THROWS_WITH_SUBSTR(attn::data::pack_sources({{"a"}, {}}), attn::ValueError, "source 1 is empty");
  CHECK_THROWS_WITH_SUBSTR(attn::data::pack_sources({}), attn::ValueError, "no sources to pack");
  CHECK_THROWS_WITH_SUBSTR(attn::data::pack_sources({{"a", "<sep>"}, {"b"}}), attn::ValueError,
                           "source 0 holds the separator token <sep>");
}
