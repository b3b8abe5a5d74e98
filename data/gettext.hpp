// A parallel corpus every Debian machine has: the gettext message catalogs in
// /usr/share/locale/<lang>/LC_MESSAGES/*.mo map each program's English messages
// (msgid) to their translation (msgstr).
//
//   MoCatalog c = read_mo("/usr/share/locale/fr/LC_MESSAGES/coreutils.mo");
//   c.entries[7].msgid == "cannot open %s for reading", c.entries[7].msgstr[0] == "..."
//
//   GettextCorpus corpus = gettext_corpus(mo_files("/usr/share/locale", "fr"));
//   corpus.pairs[0] == {"Permission denied", "Autorisation refusée"}
//
// The .mo format (GNU gettext manual, "The Format of GNU MO Files"), all
// numbers 32-bit in the byte order the magic number shows:
//   0  magic 0x950412de     4  revision (major 0 or 1)
//   8  N, the number of strings
//   12 O, offset of the table of originals: N (length, offset) pairs
//   16 T, offset of the table of translations: N (length, offset) pairs
// Strings are NUL-terminated, their length not counting the NUL. An entry with
// a context is "context\x04msgid"; a plural entry is "singular\0plural" with
// translations "form0\0form1\0...". The entry with an empty msgid is the header
// (its "Content-Type: text/plain; charset=..." line names the encoding).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace attn::data {

struct MoEntry {
  std::string context;               // "" if none
  std::string msgid;                 // the English message (the singular, for plurals)
  std::string msgid_plural;          // "" unless a plural entry
  std::vector<std::string> msgstr;   // one translation, or one per plural form
};

struct MoCatalog {
  std::string header;                // the translation of "" (metadata)
  std::string charset;               // from the header; "" if it names none
  std::vector<MoEntry> entries;      // the header excluded, in file order
};

// Parses a .mo file's bytes; `name` is what error messages call it. A short or
// truncated file, a wrong magic number or an offset past the end is an IOError
// naming the file, the table and the entry.
MoCatalog parse_mo(const std::string& bytes, const std::string& name);
MoCatalog read_mo(const std::string& path);

// The .mo files of a language, sorted by name: <locale_dir>/<lang>/LC_MESSAGES/*.mo
// (none if the folder is missing).
std::vector<std::string> mo_files(const std::string& locale_dir, const std::string& lang);

struct GettextOptions {
  std::size_t min_words = 3;    // both sides, after cleaning
  std::size_t max_words = 12;
};

// English -> translation pairs, cleaned as clean_message says, filtered and
// deduplicated (a source with several translations, or differing only in case,
// keeps the first in file order), in the order first seen. Plural entries are
// dropped; an entry with a context counts as any other (the context is dropped).
struct GettextCorpus {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::size_t catalogs = 0, entries = 0;     // read, the headers excluded
  std::map<std::string, std::size_t> dropped;  // reason -> entries dropped
  std::vector<std::string> skipped_files;    // "file: why" for catalogs that could not be used
};

// A message as a sentence of plain words, or "" with `reason` set when it is no
// such sentence. Kept: the text with keyboard accelerators removed ("_Open",
// "&Open" -> "Open"; "&&" -> "&"), a trailing ":" or "..." dropped, blanks
// (no-break spaces included) collapsed. Rejected, by reason:
//   "multi-line"   a newline inside (help texts, usage screens)
//   "format"       printf or brace placeholders (%s, %1$d, %(name)s, {0}, ${var}) or markup (<b>, &amp;)
//   "code"         identifiers (two or more "_"), command-line options ("-d", "--delete"), "|"
//   "not text"     control characters, tabs, backslashes, or no letter at all
// A single "_" is taken for an accelerator even inside a word ("O_pen"), so an
// identifier with one underscore ("max_size") loses it.
//   "not UTF-8"    bytes that are not UTF-8
std::string clean_message(const std::string& message, std::string& reason);

// Reads the catalogs in order; ISO-8859-1 ones are converted to UTF-8. A catalog
// that cannot be read, or in another charset, is skipped and listed, not fatal.
GettextCorpus gettext_corpus(const std::vector<std::string>& files, const GettextOptions& options = {});

}  // namespace attn::data
