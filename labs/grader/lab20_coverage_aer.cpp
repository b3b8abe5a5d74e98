// The checks of lab20_coverage_aer.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab20_coverage_aer.hpp"

#include "labs/grader/grader.hpp"

#include <algorithm>
#include <cmath>

namespace lab {
namespace coverage_aer {

using Sizes = std::vector<std::size_t>;
using Corpus = std::vector<Links>;

namespace hint {
inline const char* penalty =
    "cov_j = sum over the target steps t < steps[b] of a_tj (attention [B, T, S]: sum over axis 1), then "
    "P_b = sum over the real source positions j < src_lengths[b] of (1 - cov_j)^2";
inline const char* masks =
    "only the steps t < steps[b] count (a model attends at padded target steps too), and only the source positions "
    "j < src_lengths[b] (padding is no word to cover): multiply by constant masks [B, T, 1] and [B, S]";
inline const char* gradients =
    "build P from the attention with attn's ops (*, sum, pow, 1.0 - x), the masks constant tensors, nothing copied "
    "through an array or detached: autograd then finds the backward";
inline const char* wrong_values =
    "the gradient of a wrong function is wrong too: the checks of its values name the mistake; fix those first";
inline const char* random =
    "B is attention.size(0), T attention.size(1), S attention.size(2); steps[b] may be less than T and src_lengths[b] "
    "less than S";
inline const char* score =
    "c_j = sum over all the steps t of a_tj (weights [T, S]: down a column), for j < src_length; then beta * sum_j "
    "log(max(min(c_j, 1), 1e-10)): never positive, 0 when every word got a weight of at least 1";
inline const char* floor =
    "a word no step attended has c_j = 0 and log 0 = -inf: floor c_j at 1e-10, as the chapter's coverage_score does "
    "(log(max(min(c_j, 1), 1e-10))), so that such a word costs log(1e-10) times beta, the most any word costs; "
    "leaving it out would make attending to nothing free";
inline const char* links =
    "one link per target step t < steps: (t, the first j < src_length with the largest a_tj), both counted from 0; "
    "the argmax runs over a row (the source positions), not down a column";
inline const char* aer =
    "AER = 1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|), with P = possible ∪ S (every sure link is possible), the four counts "
    "summed over the sentences of the corpus before the one ratio; 0 when |A| + |S| = 0";
}  // namespace hint

// ---- the chapter's coverage penalty and the usual mistakes, on arrays ----

enum class Cov {
  right, wrong_axis, steps_ignored, padding_counted, padding_zeroed, absolute, unsquared, mean, mean_steps,
  lengths_swapped
};

inline Array penalty_of(const Array& a, const Sizes& steps, const Sizes& L, Cov v) {
  const std::size_t B = a.shape()[0], T = a.shape()[1], S = a.shape()[2];
  Array out = xt::zeros<double>({B});
  for (std::size_t b = 0; b < B; ++b) {
    const std::size_t steps_b = v == Cov::lengths_swapped ? L[b] : steps[b];
    const std::size_t L_b = v == Cov::lengths_swapped ? steps[b] : L[b];
    const std::size_t n_t = v == Cov::steps_ignored ? T : std::min(T, steps_b);
    const std::size_t n_s = v == Cov::padding_counted || v == Cov::padding_zeroed ? S : std::min(S, L_b);
    if (v == Cov::wrong_axis) {  // cov_t = sum over the source, per target step
      for (std::size_t t = 0; t < n_t; ++t) {
        double c = 0.0;
        for (std::size_t j = 0; j < n_s; ++j) c += a(b, t, j);
        out(b) += (1.0 - c) * (1.0 - c);
      }
      continue;
    }
    for (std::size_t j = 0; j < n_s; ++j) {
      double c = 0.0;
      if (v != Cov::padding_zeroed || j < L_b)  // padding_zeroed: cov masked, the sum over j not
        for (std::size_t t = 0; t < n_t; ++t) c += a(b, t, j);
      if (v == Cov::mean_steps && n_t) c /= double(n_t);
      out(b) += v == Cov::absolute ? std::abs(1.0 - c) : v == Cov::unsquared ? 1.0 - c : (1.0 - c) * (1.0 - c);
    }
    if (v == Cov::mean && n_s) out(b) /= double(n_s);
  }
  return out;
}

// "; your values are what this mistake gives: ..." when exactly one usual mistake gives the learner's values.
// Two mistakes with the same words (two ways to count the padding) name one mistake.
template <class V>
std::string which_mistake(const std::vector<std::pair<V, const char*>>& mistakes, const std::function<bool(V)>& gives,
                          const char* noun = "values") {
  std::vector<std::string> matched;
  for (const auto& [v, what] : mistakes)
    if (gives(v) && std::find(matched.begin(), matched.end(), what) == matched.end()) matched.push_back(what);
  if (matched.size() == 1) return std::string("; your ") + noun + " are what this mistake gives: " + matched[0];
  return "";
}

inline bool close_to(const Array& want, const Array& got) {
  try {
    expect_close("", want, got, "", 1e-9, 1e-12);
    return true;
  } catch (const Mismatch&) {
    return false;
  }
}

inline std::string sizes_str(const Sizes& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

inline Sizes sizes_of(const Array& a) {
  Sizes out;
  for (double v : a) out.push_back(static_cast<std::size_t>(v));
  return out;
}

inline void compare_penalty(const Array& expected, const Array& att, const Sizes& steps, const Sizes& L,
                            const Tensor& got_tensor) {
  const std::string what = "coverage_penalty(attention, steps, src_lengths)";
  Array got = array_of(got_tensor, what);
  const std::string inputs = "attention " + shape_str(Shape(att.shape().begin(), att.shape().end())) + ", steps " +
                             sizes_str(steps) + ", src_lengths " + sizes_str(L);
  try {
    expect_close(what, expected, got, inputs, 1e-9, 1e-12);
  } catch (const Mismatch& e) {
    // 1 - cov_j is positive wherever cov_j < 1: the two are one mistake on most inputs
    const char* unsquared = "|1 - cov_j| instead of its square (or 1 - cov_j unsquared): the penalty is (1 - cov_j)^2";
    const char* padding =
        "the padding positions j >= src_lengths[b] counted, each adding (1 - cov_j)^2 (1 where its coverage is 0): "
        "padding is no word to cover, so the mask [B, S] multiplies the squared terms before the sum over j";
    const std::vector<std::pair<Cov, const char*>> mistakes = {
        {Cov::wrong_axis,
         "coverage summed over the source positions (axis 2), one per target step: every softmax row sums to 1, so "
         "that penalty is about 0; cov_j sums over the target steps (axis 1), one per source position"},
        {Cov::steps_ignored, "the target steps t >= steps[b] counted: only the first steps[b] steps are the output's"},
        {Cov::padding_counted, padding},
        {Cov::padding_zeroed, padding},
        {Cov::absolute, unsquared},
        {Cov::unsquared, unsquared},
        {Cov::mean, "the mean over the source positions: the penalty is their sum"},
        {Cov::mean_steps, "cov_j the mean over the target steps: it is their sum, the total weight word j got"},
        {Cov::lengths_swapped,
         "steps and src_lengths swapped: steps[b] counts the target steps (axis 1), src_lengths[b] the source "
         "positions (axis 2)"}};
    throw Mismatch(e.what() + which_mistake<Cov>(mistakes, [&](Cov v) {
                     return close_to(penalty_of(att, steps, L, v), got);
                   }));
  }
}

// ---- GNMT's coverage penalty and the usual mistakes, on arrays ----

enum class Score {
  right, no_min, wrong_axis, unguarded, skipped, padding_counted, sign, no_beta, log10, mean_steps, mean_words,
  last_word_out
};

inline double score_of(const Array& w, std::size_t src_length, double beta, Score v) {
  const std::size_t T = w.shape()[0], S = w.shape()[1];
  const std::size_t n = v == Score::padding_counted ? S : v == Score::last_word_out ? src_length - 1 : src_length;
  double total = 0.0;
  if (v == Score::wrong_axis) {
    for (std::size_t t = 0; t < T; ++t) {
      double c = 0.0;
      for (std::size_t j = 0; j < src_length; ++j) c += w(t, j);
      total += std::log(std::max(std::min(c, 1.0), 1e-10));
    }
    return beta * total;
  }
  for (std::size_t j = 0; j < n; ++j) {
    double c = 0.0;
    for (std::size_t t = 0; t < T; ++t) c += w(t, j);
    if (v == Score::mean_steps) c /= double(T);
    if (v == Score::skipped && c == 0.0) continue;
    const double capped = v == Score::no_min ? c : std::min(c, 1.0);
    const double x = v == Score::unguarded || v == Score::skipped ? capped : std::max(capped, 1e-10);
    total += v == Score::log10 ? std::log10(x) : std::log(x);
  }
  if (v == Score::no_beta) return total;
  if (v == Score::mean_words) return n ? beta * total / double(n) : 0.0;
  return (v == Score::sign ? -beta : beta) * total;
}

inline std::string diagnose_score(const Array& w, std::size_t src_length, double beta, double got) {
  const std::vector<std::pair<Score, const char*>> mistakes = {
      {Score::no_min,
       "log(c_j) without min(c_j, 1): a word attended more than once then adds log(c_j) > 0, so the penalty rewards "
       "over-attention; GNMT's penalty is one-sided, min(c_j, 1) makes such a word cost 0"},
      {Score::wrong_axis,
       "c summed over the source positions (along a row), one per target step: every softmax row sums to 1, so that "
       "penalty is 0; c_j sums over the target steps, down column j"},
      {Score::unguarded, "log(0) = -inf for a word no step attended: floor c_j at 1e-10 before the log"},
      {Score::skipped,
       "a word no step attended left out of the sum: it must cost the most, log(1e-10) times beta (c_j floored at "
       "1e-10), or attending to nothing would be free"},
      {Score::padding_counted,
       "the padding positions j >= src_length counted, each costing beta * log(1e-10): only the real source words "
       "count"},
      {Score::sign, "the sign flipped: the penalty is beta * sum_j log(min(c_j, 1)), never positive (beta >= 0)"},
      {Score::no_beta, "beta left out: the penalty is beta * sum_j log(max(min(c_j, 1), 1e-10))"},
      {Score::log10, "log10 instead of the natural log: GNMT's penalty uses ln (std::log)"},
      {Score::mean_steps, "c_j the mean over the steps: it is their sum, the total weight word j got"},
      {Score::mean_words, "the mean over the source words: the penalty is their sum"},
      {Score::last_word_out, "the last source word j = src_length - 1 left out: every j < src_length counts"}};
  return which_mistake<Score>(mistakes, [&](Score v) {
    const double want = score_of(w, src_length, beta, v);
    return want == got || (std::isfinite(want) && std::abs(want - got) <= 1e-12 + 1e-9 * std::abs(want));
  });
}

inline void compare_score(const std::string& inputs, double expected, const Array& w, std::size_t src_length,
                          double beta, double got) {
  const std::string what = "coverage_score(weights, src_length, beta)";
  try {
    // atol 1e-8: a floor written log(min(c_j, 1) + 1e-10) is as good as the chapter's max(., 1e-10)
    expect_close(what, Array{expected}, Array{got}, inputs, 1e-9, 1e-8);
  } catch (const Mismatch& e) {
    throw Mismatch(e.what() + diagnose_score(w, src_length, beta, got));
  }
}

// ---- hard links and the usual mistakes ----

enum class Peak {
  right, wrong_axis, one_based, padding, last_max, steps_ignored, swapped, steps_minus_one, every_tied_max,
  last_word_out
};

inline Links links_of(const Array& w, std::size_t src_length, std::size_t steps, Peak v) {
  const std::size_t T = w.shape()[0], S = w.shape()[1];
  Links out;
  if (v == Peak::wrong_axis) {  // for every source position, the step that attends to it most
    for (std::size_t j = 0; j < src_length; ++j) {
      std::size_t best = 0;
      for (std::size_t t = 1; t < steps; ++t)
        if (w(t, j) > w(best, j)) best = t;
      if (steps) out.insert({best, j});
    }
    return out;
  }
  const std::size_t n_t = v == Peak::steps_ignored ? T : v == Peak::steps_minus_one ? (steps ? steps - 1 : 0) : steps;
  const std::size_t n_s =
      v == Peak::padding ? S : v == Peak::last_word_out ? std::max<std::size_t>(1, src_length - 1) : src_length;
  for (std::size_t t = 0; t < n_t; ++t) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < n_s; ++j)
      if (v == Peak::last_max ? w(t, j) >= w(t, best) : w(t, j) > w(t, best)) best = j;
    out.insert(v == Peak::one_based ? Link{t + 1, best + 1} : v == Peak::swapped ? Link{best, t} : Link{t, best});
    if (v == Peak::every_tied_max)
      for (std::size_t j = 0; j < n_s; ++j)
        if (w(t, j) == w(t, best)) out.insert({t, j});
  }
  return out;
}

inline std::string links_str(const Links& links) {
  std::string out = "{";
  bool first = true;
  for (const auto& [t, j] : links) {
    out += (first ? "(" : ", (") + std::to_string(t) + ", " + std::to_string(j) + ")";
    first = false;
  }
  return out + "}";
}

inline void compare_links(const Links& expected, const Array& w, std::size_t src_length, std::size_t steps,
                          const Links& got, bool diagnose = true) {
  if (got == expected) return;
  const std::string inputs = "weights " + shape_str(Shape(w.shape().begin(), w.shape().end())) + ", src_length " +
                             std::to_string(src_length) + ", steps " + std::to_string(steps);
  const std::vector<std::pair<Peak, const char*>> mistakes = {
      {Peak::wrong_axis,
       "the argmax taken down a column (for each source position, the step that attends to it most): a link per "
       "target step t is (t, argmax over the source positions j of a_tj), along row t"},
      {Peak::one_based, "links counted from 1: (t, j) are positions counted from 0, as the gold links are"},
      {Peak::padding, "the argmax ran over the padding positions j >= src_length too: only the real ones can be linked"},
      {Peak::last_max, "a tie goes to the last maximum (>=): the chapter's argmax keeps the first (>)"},
      {Peak::steps_ignored,
       "links for the rows t >= steps too (here every row of weights): only the steps t < steps get one (<eos> has "
       "none)"},
      {Peak::swapped, "links written (j, t): a link is (target step t, source position j)"},
      {Peak::steps_minus_one,
       "the last step t = steps - 1 left out: `steps` already leaves <eos> out, every t < steps gets a link"},
      {Peak::every_tied_max, "a link to every tied maximum: one link per step, to the first maximum"},
      {Peak::last_word_out, "the last source word j = src_length - 1 left out of the argmax: every j < src_length counts"}};
  std::string why;
  if (diagnose)
    why = which_mistake<Peak>(mistakes, [&](Peak v) { return links_of(w, src_length, steps, v) == got; }, "links");
  throw Mismatch("attention_links (inputs: " + inputs + "): expected " + links_str(expected) + ", received " +
                 links_str(got) + why);
}

inline Links links_from(const Array& rows) {  // [n, 2] -> links
  Links out;
  for (std::size_t k = 0; k < rows.shape()[0]; ++k)
    out.insert({static_cast<std::size_t>(rows(k, 0)), static_cast<std::size_t>(rows(k, 1))});
  return out;
}

inline Corpus corpus_from(const Array& rows, std::size_t sentences) {  // [n, 3] (sentence, t, j) -> a corpus
  Corpus out(sentences);
  for (std::size_t k = 0; k < rows.shape()[0]; ++k)
    out.at(static_cast<std::size_t>(rows(k, 0)))
        .insert({static_cast<std::size_t>(rows(k, 1)), static_cast<std::size_t>(rows(k, 2))});
  return out;
}

// ---- AER and the usual mistakes ----

enum class Aer { right, sure_twice, p_without_s, over_p, mean_sentences, int_division, one_minus_f1, repeat_twice, merged };

inline double aer_of(const Corpus& a, const Corpus& s, const Corpus& p, Aer v) {
  if (v == Aer::merged) {  // one set of links for the whole corpus
    Links all_a, all_s, all_p;
    for (std::size_t k = 0; k < a.size(); ++k) {
      all_a.insert(a[k].begin(), a[k].end()), all_s.insert(s[k].begin(), s[k].end());
      all_p.insert(p[k].begin(), p[k].end());
    }
    return aer_of({all_a}, {all_s}, {all_p}, Aer::right);
  }
  double n_a = 0, n_s = 0, n_p = 0, as = 0, ap = 0, sum_sentences = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    double ka = double(a[k].size()), ks = double(s[k].size()), kas = 0, kap = 0;
    Links pk = p[k];
    pk.insert(s[k].begin(), s[k].end());
    for (const Link& l : a[k]) {
      const bool sure = s[k].count(l) > 0;
      kas += sure;
      kap += v == Aer::p_without_s    ? p[k].count(l) > 0
             : v == Aer::repeat_twice ? double(sure) + double(p[k].count(l))
                                      : sure || p[k].count(l) > 0;
    }
    if (v == Aer::sure_twice) kap = kas;
    n_a += ka, n_s += ks, n_p += double(pk.size()), as += kas, ap += kap;
    sum_sentences += ka + ks ? 1.0 - (kas + kap) / (ka + ks) : 0.0;
  }
  if (v == Aer::mean_sentences) return a.empty() ? 0.0 : sum_sentences / double(a.size());
  if (v == Aer::int_division) return n_a + n_s ? 1.0 - std::floor((as + ap) / (n_a + n_s)) : 0.0;
  if (v == Aer::one_minus_f1) {
    const double precision = n_a ? ap / n_a : 0.0, recall = n_s ? as / n_s : 0.0;
    return n_a + n_s == 0 ? 0.0 : precision + recall > 0 ? 1.0 - 2 * precision * recall / (precision + recall) : 1.0;
  }
  const double denominator = v == Aer::over_p ? n_a + n_p : n_a + n_s;
  return denominator ? 1.0 - (as + ap) / denominator : 0.0;
}

inline void compare_aer(const std::string& inputs, double expected, const Corpus& a, const Corpus& s, const Corpus& p,
                        double got, bool diagnose = true) {
  try {
    expect_close("aer(a, sure, possible)", Array{expected}, Array{got}, inputs, 1e-12, 1e-14);
  } catch (const Mismatch& e) {
    const std::vector<std::pair<Aer, const char*>> mistakes = {
        {Aer::sure_twice,
         "|A ∩ S| counted twice, the possible links ignored: the second term is |A ∩ P|, P = possible ∪ S, so a link "
         "of A that is only possible counts once"},
        {Aer::p_without_s,
         "|A ∩ P| counted with the possible links alone: P contains S (every sure link is possible too), P = possible "
         "∪ S"},
        {Aer::over_p, "divided by |A| + |P|: the denominator is |A| + |S|"},
        {Aer::mean_sentences,
         "the mean of the sentences' AERs: the counts add up over the corpus first, then one ratio"},
        {Aer::int_division,
         "the ratio taken in integer division (the counts are whole numbers): convert to double before dividing"},
        {Aer::one_minus_f1,
         "1 - F1 of precision |A ∩ P| / |A| and recall |A ∩ S| / |S|: that is the AER only when P = S; the AER is "
         "1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|)"},
        {Aer::repeat_twice,
         "a sure link of A listed in possible too counted twice in |A ∩ P|: P = possible ∪ S is a set, a link is in "
         "it once"},
        {Aer::merged,
         "the sentences' links merged into one set: (t, j) of one sentence and (t, j) of another are two links; "
         "count each sentence against its own sure and possible links, then add the counts"}};
    std::string why;
    std::size_t links = 0;
    for (std::size_t k = 0; k < a.size(); ++k) links += a[k].size() + s[k].size();
    if (!std::isfinite(got) && links == 0)
      throw Mismatch(e.what() + std::string("; |A| + |S| = 0 here, and 0/0 is not a number: return 0 then, as the "
                                            "library's AerCounts::aer() does"));
    if (diagnose)
      why = which_mistake<Aer>(mistakes, [&](Aer v) {
        const double want = aer_of(a, s, p, v);
        return want == got || (std::isfinite(want) && std::abs(want - got) <= 1e-14 + 1e-12 * std::abs(want));
      });
    throw Mismatch(e.what() + why);
  }
}

inline std::string corpus_str(const Corpus& a, const Corpus& s, const Corpus& p) {
  std::size_t na = 0, ns = 0, np = 0, repeated = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    na += a[k].size(), ns += s[k].size();
    for (const Link& l : p[k]) (s[k].count(l) ? repeated : np) += 1;
  }
  return std::to_string(a.size()) + " sentences, " + std::to_string(na) + " links in A, " + std::to_string(ns) +
         " sure, " + std::to_string(np) + " possible-only" +
         (repeated ? ", " + std::to_string(repeated) + " sure links repeated in possible" : std::string());
}

// Softmax rows over the first L positions, 0 on the rest; `zero_column` (< L) gets no weight at all.
inline Array masked_rows(Random& rng, std::size_t T, std::size_t S, std::size_t L, long zero_column = -1,
                         double scale = 3.0) {
  Array w = xt::zeros<double>({T, S});
  for (std::size_t t = 0; t < T; ++t) {
    double total = 0.0;
    for (std::size_t j = 0; j < L; ++j)
      if (long(j) != zero_column) total += w(t, j) = std::exp(rng.uniform(-scale, scale));
    for (std::size_t j = 0; j < L; ++j) w(t, j) /= total;
  }
  return w;
}

Result grade(const CoverageAer& m, std::ostream& os) {
  Grader grader(20, "the coverage penalties and the alignment error rate", os);
  Reference ref("lab20_coverage_aer");

  // ---- the chapter's coverage penalty (a training loss) ----
  auto fixed_penalty = [&](const std::string& c) {
    attn::no_grad guard;
    Array att = ref.array(c, "attention");
    Sizes steps = sizes_of(ref.array(c, "steps")), L = sizes_of(ref.array(c, "src_lengths"));
    compare_penalty(ref.array(c, "penalty"), att, steps, L, m.coverage_penalty(Tensor(att), steps, L));
  };
  grader.check("coverage_penalty: the chapter's tiny case vs PyTorch (attention [1, 3, 4], 2 steps, 3 source tokens)",
               hint::penalty, [&] { fixed_penalty("tiny"); });
  grader.check("coverage_penalty vs PyTorch, padded (attention [3, 5, 4], steps 5, 3, 4, src_lengths 4, 2, 3)",
               hint::masks, [&] { fixed_penalty("padded"); });
  grader.check("coverage_penalty: gradient of the attention vs PyTorch (of sum(P * r); the padded case)",
               hint::gradients, [&] {
                 Tensor att = ref.tensor("padded", "attention", true);
                 Sizes steps = sizes_of(ref.array("padded", "steps")), L = sizes_of(ref.array("padded", "src_lengths"));
                 Tensor p = m.coverage_penalty(att, steps, L);
                 if (!p.requires_grad())
                   throw Mismatch("coverage_penalty(attention) does not require grad: it was not built from the "
                                  "attention with attn's ops");
                 attn::sum(p * ref.tensor("padded", "r")).backward();
                 if (!att.grad().defined())
                   throw Mismatch("attention.grad() is undefined: the penalty does not depend on the attention "
                                  "through attn's ops");
                 try {
                   expect_close("the gradient of the attention", ref.array("padded", "grad_attention"), att.grad(),
                                "attention [3, 5, 4], steps (5, 3, 4), src_lengths (4, 2, 3)", 1e-9, 1e-12);
                 } catch (const Mismatch& err) {
                   if (!close_to(ref.array("padded", "penalty"), array_of(p, "coverage_penalty")))
                     throw Mismatch(err.what() + std::string("; coverage_penalty's values are wrong too"),
                                    hint::wrong_values);
                   throw;
                 }
               });
  grader.check("coverage_penalty, random B, T, S, steps and src_lengths, vs the chapter's formula", hint::random, [&] {
    Random rng(20000);
    for (int trial = 0; trial < 12; ++trial) {
      std::size_t B = rng.integer(1, 3), T = rng.integer(1, 5), S = rng.integer(1, 5);
      Sizes steps(B), L(B);
      Array att = xt::zeros<double>({B, T, S});
      for (std::size_t b = 0; b < B; ++b) {
        steps[b] = trial < 3 ? T : rng.integer(0, T);
        L[b] = trial < 3 ? S : rng.integer(1, S);
        const Array rows = masked_rows(rng, T, S, L[b]);
        for (std::size_t t = 0; t < T; ++t)
          for (std::size_t j = 0; j < S; ++j) att(b, t, j) = rows(t, j);
      }
      attn::no_grad guard;
      compare_penalty(penalty_of(att, steps, L, Cov::right), att, steps, L, m.coverage_penalty(Tensor(att), steps, L));
    }
  });
  grader.check("gradcheck of coverage_penalty, random shapes, steps and src_lengths", hint::gradients, [&] {
    Random rng(20100);
    for (int trial = 0; trial < 4; ++trial) {
      std::size_t B = rng.integer(1, 2), T = rng.integer(1, 4), S = rng.integer(1, 4);
      Sizes steps(B), L(B);
      for (std::size_t b = 0; b < B; ++b) steps[b] = rng.integer(1, T), L[b] = rng.integer(1, S);
      Tensor att(rng.array({B, T, S}, 0.0, 1.0), true);
      if (!m.coverage_penalty(att, steps, L).requires_grad())
        throw Mismatch("coverage_penalty(attention) does not require grad: it was not built from the attention with "
                       "attn's ops");
      expect_gradients("coverage_penalty", [&](const std::vector<Tensor>& in) { return m.coverage_penalty(in[0], steps, L); },
                       {att}, {"attention"});
    }
  });

  // ---- GNMT's coverage penalty (beam search) ----
  auto fixed_score = [&](const std::string& c) {
    Array w = ref.array(c, "weights");
    const std::size_t L = static_cast<std::size_t>(ref.scalar(c, "src_length"));
    const double beta = ref.scalar(c, "beta");
    const std::string inputs = "weights " + shape_str(Shape(w.shape().begin(), w.shape().end())) + ", src_length " +
                               std::to_string(L) + ", beta " + num_str(beta);
    compare_score(inputs, ref.scalar(c, "cp"), w, L, beta, m.coverage_score(Tensor(w), L, beta));
  };
  grader.check("coverage_score vs PyTorch: words attended more and less than once (weights [4, 5], beta 0.2)",
               hint::score, [&] { fixed_score("gnmt_ordinary"); });
  grader.check("coverage_score vs PyTorch, padded (weights [4, 6], src_length 4, beta 0.4)", hint::score,
               [&] { fixed_score("gnmt_padded"); });
  grader.check("coverage_score vs PyTorch: a word no step attends (c_2 = 0; weights [3, 4], beta 0.3)", hint::score,
               [&] {
                 try {
                   fixed_score("gnmt_unattended");
                 } catch (const Mismatch& e) {
                   bool attended_right = true;  // the same weights with c_2 = 0.05
                   try {
                     fixed_score("gnmt_attended");
                   } catch (const Mismatch&) {
                     attended_right = false;
                   }
                   const double got = m.coverage_score(Tensor(ref.array("gnmt_unattended", "weights")), 4, 0.3);
                   if (!attended_right)
                     throw Mismatch(e.what() + std::string("; wrong too when every word gets some weight (c_2 = "
                                                           "0.05), so the mistake is not log 0: the checks before "
                                                           "name it"),
                                    hint::score);
                   throw Mismatch(e.what() + std::string(std::isfinite(got)
                                                             ? "; right when every word gets some weight (c_2 = 0.05)"
                                                             : "; right when every word gets some weight (c_2 = 0.05), "
                                                               "not finite when one gets none"),
                                  hint::floor);
                 }
               });
  grader.check("coverage_score, random shapes, src_length and beta (words never attended in some), vs "
               "models::coverage_score", hint::score, [&] {
                 Random rng(20200);
                 for (int trial = 0; trial < 12; ++trial) {
                   std::size_t T = rng.integer(1, 6), S = rng.integer(1, 6), L = rng.integer(1, S);
                   long zero = trial % 3 == 2 && L > 1 ? long(rng.integer(0, L - 1)) : -1;
                   Array w = masked_rows(rng, T, S, L, zero);
                   const double beta = rng.uniform(0.1, 1.0);
                   const std::string inputs = "weights " + shape_str({T, S}) + ", src_length " + std::to_string(L) +
                                              ", beta " + num_str(beta);
                   compare_score(inputs, attn::models::coverage_score(w, L, beta), w, L, beta,
                                 m.coverage_score(Tensor(w), L, beta));
                 }
               });

  // ---- hard links: the peak of every step ----
  auto fixed_links = [&](const std::string& c) {
    Array w = ref.array(c, "weights");
    const std::size_t L = static_cast<std::size_t>(ref.scalar(c, "src_length"));
    const std::size_t steps = static_cast<std::size_t>(ref.scalar(c, "steps"));
    compare_links(links_from(ref.array(c, "links")), w, L, steps, m.attention_links(Tensor(w), L, steps));
  };
  grader.check("attention_links: the chapter's toy (weights [5, 5], 4 steps with gold: {(0,0), (1,2), (2,2), (3,4)})",
               hint::links, [&] { fixed_links("links_toy"); });
  grader.check("attention_links vs PyTorch's argmax: T != S, a padding position with the largest weight, a tie, a "
               "step past steps (weights [6, 5], src_length 4, steps 5)",
               hint::links, [&] { fixed_links("links_corners"); });
  grader.check("attention_links, random shapes, src_length and steps (ties in half the trials), vs "
               "models::attention_links", hint::links, [&] {
                 Random rng(20300);
                 for (int trial = 0; trial < 16; ++trial) {
                   std::size_t T = rng.integer(1, 6), S = rng.integer(1, 6), L = rng.integer(1, S),
                               steps = rng.integer(0, T);
                   Array w = rng.array({T, S}, 0.0, 4.0);
                   if (trial % 2 == 1) w = xt::floor(w);
                   Tensor wt(w);
                   compare_links(attn::models::attention_links(wt, L, steps), w, L, steps,
                                 m.attention_links(wt, L, steps), T > 1 && L > 1);
                 }
               });

  // ---- the alignment error rate ----
  grader.check("aer: the chapter's toy vs NLTK (A = {(0,0), (1,2), (2,2), (3,4)}, S = P = {(0,0), (1,1), (2,2), "
               "(3,3)}: 0.5)", hint::aer, [&] {
                 Corpus a{links_from(ref.array("aer_toy", "a"))}, s{links_from(ref.array("aer_toy", "sure"))}, p{Links{}};
                 compare_aer("the chapter's toy, possible empty", ref.scalar("aer_toy", "aer"), a, s, p, m.aer(a, s, p));
               });
  grader.check("aer vs NLTK: 3 sentences with sure and possible-only links, counts summed over the corpus; then "
               "possible repeating the sure links (the same P, the same AER)",
               hint::aer, [&] {
                 const std::size_t n = static_cast<std::size_t>(ref.scalar("aer_corpus", "sentences"));
                 Corpus a = corpus_from(ref.array("aer_corpus", "a"), n), s = corpus_from(ref.array("aer_corpus", "sure"), n),
                        p = corpus_from(ref.array("aer_corpus", "possible"), n);
                 compare_aer(corpus_str(a, s, p), ref.scalar("aer_corpus", "aer"), a, s, p, m.aer(a, s, p));
                 for (std::size_t k = 0; k < n; ++k) p[k].insert(s[k].begin(), s[k].end());  // P = possible ∪ S unchanged
                 compare_aer(corpus_str(a, s, p), ref.scalar("aer_corpus", "aer"), a, s, p, m.aer(a, s, p));
               });
  grader.check("aer, random corpora (an empty one first: 0), vs models::alignment_error_counts summed", hint::aer, [&] {
    Random rng(20400);
    for (int trial = 0; trial < 16; ++trial) {
      const std::size_t n = trial == 0 ? 1 : rng.integer(1, 4);
      Corpus a(n), s(n), p(n);
      attn::models::AerCounts counts;
      for (std::size_t k = 0; k < n && trial > 0; ++k) {
        const std::size_t T = rng.integer(1, 5), S = rng.integer(1, 5);
        for (std::size_t t = 0; t < T; ++t)
          for (std::size_t j = 0; j < S; ++j) {
            const std::size_t draw = rng.integer(0, 5);
            if (draw == 0) s[k].insert({t, j});
            if (draw == 1 || (draw == 0 && rng.coin())) p[k].insert({t, j});  // possible sometimes repeats S
            if (rng.integer(0, 2) == 0) a[k].insert({t, j});
          }
        counts += attn::models::alignment_error_counts(a[k], s[k], p[k]);
      }
      compare_aer(corpus_str(a, s, p), counts.aer(), a, s, p, m.aer(a, s, p), false);
    }
  });
  return grader.finish();
}

}  // namespace coverage_aer
}  // namespace lab
