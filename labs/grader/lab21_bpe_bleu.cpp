// The checks of lab21_bpe_bleu.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab21_bpe_bleu.hpp"

#include "labs/grader/grader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <set>

namespace lab {
namespace bpe_bleu {

namespace {

namespace hint {
const char* learn =
    "Algorithm 1: every word as its characters and \"</w>\"; count every adjacent pair inside each word, as often as "
    "the word occurs; merge the most frequent pair everywhere, left to right (a a a -> aa a); count again; ties go "
    "to the pair first in string order (std::pair's <, the order a std::map iterates in)";
const char* weighted =
    "a pair's count is the sum, over the words that hold it, of the word's frequency times the times it occurs in "
    "the word: a word that occurs 9 times counts 9 times";
const char* ties =
    "among pairs of equal count take the first in string order: compare the first symbols, then the second, byte by "
    "byte (std::pair<std::string, std::string>'s <; \"</w>\" begins with '<', which sorts before the letters)";
const char* overlap =
    "a a a holds (a, a) at two positions, so it counts twice (Algorithm 1's get_stats); merging goes left to right "
    "and skips the symbol a merge used: a a a -> aa a, a a a a -> aa aa";
const char* boundary =
    "count and merge inside each word only: \"</w>\" ends a word and no pair begins with it; stop when no word has two "
    "symbols left, even before n merges";
const char* characters =
    "split a word into characters, not bytes: attn::data::split_chars(word) (é is one character of two bytes in UTF-8)";
const char* random_learn =
    "the same rules on random word counts: the checks before name the usual mistakes";
const char* apply =
    "a new word starts as its characters and \"</w>\"; repeat: of the word's adjacent pairs, take the one learned "
    "earliest (lowest index in merges) and merge it everywhere in the word, left to right; stop when no adjacent pair "
    "is a merge";
const char* counts =
    "for n = 1..4: totals[n-1] = the hypothesis's n-grams (every occurrence); matches[n-1] = the sum over its "
    "distinct n-grams of min(count in the hypothesis, largest count in any one reference)";
const char* ref_length =
    "r is the length of the reference closest to the hypothesis's length c, the shorter of two at the same distance "
    "(NLTK's closest_ref_length); c the hypothesis's length";
const char* corpus =
    "sum matches, totals, c and r over every sentence first; p_n = matches / totals; BP = 1 if c > r, else "
    "exp(1 - r / c); BLEU = BP exp((log p_1 + log p_2 + log p_3 + log p_4) / 4)";
const char* short_bp =
    "BP = exp(1 - r / c) from the corpus's total lengths, c the hypotheses' and r the closest references'";
const char* long_bp = "a corpus longer than its references pays nothing: BP = 1 when c > r";
const char* zero =
    "a zero p_n makes the geometric mean 0: log 0 = -inf, exp(-inf) = 0 (NLTK returns exp(log(2.2e-308) / 4) times "
    "the rest, about 1e-77; attn returns 0)";
const char* random_bleu = "the same rules on random corpora: the checks before name the usual mistakes";
}  // namespace hint

// ---- the cases, from labs/reference/lab21_bpe_bleu.json (strings: not the tensors of lab::Reference) ----

const nlohmann::json& cases() {
  static const nlohmann::json all = [] {
    const std::string path = Reference::dir() + "/lab21_bpe_bleu.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("lab reference file missing: " + path + " (set ATTN_LABS_REFERENCE_DIR)");
    return nlohmann::json::parse(in).at("cases");
  }();
  return all;
}

const nlohmann::json& case_of(const std::string& name) {
  if (!cases().contains(name)) throw std::runtime_error("lab21_bpe_bleu.json: no case '" + name + "'");
  return cases().at(name);
}

WordCounts words_of(const nlohmann::json& c) {
  WordCounts words;
  for (const auto& entry : c.at("words")) words[entry.at(0).get<std::string>()] = entry.at(1).get<std::int64_t>();
  return words;
}

std::vector<Pair> merges_of(const nlohmann::json& list) {
  std::vector<Pair> merges;
  for (const auto& m : list) merges.push_back({m.at(0).get<std::string>(), m.at(1).get<std::string>()});
  return merges;
}

std::string words_str(const WordCounts& words) {
  std::string out;
  for (const auto& [word, count] : words) out += (out.empty() ? "" : ", ") + word + " " + std::to_string(count);
  return out;
}

std::string pair_str(const Pair& p) { return "(" + p.first + ", " + p.second + ")"; }

std::string merges_str(const std::vector<Pair>& merges) {
  std::string out;
  for (const auto& m : merges) out += (out.empty() ? "" : " ") + pair_str(m);
  return "[" + out + "]";
}

std::string symbols_str(const Symbols& s, const std::string& sep = " ") {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : sep) + x;
  return out;
}

// ---- byte-pair merges, right and with the usual mistakes ----

const std::string eow = attn::data::Bpe::end_of_word;

enum class Learn {
  right, unweighted, stream, overlap_merge, right_to_left, as_text, tie_last, tie_first_met, no_eow, no_recount, bytes,
  overlap_counted_once, glued_eow, first_only, no_skip
};
enum class Apply {
  right, leftmost, latest, no_eow, dropped_eow, library_form, overlap_merge, right_to_left, as_text, bytes,
  stop_at_absent
};

// A word's first symbols: its characters (or bytes), then "</w>" as a symbol of its own, or glued to the last
// character (the paper's worked example writes "r·"), or none.
Symbols initial(const std::string& word, bool bytes, bool mark, bool glued = false) {
  Symbols s;
  if (bytes)
    for (char ch : word) s.push_back(std::string(1, ch));
  else
    s = attn::data::split_chars(word);
  if (mark && glued && !s.empty()) s.back() += eow;
  else if (mark) s.push_back(eow);
  return s;
}

// The symbols joined by spaces and "a b" replaced by "ab" as text, left to right, with no check that "a" and "b"
// are whole symbols (Algorithm 1's regex checks it with (?<!\S) and (?!\S)): "aa b" holds "a b".
Symbols merge_as_text(const Symbols& s, const Pair& pair) {
  std::string text;
  for (const auto& x : s) text += (text.empty() ? "" : " ") + x;
  const std::string from = pair.first + " " + pair.second;
  std::string joined;
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, from.size(), from) == 0) joined += pair.first + pair.second, i += from.size();
    else joined += text[i++];
  }
  Symbols out(1);
  for (char ch : joined) {
    if (ch == ' ') out.emplace_back();
    else out.back() += ch;
  }
  return out;
}

// Every occurrence of `pair` merged: left to right (right), from the right, or each position where it starts
// (overlap: a a a -> aa aa), or as text; or only the first occurrence (first_only), or with the pair's second
// symbol kept as well (no_skip: a b c -> ab b c, the ++i after a merge forgotten).
Symbols merge_with(const Symbols& s, const Pair& pair, bool overlap, bool right_to_left, bool as_text = false,
                   bool first_only = false, bool no_skip = false) {
  if (as_text) return merge_as_text(s, pair);
  auto at = [&](std::size_t i) { return i + 1 < s.size() && s[i] == pair.first && s[i + 1] == pair.second; };
  Symbols out;
  if (right_to_left) {
    for (std::size_t i = s.size(); i-- > 0;) {
      if (i > 0 && at(i - 1)) {
        out.push_back(s[i - 1] + s[i]);
        --i;
      } else {
        out.push_back(s[i]);
      }
    }
    return Symbols(out.rbegin(), out.rend());
  }
  bool merged = false;  // first_only: one occurrence merged already
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (overlap) {  // a symbol that ended a pair is dropped, but one that also starts a pair is merged again
      if (at(i)) out.push_back(s[i] + s[i + 1]);
      else if (!(i > 0 && at(i - 1))) out.push_back(s[i]);
      continue;
    }
    if (at(i) && !(first_only && merged)) {
      out.push_back(s[i] + s[i + 1]);
      merged = true;
      if (!no_skip) ++i;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::vector<Pair> learn(const WordCounts& words, std::size_t n, Learn v) {
  const bool bytes = v == Learn::bytes, mark = v != Learn::no_eow;
  std::vector<std::pair<Symbols, std::int64_t>> vocab;
  if (v == Learn::stream) {  // the corpus as one sequence: every word `count` times, one after the other
    Symbols all;
    for (const auto& [word, count] : words)
      for (std::int64_t k = 0; k < count; ++k)
        for (auto& s : initial(word, false, true)) all.push_back(s);
    vocab.push_back({all, 1});
  } else {
    for (const auto& [word, count] : words) vocab.push_back({initial(word, bytes, mark, v == Learn::glued_eow), count});
  }
  auto count_pairs = [&](std::vector<Pair>& met) {
    std::map<Pair, std::int64_t> pairs;
    for (const auto& [s, count] : vocab) {
      std::map<Pair, std::size_t> free_from;  // overlap_counted_once: where the pair may next be counted
      for (std::size_t i = 0; i + 1 < s.size(); ++i) {
        Pair p{s[i], s[i + 1]};
        if (v == Learn::overlap_counted_once) {
          if (i < free_from[p]) continue;
          free_from[p] = i + 2;
        }
        if (!pairs.count(p)) met.push_back(p);
        pairs[p] += v == Learn::unweighted ? 1 : count;
      }
    }
    return pairs;
  };
  std::vector<Pair> merges;
  std::vector<Pair> met;
  std::map<Pair, std::int64_t> initial_counts = count_pairs(met);
  std::set<Pair> used;
  while (merges.size() < n) {
    met.clear();
    std::map<Pair, std::int64_t> pairs = v == Learn::no_recount ? initial_counts : count_pairs(met);
    if (v == Learn::no_recount) {
      for (const auto& p : used) pairs.erase(p);
      for (const auto& [p, c] : pairs) met.push_back(p);
    }
    if (pairs.empty()) break;
    std::int64_t most = 0;
    for (const auto& [p, c] : pairs) most = std::max(most, c);
    // Ties: the first of the largest count in string order (the map's), the last, or the first met in the words.
    Pair best;
    bool found = false;
    if (v == Learn::tie_first_met) {
      for (const auto& p : met)
        if (!found && pairs.at(p) == most) best = p, found = true;
    } else {
      for (const auto& [p, c] : pairs)
        if (c == most && (!found || v == Learn::tie_last)) best = p, found = true;
    }
    merges.push_back(best);
    used.insert(best);
    for (auto& entry : vocab)
      entry.first = merge_with(entry.first, best, v == Learn::overlap_merge, v == Learn::right_to_left,
                               v == Learn::as_text, v == Learn::first_only, v == Learn::no_skip);
  }
  return merges;
}

// A word's symbols with "</w>" dropped: the last symbol, or the end of the last one.
Symbols without_eow(Symbols s) {
  if (s.empty()) return s;
  if (s.back() == eow) s.pop_back();
  else if (s.back().size() >= eow.size() && s.back().compare(s.back().size() - eow.size(), eow.size(), eow) == 0)
    s.back().resize(s.back().size() - eow.size());
  return s;
}

// The library's form of a word's symbols: "</w>" dropped, "@@" on every piece but the last (Bpe::encode).
Symbols library_form(Symbols s) {
  s = without_eow(s);
  for (std::size_t i = 0; i + 1 < s.size(); ++i) s[i] += attn::data::Bpe::continuation;
  return s;
}

Symbols apply(const std::vector<Pair>& merges, const std::string& word, Apply v) {
  Symbols s = initial(word, v == Apply::bytes, v != Apply::no_eow);
  auto merge = [&](const Symbols& x, const Pair& p) {
    return merge_with(x, p, v == Apply::overlap_merge, v == Apply::right_to_left, v == Apply::as_text);
  };
  if (v == Apply::stop_at_absent) {  // each merge once in the order learned, until one is absent
    for (const auto& m : merges) {
      bool present = false;
      for (std::size_t i = 0; i + 1 < s.size(); ++i) present = present || Pair{s[i], s[i + 1]} == m;
      if (!present) break;
      s = merge(s, m);
    }
    return s;
  }
  while (s.size() > 1) {
    std::size_t best = merges.size();
    for (std::size_t i = 0; i + 1 < s.size() && !(v == Apply::leftmost && best < merges.size()); ++i)
      for (std::size_t k = 0; k < merges.size(); ++k)
        if (merges[k] == Pair{s[i], s[i + 1]}) {
          best = v == Apply::latest && best < merges.size() ? std::max(best, k) : std::min(best, k);
          break;
        }
    if (best == merges.size()) break;
    s = merge(s, merges[best]);
  }
  if (v == Apply::dropped_eow) return without_eow(s);     // Bpe::encode's output without its "@@"
  if (v == Apply::library_form) return library_form(s);  // Bpe::encode's output
  return s;
}

// "; your merges are what this mistake gives: ..." when the learner's merges are one of the usual mistakes.
std::string diagnose_learn(const WordCounts& words, std::size_t n, const std::vector<Pair>& got) {
  const std::vector<std::pair<Learn, const char*>> mistakes = {
      {Learn::unweighted,
       "pair counts not weighted by the word's frequency (each distinct word counted once): a pair in a word that "
       "occurs k times counts k times"},
      {Learn::stream,
       "merges across word boundaries (the words written one after another as one sequence): count and merge the "
       "pairs inside each word only"},
      {Learn::overlap_merge,
       "overlapping occurrences of a pair both merged (a a a -> aa aa, the middle a used twice): merge left to right "
       "and skip the symbol a merge used (a a a -> aa a)"},
      {Learn::right_to_left, "a pair merged from the right (a a a -> a aa): merge left to right (a a a -> aa a)"},
      {Learn::as_text,
       "the pair replaced as text in the symbols joined by spaces, with no check that its two halves are whole "
       "symbols (\"aa b\" holds \"a b\"): merge two adjacent symbols equal to the pair's (Algorithm 1's regex "
       "checks it with (?<!\\S) and (?!\\S))"},
      {Learn::tie_last,
       "ties broken to the pair last in string order (>= instead of >?): among pairs of equal count take the first "
       "in string order"},
      {Learn::tie_first_met,
       "ties broken to the pair met first in the words (the paper's max() over a Python dict): attn breaks ties to "
       "the pair first in string order"},
      {Learn::no_eow, "no end-of-word mark: every word starts as its characters followed by \"</w>\""},
      {Learn::no_recount,
       "the pair counts computed once, before the first merge: count again after every merge (a merge makes new "
       "pairs and takes others away)"},
      {Learn::bytes,
       "the words split into bytes, not characters: attn::data::split_chars splits into characters"},
      {Learn::overlap_counted_once,
       "a pair counted once in a word where it occurs twice (a a a holds (a, a) at positions 0 and 1; a set of the "
       "word's pairs, or an overlap skipped, counts it once): count every adjacent position"},
      {Learn::glued_eow,
       "the end-of-word mark glued to the last character (t</w> as one symbol, as the paper's worked example writes "
       "r·): \"</w>\" is a symbol of its own, l o w e r </w>"},
      {Learn::first_only,
       "only the first occurrence of the pair in a word merged: replace every occurrence, left to right"},
      {Learn::no_skip,
       "the pair's second symbol kept after a merge as well (a b c -> ab b c: the ++i past the merged symbol "
       "forgotten): a merge replaces the two symbols by one"}};
  for (const auto& [v, what] : mistakes)
    if (learn(words, n, v) == got) return std::string("; your merges are what this mistake gives: ") + what;
  // No usual mistake gives these merges exactly: name what the merges themselves show.
  for (const auto& m : got) {
    if (m.first.find(eow) != std::string::npos ||
        (m.second.find(eow) != std::string::npos && m.second.find(eow) + eow.size() != m.second.size()))
      return "; your merge " + pair_str(m) +
             " joins two words (\"</w>\" inside a symbol): merges across word boundaries, the words counted as one "
             "sequence; count and merge the pairs inside each word only";
    if (!attn::data::is_valid_utf8(m.first) || !attn::data::is_valid_utf8(m.second))
      return "; your merge " + pair_str(m) + " holds a piece of a UTF-8 character: the words split into bytes, not "
             "characters (é is 2 bytes and one character; attn::data::split_chars splits into characters)";
  }
  return "";
}

// The pair counts after the first k merges of `merges` (Algorithm 1's, with the grader's rules).
std::map<Pair, std::int64_t> counts_after(const WordCounts& words, const std::vector<Pair>& merges, std::size_t k) {
  std::vector<std::pair<Symbols, std::int64_t>> vocab;
  for (const auto& [word, count] : words) vocab.push_back({initial(word, false, true), count});
  for (std::size_t j = 0; j < k; ++j)
    for (auto& entry : vocab) entry.first = merge_with(entry.first, merges[j], false, false);
  std::map<Pair, std::int64_t> pairs;
  for (const auto& [s, count] : vocab)
    for (std::size_t i = 0; i + 1 < s.size(); ++i) pairs[{s[i], s[i + 1]}] += count;
  return pairs;
}

std::string diagnose_apply(const std::vector<Pair>& merges, const std::string& word, const Symbols& got) {
  const std::vector<std::pair<Apply, const char*>> mistakes = {
      {Apply::leftmost,
       "the leftmost learned pair merged first: merge the earliest-learned pair present in the word (the lowest "
       "index in merges), wherever it is"},
      {Apply::latest,
       "the latest-learned pair merged first (the highest index in merges): merge the earliest-learned pair present "
       "in the word (the lowest index), wherever it is"},
      {Apply::dropped_eow,
       "the end-of-word mark dropped from the result, as Bpe::encode writes it: return the symbols with \"</w>\" "
       "kept (lowest -> low, est</w>)"},
      {Apply::library_form,
       "the library's written form (\"@@\" on every piece but the last, \"</w>\" dropped, as Bpe::encode writes "
       "it): return the symbols themselves, \"</w>\" kept and no \"@@\" (lowest -> low, est</w>)"},
      {Apply::no_eow,
       "no end-of-word mark: the word starts as its characters and \"</w>\", so that merges ending in \"</w>\" apply"},
      {Apply::overlap_merge,
       "overlapping occurrences of a pair both merged (a a a -> aa aa): merge left to right and skip the symbol a "
       "merge used (a a a -> aa a)"},
      {Apply::right_to_left, "a pair merged from the right (a a a -> a aa): merge left to right (a a a -> aa a)"},
      {Apply::as_text,
       "the pair replaced as text in the symbols joined by spaces, with no check that its two halves are whole "
       "symbols (\"aa b\" holds \"a b\"): merge two adjacent symbols equal to the pair's (Algorithm 1's regex "
       "checks it with (?<!\\S) and (?!\\S))"},
      {Apply::bytes, "the word split into bytes, not characters: attn::data::split_chars splits into characters"},
      {Apply::stop_at_absent,
       "the merges applied in order, stopped at the first merge the word lacks: a new word need not hold every "
       "earlier merge (newer lacks (e, s)); go on while any adjacent pair of the word is a merge"}};
  // One word can fit two mistakes (abc: the leftmost pair is also the latest): every one that fits is named.
  std::vector<std::string> named;
  for (const auto& [v, what] : mistakes)
    if (apply(merges, word, v) == got) named.push_back(what);
  if (named.size() == 1) return "; your symbols are what this mistake gives: " + named.front();
  if (!named.empty()) {
    std::string out = "; your symbols are what each of these mistakes gives: " + named.front();
    for (std::size_t k = 1; k < named.size(); ++k) out += "; or " + named[k];
    return out;
  }
  std::string spelled;
  for (const auto& s : got) spelled += s;
  if (spelled != word + eow)
    return "; your symbols spell '" + spelled + "', not the word followed by \"</w>\": a merge lost or repeated a "
           "character";
  return "";
}

void expect_merges(const std::string& what, const WordCounts& words, std::size_t n, const std::vector<Pair>& expected,
                   const std::vector<Pair>& got) {
  if (got == expected) return;
  std::string where = "learn_merges (words: " + words_str(words) + "; n " + std::to_string(n) + ")";
  std::string named = diagnose_learn(words, n, got);
  for (std::size_t k = 0; k < std::min(got.size(), expected.size()); ++k)
    if (got[k] != expected[k]) {
      if (named.empty() && std::equal(expected.begin(), expected.begin() + long(k), got.begin())) {
        const auto pairs = counts_after(words, expected, k);
        const auto g = pairs.find(got[k]);
        if (g != pairs.end() && g->second == pairs.at(expected[k]))
          named = "; " + pair_str(got[k]) + " and " + pair_str(expected[k]) + " both occur " +
                  std::to_string(g->second) + " times there: a tie, broken another way (a std::unordered_map, or "
                  "pairs kept in the order met?): ties go to the pair first in string order, std::pair's <";
      }
      throw Mismatch(where + ", " + what + ": merge " + std::to_string(k + 1) + " of " +
                         std::to_string(expected.size()) + ": expected " + pair_str(expected[k]) + ", received " +
                         pair_str(got[k]) + " (expected " + merges_str(expected) + ", received " + merges_str(got) +
                         ")" + named,
                     named.empty() ? "" : hint::learn);
    }
  if (named.empty() && got.size() < expected.size()) {
    // Why the learner stopped: at a pair that occurs once (a minimum count), or one merge short (an off-by-one).
    const std::int64_t next = counts_after(words, expected, got.size()).at(expected[got.size()]);
    named = "; stopped after " + std::to_string(got.size()) + " merges while pairs were left (the next: " +
            pair_str(expected[got.size()]) + ", " + std::to_string(next) + " times): merge until n merges or until "
            "no word has two symbols";
    if (next < 2) named += "; Algorithm 1 has no minimum count, a pair that occurs once is merged too";
    else if (got.size() + 1 == n) named += "; one merge short of the n = " + std::to_string(n) + " asked: a loop "
                                           "that runs n - 1 times (an off-by-one)?";
  }
  throw Mismatch(where + ", " + what + ": " + std::to_string(got.size()) + " merges, expected " +
                     std::to_string(expected.size()) + " (expected " + merges_str(expected) + ", received " +
                     merges_str(got) + ")" +
                     (named.empty() && got.size() > expected.size()
                          ? "; after merge " + std::to_string(expected.size()) +
                                " every word is one symbol: stop there, no pair is left"
                          : named),
                 named.empty() ? hint::boundary : hint::learn);
}

void expect_symbols(const std::vector<Pair>& merges, const std::string& word, const Symbols& expected,
                    const Symbols& got) {
  if (got == expected) return;
  std::string named = diagnose_apply(merges, word, got);
  throw Mismatch("apply_merges (merges " + merges_str(merges) + "), word '" + word + "': expected [" +
                     symbols_str(expected, ", ") + "], received [" + symbols_str(got, ", ") + "]" + named,
                 named.empty() ? "" : hint::apply);
}

// ---- BLEU, right and with the usual mistakes ----

enum class CountV {
  right, unclipped, clip_sum, shortest, tie_longer, tie_first, unsigned_distance, average, first_ref, one_ref, distinct,
  per_occurrence
};
enum class CorpusV {
  right, sentence_average, macro_precision, arithmetic, bp_always, bp_inverted, bp_per_sentence, zero_skipped,
  nonzero_mean, no_bp, bp_linear, bp_integer, p_integer, root_integer, no_root, add_one
};

std::map<Symbols, std::size_t> ngrams(const Symbols& words, std::size_t n) {
  std::map<Symbols, std::size_t> out;
  for (std::size_t i = 0; i + n <= words.size(); ++i)
    ++out[Symbols(words.begin() + long(i), words.begin() + long(i + n))];
  return out;
}

Counts counts_of(const std::vector<Symbols>& references, const Symbols& hyp, CountV v) {
  Counts c;
  for (std::size_t n = 1; n <= 4; ++n) {
    std::map<Symbols, std::size_t> clip;
    for (const auto& r : references) {
      for (const auto& [g, k] : ngrams(r, n)) clip[g] = v == CountV::clip_sum ? clip[g] + k : std::max(clip[g], k);
      if (v == CountV::one_ref) break;
    }
    for (const auto& [g, k] : ngrams(hyp, n)) {
      const std::size_t mine = v == CountV::distinct ? 1 : k;
      c.totals[n - 1] += mine;
      auto it = clip.find(g);
      // per_occurrence: min(count, clip) added at every position the n-gram occurs, not once for it
      if (it != clip.end())
        c.matches[n - 1] += v == CountV::unclipped        ? mine
                            : v == CountV::per_occurrence ? k * std::min(k, it->second)
                                                          : std::min(mine, it->second);
    }
  }
  c.hyp_length = hyp.size();
  c.ref_length = references.front().size();
  if (v == CountV::average) {  // the mean reference length, in integers
    std::size_t sum = 0;
    for (const auto& r : references) sum += r.size();
    c.ref_length = sum / references.size();
    return c;
  }
  if (v == CountV::unsigned_distance) {  // len - c in std::size_t: a shorter reference is very far
    std::size_t best = SIZE_MAX;
    for (const auto& r : references)
      if (r.size() - c.hyp_length < best) best = r.size() - c.hyp_length, c.ref_length = r.size();
    return c;
  }
  for (const auto& r : references) {
    const std::size_t len = r.size();
    if (v == CountV::first_ref || v == CountV::one_ref) break;
    if (v == CountV::shortest) {
      c.ref_length = std::min(c.ref_length, len);
      continue;
    }
    auto d = [&](std::size_t x) { return x > c.hyp_length ? x - c.hyp_length : c.hyp_length - x; };
    const bool closer = d(len) < d(c.ref_length);
    const bool tie = d(len) == d(c.ref_length) && v != CountV::tie_first &&
                     (v == CountV::tie_longer ? len > c.ref_length : len < c.ref_length);
    if (closer || tie) c.ref_length = len;
  }
  return c;
}

double bleu_of(const std::vector<Counts>& sentences, CorpusV v) {
  if (v == CorpusV::sentence_average) {
    double sum = 0.0;
    for (const auto& s : sentences) sum += bleu_of({s}, CorpusV::right);
    return sum / double(sentences.size());
  }
  Counts t;
  double bp_sum = 0.0;
  std::array<double, 4> macro{};
  for (const auto& s : sentences) {
    for (std::size_t n = 0; n < 4; ++n) {
      t.matches[n] += s.matches[n], t.totals[n] += s.totals[n];
      macro[n] += s.totals[n] ? double(s.matches[n]) / double(s.totals[n]) / double(sentences.size()) : 0.0;
    }
    t.hyp_length += s.hyp_length, t.ref_length += s.ref_length;
    const double c = double(s.hyp_length), r = double(s.ref_length);
    bp_sum += c > r ? 1.0 : std::exp(1.0 - r / c);
  }
  const double c = double(t.hyp_length), r = double(t.ref_length);
  double bp = c > r ? 1.0 : std::exp(1.0 - r / c);
  if (v == CorpusV::bp_always) bp = std::exp(1.0 - r / c);
  if (v == CorpusV::bp_inverted) bp = c > r ? 1.0 : std::exp(1.0 - c / r);
  if (v == CorpusV::bp_per_sentence) bp = bp_sum / double(sentences.size());
  if (v == CorpusV::no_bp) bp = 1.0;
  if (v == CorpusV::bp_linear) bp = std::min(1.0, c / r);
  if (v == CorpusV::bp_integer) bp = c > r ? 1.0 : std::exp(1.0 - double(t.ref_length / t.hyp_length));
  double log_sum = 0.0, sum = 0.0, product = 1.0;
  int nonzero = 0;
  for (std::size_t n = 0; n < 4; ++n) {
    const double p = v == CorpusV::macro_precision ? macro[n]
                     : v == CorpusV::p_integer     ? double(t.matches[n] / t.totals[n])
                     : v == CorpusV::add_one       ? (double(t.matches[n]) + 1.0) / (double(t.totals[n]) + 1.0)
                                                   : double(t.matches[n]) / double(t.totals[n]);
    sum += p;
    product *= p;
    if (p > 0) log_sum += std::log(p), ++nonzero;
  }
  if (v == CorpusV::arithmetic) return bp * sum / 4.0;
  if (v == CorpusV::root_integer) return bp;  // pow(product, 1 / 4) = pow(product, 0)
  if (v == CorpusV::no_root) return bp * product;
  if (v == CorpusV::nonzero_mean) return nonzero ? bp * std::exp(log_sum / nonzero) : 0.0;
  if (nonzero < 4 && v != CorpusV::zero_skipped) return 0.0;
  return bp * std::exp(log_sum / 4.0);
}

const std::vector<std::pair<CountV, const char*>>& count_mistakes() {
  static const std::vector<std::pair<CountV, const char*>> m = {
      {CountV::unclipped,
       "the n-grams not clipped: a hypothesis n-gram counts at most as often as it occurs in one reference (\"the\" 7 "
       "times against a reference that has it twice matches 2)"},
      {CountV::clip_sum,
       "the clip summed over the references: clip each n-gram to its largest count in any one reference"},
      {CountV::shortest,
       "r from the shortest reference: r is the reference length closest to the hypothesis's (the shorter on a tie), "
       "as NLTK and attn take Papineni et al.'s best match length"},
      {CountV::tie_longer,
       "a tie between two reference lengths broken to the longer: closest, and the shorter of two at the same "
       "distance"},
      {CountV::tie_first,
       "a tie between two reference lengths kept to the first one met (a < with no tie rule): closest, and the "
       "shorter of two at the same distance"},
      {CountV::unsigned_distance,
       "the distance len - c computed in std::size_t, so that a reference shorter than the hypothesis wraps around "
       "to a huge distance: take len > c ? len - c : c - len"},
      {CountV::average,
       "r the average reference length: r is the length of the one reference closest to c (the shorter on a tie)"},
      {CountV::first_ref, "r from the first reference: the closest of all the references"},
      {CountV::one_ref,
       "only the first reference used: clip each n-gram to its largest count in any reference, and r the closest of "
       "all"},
      {CountV::distinct,
       "each distinct n-gram counted once: count every occurrence (the hypothesis's n-grams as a multiset)"},
      {CountV::per_occurrence,
       "min(count, clip) added at every position the n-gram occurs, so a repeated n-gram counts its clip again and "
       "again: add it once per distinct n-gram"}};
  return m;
}

const std::vector<std::pair<CorpusV, const char*>>& corpus_mistakes() {
  static const std::vector<std::pair<CorpusV, const char*>> m = {
      {CorpusV::sentence_average,
       "the average of sentence BLEU scores: corpus BLEU sums the matches, the totals and the lengths over every "
       "sentence and computes one BLEU from the sums"},
      {CorpusV::macro_precision,
       "the precisions averaged per sentence: sum the matches and the totals over the corpus, then divide"},
      {CorpusV::arithmetic, "the arithmetic mean of p_1..p_4: BLEU's is geometric, exp(sum of log p_n / 4)"},
      {CorpusV::bp_always,
       "the brevity penalty applied when the hypotheses are longer than the references: BP = 1 when c > r"},
      {CorpusV::bp_inverted, "the brevity penalty as exp(1 - c / r): it is exp(1 - r / c)"},
      {CorpusV::bp_per_sentence,
       "the brevity penalty per sentence, averaged: one BP from the corpus's total lengths c and r"},
      {CorpusV::zero_skipped,
       "a zero precision skipped in the geometric mean: a p_n of 0 makes BLEU 0 (log 0 = -inf)"},
      {CorpusV::nonzero_mean,
       "the geometric mean of the nonzero precisions only: a p_n of 0 makes BLEU 0 (log 0 = -inf)"},
      {CorpusV::no_bp, "no brevity penalty: BLEU = BP exp(...), BP = exp(1 - r / c) when c <= r"},
      {CorpusV::bp_linear, "the brevity penalty as c / r: it is exp(1 - r / c)"},
      {CorpusV::bp_integer,
       "r / c divided in integers (std::size_t): convert to double before dividing, exp(1.0 - double(r) / c)"},
      {CorpusV::p_integer,
       "matches / totals divided in integers (std::size_t): convert to double before dividing"},
      {CorpusV::root_integer,
       "1 / 4 divided in integers is 0, so pow(product, 1 / 4) is 1: write 0.25 (or exp(sum of logs / 4.0))"},
      {CorpusV::no_root, "the product of p_1..p_4 without its fourth root: BLEU's mean is (p_1 p_2 p_3 p_4)^(1/4)"},
      {CorpusV::add_one,
       "the precisions smoothed, (matches + 1) / (totals + 1): corpus BLEU here is unsmoothed, p_n = matches / "
       "totals, and a zero p_n makes it 0"}};
  return m;
}

bool close(double expected, double got) { return std::abs(got - expected) <= 1e-12; }

// The learner's BLEU named as the usual mistakes it matches: in the counts (with the right corpus step) or in the
// corpus step. Two can give the same number on one corpus (no penalty and r / c in integers, where r < 2c): both
// are named then.
std::string diagnose_bleu(const std::vector<std::vector<Symbols>>& refs, const std::vector<Symbols>& hyps, double got) {
  auto all = [&](CountV v) {
    std::vector<Counts> out;
    for (std::size_t i = 0; i < hyps.size(); ++i) out.push_back(counts_of(refs[i], hyps[i], v));
    return out;
  };
  const double right = bleu_of(all(CountV::right), CorpusV::right);
  std::vector<std::string> named;
  for (const auto& [v, what] : corpus_mistakes()) {
    const double b = bleu_of(all(CountV::right), v);
    if (!close(right, b) && close(b, got)) named.push_back(what);
  }
  for (const auto& [v, what] : count_mistakes()) {
    const double b = bleu_of(all(v), CorpusV::right);
    if (!close(right, b) && close(b, got)) named.push_back(what);
  }
  if (named.empty()) return "";
  if (named.size() == 1) return "; your BLEU is what this mistake gives: " + named.front();
  std::string out = "; your BLEU is what each of these mistakes gives: " + named.front();
  for (std::size_t k = 1; k < named.size(); ++k) out += "; or " + named[k];
  return out;
}

std::string sentence_str(const Symbols& s) {
  std::string t = symbols_str(s);
  return "'" + (t.size() > 60 ? t.substr(0, 57) + "..." : t) + "'";
}

std::string refs_str(const std::vector<Symbols>& refs) {
  std::string out;
  for (const auto& r : refs) out += (out.empty() ? "" : " | ") + sentence_str(r);
  return out;
}

// The usual mistakes the learner's counts of a whole corpus match, sentence by sentence, as
// "; your counts are what this mistake gives: ...", or "" (one case can fit two: where the first reference is the
// shortest, r from the shortest and r from the first agree; every one that fits is named).
std::string diagnose_counts(const std::vector<std::vector<Symbols>>& refs, const std::vector<Symbols>& hyps,
                            const std::vector<Counts>& got) {
  auto same = [](const Counts& a, const Counts& b) {
    return a.matches == b.matches && a.totals == b.totals && a.ref_length == b.ref_length &&
           a.hyp_length == b.hyp_length;
  };
  std::vector<std::string> named;
  for (const auto& [v, what] : count_mistakes()) {
    bool all = true;
    for (std::size_t i = 0; i < hyps.size() && all; ++i) all = same(counts_of(refs[i], hyps[i], v), got[i]);
    if (all) named.push_back(what);
  }
  if (named.empty()) return "";
  if (named.size() == 1) return "; your counts are what this mistake gives: " + named.front();
  std::string out = "; your counts are what each of these mistakes gives: " + named.front();
  for (std::size_t k = 1; k < named.size(); ++k) out += "; or " + named[k];
  return out;
}

// The learner's counts of every sentence against the expected ones: the first difference, with the mistake named.
void expect_counts(const BpeBleu& m, const std::vector<std::vector<Symbols>>& refs, const std::vector<Symbols>& hyps,
                   const std::vector<Counts>& expected) {
  std::vector<Counts> got;
  for (std::size_t i = 0; i < hyps.size(); ++i) got.push_back(m.sentence_counts(refs[i], hyps[i]));
  for (std::size_t i = 0; i < hyps.size(); ++i) {
    const Counts &e = expected[i], &g = got[i];
    std::string diff;
    for (std::size_t n = 0; n < 4 && diff.empty(); ++n) {
      if (g.matches[n] != e.matches[n])
        diff = "matches of " + std::to_string(n + 1) + "-grams: expected " + std::to_string(e.matches[n]) +
               ", received " + std::to_string(g.matches[n]);
      else if (g.totals[n] != e.totals[n])
        diff = "totals of " + std::to_string(n + 1) + "-grams: expected " + std::to_string(e.totals[n]) +
               ", received " + std::to_string(g.totals[n]);
    }
    if (diff.empty() && g.hyp_length != e.hyp_length)
      diff = "hyp_length: expected " + std::to_string(e.hyp_length) + ", received " + std::to_string(g.hyp_length);
    if (diff.empty() && g.ref_length != e.ref_length)
      diff = "ref_length: expected " + std::to_string(e.ref_length) + ", received " + std::to_string(g.ref_length);
    if (diff.empty()) continue;
    const bool length = diff.rfind("ref_length", 0) == 0 || diff.rfind("hyp_length", 0) == 0;
    throw Mismatch("sentence_counts (hypothesis " + sentence_str(hyps[i]) + ", references " + refs_str(refs[i]) +
                       "): " + diff + diagnose_counts(refs, hyps, got),
                   length ? hint::ref_length : hint::counts);
  }
}

struct Corpus {
  std::vector<std::vector<Symbols>> refs;
  std::vector<Symbols> hyps;
  double bleu = 0.0;             // NLTK's corpus_bleu
  std::vector<Counts> counts;    // NLTK's modified_precision and closest_ref_length, per sentence
};

Corpus corpus_of(const std::string& name) {
  const auto& c = case_of(name);
  Corpus out;
  out.refs = c.at("references").get<std::vector<std::vector<Symbols>>>();
  out.hyps = c.at("hypotheses").get<std::vector<Symbols>>();
  out.bleu = c.at("bleu").get<double>();
  for (const auto& s : c.at("counts")) {
    Counts k;
    for (std::size_t n = 0; n < 4; ++n) {
      k.matches[n] = s.at("matches").at(n).get<std::size_t>();
      k.totals[n] = s.at("totals").at(n).get<std::size_t>();
    }
    k.hyp_length = s.at("hyp_length").get<std::size_t>();
    k.ref_length = s.at("ref_length").get<std::size_t>();
    out.counts.push_back(k);
  }
  return out;
}

void expect_bleu(const std::string& what, const std::vector<std::vector<Symbols>>& refs,
                 const std::vector<Symbols>& hyps, double expected, double got, const char* usual_hint) {
  if (close(expected, got)) return;
  std::string named = diagnose_bleu(refs, hyps, got);
  std::string text = "corpus_bleu (" + what + ", " + std::to_string(hyps.size()) + " hypotheses, first " +
                     sentence_str(hyps.front()) + "): expected " + num_str(expected) + ", received " + num_str(got);
  if (!std::isfinite(got))
    throw Mismatch(text + "; not finite: a 0 / 0 or a log 0 met where no count is 0? a zero p_n gives BLEU 0",
                   hint::zero);
  throw Mismatch(text + named, named.empty() ? usual_hint : hint::corpus);
}

// Random word counts over a few letters (é among them) so that pairs repeat and tie.
WordCounts random_words(Random& rng) {
  const std::vector<std::string> letters = {"a", "b", "c", "d", "é"};
  WordCounts words;
  const std::size_t distinct = rng.integer(2, 7);
  while (words.size() < distinct) {
    std::string w;
    const std::size_t len = rng.integer(1, 6);
    for (std::size_t k = 0; k < len; ++k) w += letters[rng.integer(0, letters.size() - 1)];
    words[w] = std::int64_t(rng.integer(1, 6));
  }
  return words;
}

std::vector<Symbols> sentences_of(const WordCounts& words) {
  std::vector<Symbols> sentences;
  for (const auto& [w, c] : words)
    for (std::int64_t k = 0; k < c; ++k) sentences.push_back({w});
  return sentences;
}

// A random corpus: references over a few words, each hypothesis a reference with a few words changed,
// added or dropped (at least 4 words, so NLTK's and Papineni's counts agree).
std::pair<std::vector<std::vector<Symbols>>, std::vector<Symbols>> random_corpus(Random& rng) {
  const std::vector<std::string> vocab = {"the", "cat", "a", "mat", "on", "sat", "dog"};
  auto word = [&] { return vocab[rng.integer(0, vocab.size() - 1)]; };
  std::vector<std::vector<Symbols>> refs;
  std::vector<Symbols> hyps;
  const std::size_t sentences = rng.integer(1, 4);
  for (std::size_t i = 0; i < sentences; ++i) {
    std::vector<Symbols> r(rng.integer(1, 3));
    for (auto& ref : r) {
      ref.resize(rng.integer(3, 10));
      for (auto& w : ref) w = word();
    }
    Symbols hyp = r[0];
    const std::size_t edits = rng.integer(0, 3);
    for (std::size_t e = 0; e < edits; ++e) {
      const std::size_t at = rng.integer(0, hyp.size() - 1);
      switch (rng.integer(0, 2)) {
        case 0: hyp[at] = word(); break;
        case 1: hyp.insert(hyp.begin() + long(at), word()); break;
        default: if (hyp.size() > 1) hyp.erase(hyp.begin() + long(at));
      }
    }
    while (hyp.size() < 4) hyp.push_back(word());
    refs.push_back(r);
    hyps.push_back(hyp);
  }
  return {refs, hyps};
}

}  // namespace

Result grade(const BpeBleu& m, std::ostream& os) {
  Grader grader(21, "byte-pair merges and corpus BLEU", os);

  // ---- learn_merges ----
  auto fixed_learn = [&](const std::string& name, const std::string& what) {
    const auto& c = case_of(name);
    const WordCounts words = words_of(c);
    const std::size_t n = c.at("n").get<std::size_t>();
    expect_merges(what, words, n, merges_of(c.at("merges")), m.learn_merges(words, n));
  };
  grader.check("learn_merges: Sennrich et al.'s example (low 5, lower 2, newest 6, widest 3), 10 merges, vs "
               "Algorithm 1",
               hint::learn, [&] { fixed_learn("paper", "the paper's example"); });
  grader.check("learn_merges: pair counts weighted by word frequency (the 9 times against rare words)",
               hint::weighted, [&] { fixed_learn("weighted", "a frequent word against rare ones"); });
  grader.check("learn_merges: ties go to the pair first in string order (ab, ba, cd, dc: every pair once)",
               hint::ties, [&] { fixed_learn("ties", "every pair once"); });
  grader.check("learn_merges: a pair overlapping itself (aaa, aaaa): counted at each position, merged left to right",
               hint::overlap, [&] { fixed_learn("overlap", "a pair overlapping itself"); });
  grader.check("learn_merges: no merge across words, and no merge once every word is one symbol (a 10, b 10: 2 of "
               "the 4 merges asked)",
               hint::boundary, [&] { fixed_learn("boundary", "one-letter words"); });
  grader.check("learn_merges: French words (UTF-8: é is one character)", hint::characters,
               [&] { fixed_learn("french", "French words"); });
  grader.check("learn_merges: random word counts (é among the letters) vs attn::data::Bpe::learn", hint::random_learn,
               [&] {
                 Random rng(21100);
                 for (int trial = 0; trial < 30; ++trial) {
                   const WordCounts words = random_words(rng);
                   const std::size_t n = rng.integer(1, 16);
                   const std::vector<Pair> expected = attn::data::Bpe::learn(sentences_of(words), n, 1).merges();
                   if (learn(words, n, Learn::right) != expected)
                     throw std::logic_error("grader bug: its Algorithm 1 disagrees with attn::data::Bpe::learn on " +
                                            words_str(words));
                   expect_merges("random", words, n, expected, m.learn_merges(words, n));
                 }
               });

  // ---- apply_merges ----
  auto fixed_apply = [&](const std::string& name) {
    const auto& c = case_of(name);
    const std::vector<Pair> merges = merges_of(c.at("merges"));
    const auto words = c.at("words").get<std::vector<std::string>>();
    const auto symbols = c.at("symbols").get<std::vector<Symbols>>();
    for (std::size_t i = 0; i < words.size(); ++i)
      expect_symbols(merges, words[i], symbols[i], m.apply_merges(merges, words[i]));
  };
  grader.check("apply_merges: new words (lowest, newer, wider, slow, ...) with the paper's 10 merges", hint::apply,
               [&] { fixed_apply("apply_paper"); });
  grader.check("apply_merges: the earliest-learned pair first, not the leftmost (abc with (b, c) before (a, b)); "
               "aaaaa with (a, a)",
               hint::apply, [&] { fixed_apply("apply_order"); });
  grader.check("apply_merges: random words with merges from attn::data::Bpe::learn vs attn::data::Bpe::encode",
               hint::apply, [&] {
                 Random rng(21200);
                 for (int trial = 0; trial < 20; ++trial) {
                   const WordCounts words = random_words(rng);
                   const attn::data::Bpe bpe = attn::data::Bpe::learn(sentences_of(words), rng.integer(1, 16), 1);
                   for (const auto& [word, count] : random_words(rng)) {
                     const Symbols expected = apply(bpe.merges(), word, Apply::right);
                     if (library_form(expected) != bpe.encode({word}))
                       throw std::logic_error("grader bug: its apply disagrees with attn::data::Bpe::encode on " + word);
                     expect_symbols(bpe.merges(), word, expected, m.apply_merges(bpe.merges(), word));
                   }
                 }
               });

  // ---- sentence_counts ----
  auto fixed_counts = [&](const std::string& name) {
    const Corpus c = corpus_of(name);
    expect_counts(m, c.refs, c.hyps, c.counts);
  };
  grader.check("sentence_counts vs NLTK's modified_precision (Papineni et al.'s 'the the the the the the the')",
               hint::counts, [&] { fixed_counts("clip"); });
  grader.check("sentence_counts: several references: an n-gram clipped to its largest count in one reference",
               hint::counts, [&] { fixed_counts("multi_ref"); });
  grader.check("sentence_counts: r the reference length closest to c, the shorter on a tie, vs NLTK's "
               "closest_ref_length",
               hint::ref_length, [&] { fixed_counts("ref_length"); });
  grader.check("sentence_counts: random sentences vs attn::models::bleu_stats", hint::counts, [&] {
    Random rng(21300);
    for (int trial = 0; trial < 40; ++trial) {
      auto [refs, hyps] = random_corpus(rng);
      std::vector<Counts> expected(hyps.size());
      for (std::size_t i = 0; i < hyps.size(); ++i) {
        const attn::models::BleuStats s = attn::models::bleu_stats(refs[i], hyps[i]);
        for (std::size_t n = 0; n < 4; ++n) expected[i].matches[n] = s.matches[n], expected[i].totals[n] = s.totals[n];
        expected[i].hyp_length = s.hyp_length;
        expected[i].ref_length = s.ref_length;
      }
      expect_counts(m, refs, hyps, expected);
    }
  });

  // ---- corpus_bleu ----
  auto fixed_bleu = [&](const std::string& name, const std::string& what, const char* usual_hint) {
    const Corpus c = corpus_of(name);
    expect_bleu(what, c.refs, c.hyps, c.bleu, m.corpus_bleu(c.refs, c.hyps), usual_hint);
  };
  grader.check("corpus_bleu vs NLTK's corpus_bleu (NLTK's example: 0.592 from the summed counts, 0.622 the average of "
               "its sentences')",
               hint::corpus, [&] { fixed_bleu("nltk_doc", "NLTK's example", hint::corpus); });
  grader.check("corpus_bleu vs NLTK: Papineni et al.'s 'the the the ...' in a corpus of 2", hint::corpus,
               [&] { fixed_bleu("clip", "clipping", hint::corpus); });
  grader.check("corpus_bleu vs NLTK: a corpus shorter than its references (BP < 1)", hint::short_bp,
               [&] { fixed_bleu("short", "shorter than the references", hint::short_bp); });
  grader.check("corpus_bleu vs NLTK: a corpus longer than its references (BP = 1)", hint::long_bp,
               [&] { fixed_bleu("long", "longer than the references", hint::long_bp); });
  grader.check("corpus_bleu vs NLTK: a sentence without a matching 4-gram in a corpus with some", hint::corpus,
               [&] { fixed_bleu("sentence_zero", "one sentence's p_4 = 0", hint::corpus); });
  grader.check("corpus_bleu: p_4 = 0 over the corpus, and nothing matching (p_1 = 0): 0 (NLTK: about 1e-77, and 0)",
               hint::zero, [&] {
                 fixed_bleu("zero_p4", "no 4-gram matches", hint::zero);
                 fixed_bleu("zero_p1", "no word matches", hint::zero);
               });
  grader.check("corpus_bleu: random corpora vs attn::models::corpus_bleu", hint::random_bleu, [&] {
    Random rng(21400);
    for (int trial = 0; trial < 40; ++trial) {
      auto [refs, hyps] = random_corpus(rng);
      const double expected = attn::models::corpus_bleu(refs, hyps).score;
      expect_bleu("random", refs, hyps, expected, m.corpus_bleu(refs, hyps), hint::random_bleu);
    }
  });
  return grader.finish();
}

}  // namespace bpe_bleu
}  // namespace lab
