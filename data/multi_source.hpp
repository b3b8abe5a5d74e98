// Data for translation from several sources (chapter 17): the same English message with
// its translations into two languages, from two gettext corpora (gettext.hpp), and the
// packed row that carries several source sentences to one model.
//
//   GettextCorpus fr = gettext_corpus(mo_files(dir, "fr")), de = gettext_corpus(mo_files(dir, "de"));
//   std::vector<TwoTranslations> t = join_translations(fr.pairs, de.pairs);
//   t[0] == {"Permission denied", "Autorisation refusée", "Zugriff verweigert"}
//
//   pack_sources({{"file", "not", "found"}, {"datei", "nicht", "gefunden"}})
//     == {"file", "not", "found", "<sep>", "datei", "nicht", "gefunden"}
//
// Packed, an English+German -> French example is an ordinary Example (src, tgt), so the
// course's batches, trainer, decoders and BLEU take it unchanged; the multi-source model
// (models/multi_source.hpp) splits the row at <sep>.
#pragma once

#include "example.hpp"

#include <string>
#include <utility>
#include <vector>

namespace attn::data {

// The token between two packed sources.
inline const std::string kSeparator = "<sep>";

// One source message and its translation into two languages.
struct TwoTranslations {
  std::string source, first, second;
};

// The messages whose source side is in both corpora (the same text exactly), with both
// translations, in the order of `first`. Each corpus must list a source at most once, as
// gettext_corpus does; a repeated source is a ValueError naming it.
std::vector<TwoTranslations> join_translations(const std::vector<std::pair<std::string, std::string>>& first,
                                               const std::vector<std::pair<std::string, std::string>>& second);

// The sources one after another, kSeparator between two. An empty source, or a token equal
// to kSeparator inside one, is a ValueError (the row could not be split again).
Tokens pack_sources(const std::vector<Tokens>& sources);

}  // namespace attn::data
