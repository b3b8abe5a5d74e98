// Wrong solutions of lab 21; labs/tests/test_lab21.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/21_bpe_bleu.hpp"

#include <cstdint>

namespace lab {
namespace planted {
namespace bpe_bleu {

using lab::bpe_bleu::BpeBleu;
using lab::bpe_bleu::Counts;
using lab::bpe_bleu::Pair;
using lab::bpe_bleu::Symbols;
using lab::bpe_bleu::WordCounts;

struct Merge {
  bool overlap = false;     // every position where the pair starts merged: a a a -> aa aa
  bool first_only = false;  // only the first occurrence in the word merged
};

inline Symbols merge_pair(const Merge& o, const Symbols& s, const Pair& pair) {
  if (o.first_only) {  // std::find of the pair, replaced once
    for (std::size_t i = 0; i + 1 < s.size(); ++i)
      if (s[i] == pair.first && s[i + 1] == pair.second) {
        Symbols out(s.begin(), s.begin() + long(i));
        out.push_back(s[i] + s[i + 1]);
        out.insert(out.end(), s.begin() + long(i + 2), s.end());
        return out;
      }
    return s;
  }
  if (!o.overlap) return lab::solutions::bpe_bleu::merge_pair(s, pair);
  auto at = [&](std::size_t i) { return i + 1 < s.size() && s[i] == pair.first && s[i + 1] == pair.second; };
  Symbols out;
  for (std::size_t i = 0; i < s.size(); ++i) {  // "was this symbol taken by the pair before it?" instead of skipping it
    if (at(i)) out.push_back(s[i] + s[i + 1]);
    else if (!(i > 0 && at(i - 1))) out.push_back(s[i]);
  }
  return out;
}

inline Symbols start(const std::string& word, bool bytes, bool mark, bool glued = false) {
  Symbols s;
  if (bytes)
    for (char ch : word) s.push_back(std::string(1, ch));
  else
    s = attn::data::split_chars(word);
  if (mark && glued) s.back() += attn::data::Bpe::end_of_word;  // the paper's worked example: r· as one symbol
  else if (mark) s.push_back(attn::data::Bpe::end_of_word);
  return s;
}

struct Learn {
  bool unweighted = false, stream = false, tie_last = false, tie_first_met = false, no_eow = false,
       no_recount = false, bytes = false, overlap_counted_once = false, min_count_2 = false, glued_eow = false,
       one_short = false, tie_last_met = false;
  Merge merge;
};

// A learner's Algorithm 1 with one mistake.
inline std::vector<Pair> learn_merges(const Learn& o, const WordCounts& words, std::size_t n) {
  std::vector<std::pair<Symbols, std::int64_t>> vocab;
  if (o.stream) {  // the corpus as one sequence of symbols, word after word
    Symbols all;
    for (const auto& [w, c] : words)
      for (std::int64_t k = 0; k < c; ++k)
        for (auto& s : start(w, false, true)) all.push_back(s);
    vocab.push_back({all, 1});
  } else {
    for (const auto& [w, c] : words) vocab.push_back({start(w, o.bytes, !o.no_eow, o.glued_eow), c});
  }
  auto count = [&](std::vector<Pair>& order) {
    std::map<Pair, std::int64_t> pairs;
    for (const auto& [s, c] : vocab) {
      std::map<Pair, std::size_t> next_free;  // overlap_counted_once: a pair not counted again inside itself
      for (std::size_t i = 0; i + 1 < s.size(); ++i) {
        Pair p{s[i], s[i + 1]};
        if (o.overlap_counted_once && i < next_free[p]) continue;
        next_free[p] = i + 2;
        if (!pairs.count(p)) order.push_back(p);
        pairs[p] += o.unweighted ? 1 : c;
      }
    }
    return pairs;
  };
  std::vector<Pair> first_order;
  const std::map<Pair, std::int64_t> once = count(first_order);
  std::vector<Pair> merges;
  while (merges.size() + (o.one_short ? 1 : 0) < n) {  // one_short: for (k = 1; k < n; ++k)
    std::vector<Pair> order;
    std::map<Pair, std::int64_t> pairs = o.no_recount ? once : count(order);
    if (o.no_recount) {
      for (const auto& m : merges) pairs.erase(m);
      for (const auto& [p, c] : pairs) order.push_back(p);
    }
    if (pairs.empty()) break;
    Pair best = pairs.begin()->first;
    for (const auto& [p, c] : pairs)
      if (o.tie_last ? c >= pairs.at(best) : c > pairs.at(best)) best = p;
    if (o.tie_first_met) {  // the pairs in the order met, the first kept on a tie (Python's max over a dict)
      best = order.front();
      for (const auto& p : order)
        if (pairs.at(p) > pairs.at(best)) best = p;
    }
    if (o.tie_last_met) {  // the pairs in the order met, scanned with >=: the last met kept on a tie
      best = order.front();
      for (const auto& p : order)
        if (pairs.at(p) >= pairs.at(best)) best = p;
    }
    if (o.min_count_2 && pairs.at(best) < 2) break;  // the library's default min_frequency, copied
    merges.push_back(best);
    for (auto& entry : vocab) entry.first = merge_pair(o.merge, entry.first, best);
  }
  return merges;
}

struct Apply {
  bool leftmost = false, latest = false, no_eow = false, stop_at_absent = false, sequential = false,
       library_form = false;
  Merge merge;
};

inline Symbols apply_merges(const Apply& o, const std::vector<Pair>& merges, const std::string& word) {
  Symbols s = start(word, false, !o.no_eow);
  if (o.sequential || o.stop_at_absent) {  // each merge once, in the order learned
    for (const auto& m : merges) {
      bool present = false;
      for (std::size_t i = 0; i + 1 < s.size(); ++i) present = present || Pair{s[i], s[i + 1]} == m;
      if (!present && o.stop_at_absent) break;  // "the merges build on each other": they do not, in a new word
      s = merge_pair(o.merge, s, m);
    }
    return s;
  }
  while (s.size() > 1) {
    std::size_t best = merges.size();
    for (std::size_t i = 0; i + 1 < s.size(); ++i) {
      for (std::size_t k = 0; k < merges.size(); ++k)
        if (merges[k] == Pair{s[i], s[i + 1]}) {
          best = o.latest && best < merges.size() ? std::max(best, k) : std::min(best, k);  // latest: the "biggest"
          break;
        }
      if (o.leftmost && best < merges.size()) break;  // the first position holding a learned pair
    }
    if (best == merges.size()) break;
    s = merge_pair(o.merge, s, merges[best]);
  }
  if (o.library_form) {  // written as Bpe::encode writes it: "</w>" dropped, "@@" on every piece but the last
    const std::string eow = attn::data::Bpe::end_of_word;
    if (s.back() == eow) s.pop_back();
    else s.back().resize(s.back().size() - eow.size());
    for (std::size_t i = 0; i + 1 < s.size(); ++i) s[i] += attn::data::Bpe::continuation;
  }
  return s;
}

struct Bleu {
  // counts
  bool unclipped = false, clip_sum = false, shortest = false, tie_longer = false, first_ref = false, distinct = false,
       tie_first = false, unsigned_distance = false, average = false, per_occurrence = false;
  // corpus
  bool sentence_average = false, macro_precision = false, arithmetic = false, bp_always = false, bp_inverted = false,
       bp_per_sentence = false, zero_skipped = false, add_one = false;
};

inline Counts sentence_counts(const Bleu& o, const std::vector<Symbols>& references, const Symbols& hyp) {
  using lab::solutions::bpe_bleu::ngrams;
  Counts c;
  for (std::size_t n = 1; n <= 4; ++n) {
    std::map<Symbols, std::size_t> clip;
    for (const auto& r : references)
      for (const auto& [g, k] : ngrams(r, n)) clip[g] = o.clip_sum ? clip[g] + k : std::max(clip[g], k);
    if (o.per_occurrence) {  // a loop over the hypothesis's positions, each adding its n-gram's clipped count
      const auto hyp_counts = ngrams(hyp, n);
      for (std::size_t i = 0; i + n <= hyp.size(); ++i) {
        const Symbols g(hyp.begin() + long(i), hyp.begin() + long(i + n));
        ++c.totals[n - 1];
        if (clip.count(g)) c.matches[n - 1] += std::min(hyp_counts.at(g), clip.at(g));
      }
      continue;
    }
    for (const auto& [g, k] : ngrams(hyp, n)) {
      const std::size_t mine = o.distinct ? 1 : k;
      c.totals[n - 1] += mine;
      if (clip.count(g)) c.matches[n - 1] += o.unclipped ? mine : std::min(mine, clip.at(g));
    }
  }
  c.hyp_length = hyp.size();
  c.ref_length = references.front().size();
  if (o.first_ref) return c;
  if (o.average) {  // the mean reference length
    std::size_t sum = 0;
    for (const auto& r : references) sum += r.size();
    c.ref_length = sum / references.size();
    return c;
  }
  if (o.unsigned_distance) {  // len - c in std::size_t: wraps around when the reference is shorter
    std::size_t best = SIZE_MAX;
    for (const auto& r : references)
      if (r.size() - c.hyp_length < best) best = r.size() - c.hyp_length, c.ref_length = r.size();
    return c;
  }
  for (const auto& r : references) {
    const std::size_t len = r.size();
    if (o.shortest) {
      c.ref_length = std::min(c.ref_length, len);
      continue;
    }
    auto d = [&](std::size_t x) { return x > c.hyp_length ? x - c.hyp_length : c.hyp_length - x; };
    if (d(len) < d(c.ref_length) ||
        (!o.tie_first && d(len) == d(c.ref_length) && (o.tie_longer ? len > c.ref_length : len < c.ref_length)))
      c.ref_length = len;
  }
  return c;
}

inline double bleu_of(const Bleu& o, const std::vector<Counts>& sentences) {
  if (o.sentence_average) {
    Bleu right;
    double sum = 0.0;
    for (const auto& s : sentences) sum += bleu_of(right, {s});
    return sum / double(sentences.size());
  }
  Counts t;
  double bp_sum = 0.0;
  std::array<double, 4> macro{};
  for (const auto& s : sentences) {
    for (std::size_t n = 0; n < 4; ++n) {
      t.matches[n] += s.matches[n], t.totals[n] += s.totals[n];
      macro[n] += double(s.matches[n]) / double(s.totals[n]) / double(sentences.size());
    }
    t.hyp_length += s.hyp_length, t.ref_length += s.ref_length;
    bp_sum += s.hyp_length > s.ref_length ? 1.0 : std::exp(1.0 - double(s.ref_length) / double(s.hyp_length));
  }
  const double c = double(t.hyp_length), r = double(t.ref_length);
  double bp = c > r ? 1.0 : std::exp(1.0 - r / c);
  if (o.bp_always) bp = std::exp(1.0 - r / c);
  if (o.bp_inverted) bp = c > r ? 1.0 : std::exp(1.0 - c / r);
  if (o.bp_per_sentence) bp = bp_sum / double(sentences.size());
  std::array<double, 4> p{};
  for (std::size_t n = 0; n < 4; ++n)
    p[n] = o.macro_precision ? macro[n]
           : o.add_one       ? (double(t.matches[n]) + 1.0) / (double(t.totals[n]) + 1.0)  // smoothed
                             : double(t.matches[n]) / double(t.totals[n]);
  if (o.arithmetic) return bp * (p[0] + p[1] + p[2] + p[3]) / 4.0;
  double log_sum = 0.0;
  for (double pn : p) {
    if (pn > 0) log_sum += std::log(pn);
    else if (!o.zero_skipped) return 0.0;
  }
  return bp * std::exp(log_sum / 4.0);
}

inline double corpus_bleu(const Bleu& o, const std::vector<std::vector<Symbols>>& references,
                          const std::vector<Symbols>& hypotheses) {
  std::vector<Counts> sentences;
  for (std::size_t i = 0; i < hypotheses.size(); ++i) sentences.push_back(sentence_counts(o, references[i], hypotheses[i]));
  return bleu_of(o, sentences);
}

inline BpeBleu with_learn(Learn o) {
  BpeBleu s = lab::solutions::bpe_bleu::solution();
  s.learn_merges = [o](const WordCounts& w, std::size_t n) { return learn_merges(o, w, n); };
  return s;
}

inline BpeBleu with_apply(Apply o) {
  BpeBleu s = lab::solutions::bpe_bleu::solution();
  s.apply_merges = [o](const std::vector<Pair>& m, const std::string& w) { return apply_merges(o, m, w); };
  return s;
}

inline BpeBleu with_bleu(Bleu o) {
  BpeBleu s = lab::solutions::bpe_bleu::solution();
  s.sentence_counts = [o](const std::vector<Symbols>& r, const Symbols& h) { return sentence_counts(o, r, h); };
  s.corpus_bleu = [o](const std::vector<std::vector<Symbols>>& r, const std::vector<Symbols>& h) {
    return corpus_bleu(o, r, h);
  };
  return s;
}

inline std::vector<Planted<BpeBleu>> all() {
  std::vector<Planted<BpeBleu>> out;
  auto learn = [&](const char* mistake, auto set, const char* points_at) {
    Learn o;
    set(o);
    out.push_back({mistake, with_learn(o), points_at, true});
  };
  learn("pair counts not weighted by word frequency", [](Learn& o) { o.unweighted = true; },
        "not weighted by the word's frequency");
  learn("the words as one sequence: pairs counted and merged across word boundaries", [](Learn& o) { o.stream = true; },
        "across word boundaries");
  learn("overlapping occurrences both merged (a a a -> aa aa)", [](Learn& o) { o.merge.overlap = true; },
        "overlapping occurrences of a pair both merged");
  learn("ties to the pair last in string order (>=)", [](Learn& o) { o.tie_last = true; },
        "ties broken to the pair last in string order");
  learn("ties to the pair met first in the words (the paper's max over a dict)",
        [](Learn& o) { o.tie_first_met = true; }, "ties broken to the pair met first");
  learn("no end-of-word mark", [](Learn& o) { o.no_eow = true; }, "no end-of-word mark");
  learn("pair counts computed once, before the first merge", [](Learn& o) { o.no_recount = true; },
        "the pair counts computed once");
  learn("words split into bytes", [](Learn& o) { o.bytes = true; }, "split into bytes");
  learn("a pair overlapping itself counted once (a a a: (a, a) once)", [](Learn& o) { o.overlap_counted_once = true; },
        "counted once in a word where it occurs twice");
  learn("the end-of-word mark glued to the last character (the paper's r·)", [](Learn& o) { o.glued_eow = true; },
        "glued to the last character");
  learn("only the first occurrence of the pair in a word merged", [](Learn& o) { o.merge.first_only = true; },
        "only the first occurrence");
  learn("one merge short (a loop that runs n - 1 times)", [](Learn& o) { o.one_short = true; }, "one merge short");
  learn("ties to the pair met last in the words (>= over the pairs in the order met)",
        [](Learn& o) { o.tie_last_met = true; }, "a tie, broken another way");
  learn("stops when the best pair occurs once (the library's min_frequency 2, copied)",
        [](Learn& o) { o.min_count_2 = true; }, "stopped after");

  auto apply = [&](const char* mistake, auto set, const char* points_at) {
    Apply o;
    set(o);
    out.push_back({mistake, with_apply(o), points_at, true});
  };
  apply("the leftmost learned pair merged first", [](Apply& o) { o.leftmost = true; },
        "the leftmost learned pair merged first");
  apply("a new word without the end-of-word mark", [](Apply& o) { o.no_eow = true; }, "no end-of-word mark");
  apply("the merges applied in order, stopping at the first one the word lacks", [](Apply& o) { o.stop_at_absent = true; },
        "stopped at the first merge the word lacks");
  apply("overlapping occurrences both merged when applying", [](Apply& o) { o.merge.overlap = true; },
        "overlapping occurrences of a pair both merged");
  apply("the latest-learned pair merged first", [](Apply& o) { o.latest = true; }, "the latest-learned pair");
  apply("the symbols written as Bpe::encode writes them (@@, no </w>)", [](Apply& o) { o.library_form = true; },
        "the library's written form");

  auto bleu = [&](const char* mistake, auto set, const char* points_at) {
    Bleu o;
    set(o);
    out.push_back({mistake, with_bleu(o), points_at, true});
  };
  bleu("n-gram matches not clipped", [](Bleu& o) { o.unclipped = true; }, "not clipped");
  bleu("clipped by the sum of the references' counts", [](Bleu& o) { o.clip_sum = true; },
       "the clip summed over the references");
  bleu("r the shortest reference length", [](Bleu& o) { o.shortest = true; }, "r from the shortest reference");
  bleu("r closest, ties to the longer", [](Bleu& o) { o.tie_longer = true; }, "broken to the longer");
  bleu("r the first reference's length", [](Bleu& o) { o.first_ref = true; }, "r from the first reference");
  bleu("distinct n-grams counted once", [](Bleu& o) { o.distinct = true; }, "each distinct n-gram counted once");
  bleu("r closest, a tie kept to the first reference met", [](Bleu& o) { o.tie_first = true; },
       "kept to the first one met");
  bleu("r closest by a distance in unsigned integers", [](Bleu& o) { o.unsigned_distance = true; },
       "computed in std::size_t");
  bleu("r the average reference length", [](Bleu& o) { o.average = true; }, "r the average reference length");
  bleu("the clipped count added at every position", [](Bleu& o) { o.per_occurrence = true; },
       "at every position the n-gram occurs");
  bleu("the precisions smoothed by add-one", [](Bleu& o) { o.add_one = true; }, "the precisions smoothed");
  bleu("the average of sentence BLEU", [](Bleu& o) { o.sentence_average = true; },
       "the average of sentence BLEU scores");
  bleu("precisions averaged per sentence", [](Bleu& o) { o.macro_precision = true; },
       "the precisions averaged per sentence");
  bleu("the arithmetic mean of the precisions", [](Bleu& o) { o.arithmetic = true; }, "the arithmetic mean");
  bleu("the brevity penalty applied when the corpus is longer", [](Bleu& o) { o.bp_always = true; },
       "applied when the hypotheses are longer");
  bleu("the brevity penalty as exp(1 - c / r)", [](Bleu& o) { o.bp_inverted = true; }, "exp(1 - c / r)");
  bleu("the brevity penalty per sentence, averaged", [](Bleu& o) { o.bp_per_sentence = true; },
       "the brevity penalty per sentence");
  bleu("a zero precision skipped in the mean", [](Bleu& o) { o.zero_skipped = true; }, "a zero precision skipped");
  return out;
}

}  // namespace bpe_bleu
}  // namespace planted
}  // namespace lab
