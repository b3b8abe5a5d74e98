// Edit distance, CER and WER against NLTK's edit_distance (tests/reference/error_rate.json,
// written by tools/reference/error_rate.py), and the S/I/D split on cases worked by hand.
#include "../helpers.hpp"
#include "../reference.hpp"

#include "eval/error_rate.hpp"

using attn::data::split_chars;
using attn::data::split_whitespace;
using attn::data::Tokens;
using namespace attn::models;

namespace {

std::size_t count(const test::Reference& ref, const std::string& name, const char* what) {
  return static_cast<std::size_t>(ref.array(name, what)());
}

ErrorRate words(const std::string& hypothesis, const std::string& reference) {
  return error_counts(split_whitespace(hypothesis), split_whitespace(reference));
}

}  // namespace

TEST_CASE("edit_distance, CER and WER equal NLTK's on every pair and on the corpus") {
  const test::Reference ref("error_rate");
  const auto names = ref.case_names();
  REQUIRE(names.size() == 15);
  for (const std::string& name : names) {
    CAPTURE(name);
    const auto& c = ref.entries(name);
    std::vector<std::string> hyps, refs;
    if (name == "corpus") {
      hyps = c.at("hypotheses").get<std::vector<std::string>>();
      refs = c.at("references").get<std::vector<std::string>>();
    } else {
      hyps = {c.at("hypothesis").get<std::string>()};
      refs = {c.at("reference").get<std::string>()};
      // One pair: the distance itself, both ways round.
      const Tokens h = split_chars(hyps[0]), r = split_chars(refs[0]);
      CHECK(edit_distance(h, r) == count(ref, name, "char_distance"));
      CHECK(edit_distance(r, h) == count(ref, name, "char_distance"));
      CHECK(edit_distance(split_whitespace(hyps[0]), split_whitespace(refs[0])) == count(ref, name, "word_distance"));
    }
    const ErrorRate cer = character_error_rate(hyps, refs), wer = word_error_rate(hyps, refs);
    CHECK(cer.errors == count(ref, name, "char_distance"));
    CHECK(cer.reference_length == count(ref, name, "char_length"));
    CHECK(wer.errors == count(ref, name, "word_distance"));
    CHECK(wer.reference_length == count(ref, name, "word_length"));
    // The alignment's operations add up to the distance.
    CHECK(cer.substitutions + cer.insertions + cer.deletions == cer.errors);
    CHECK(wer.substitutions + wer.insertions + wer.deletions == wer.errors);
    // Both divide the same two integers: the same double, exactly.
    // An empty reference: 0 without errors, else no rate.
    if (ref.has(name, "cer")) CHECK(cer.rate() == ref.array(name, "cer")());
    else if (cer.errors == 0) CHECK(cer.rate() == 0.0);
    else CHECK_THROWS_AS(cer.rate(), attn::ValueError);
    if (ref.has(name, "wer")) CHECK(wer.rate() == ref.array(name, "wer")());
    else if (wer.errors == 0) CHECK(wer.rate() == 0.0);
    else CHECK_THROWS_AS(wer.rate(), attn::ValueError);
  }
}

TEST_CASE("error_counts: substitutions, insertions and deletions worked by hand") {
  // "seven" for "eleven": the same words but one.
  ErrorRate e = words("three seven one", "three eleven one");
  CHECK(e.errors == 1);
  CHECK(e.substitutions == 1);
  CHECK(e.reference_length == 3);
  CHECK(e.rate() == doctest::Approx(1.0 / 3));
  // Characters: e l e v e n -> s e v e n, one letter dropped and one changed.
  e = error_counts(split_chars("seven"), split_chars("eleven"));
  CHECK(e.errors == 2);
  CHECK(e.deletions == 1);
  CHECK(e.substitutions == 1);
  CHECK(e.insertions == 0);

  e = words("one two three four", "one three");  // "two" and "four" are extra
  CHECK(e.insertions == 2);
  CHECK(e.substitutions + e.deletions == 0);
  CHECK(e.rate() == 1.0);

  e = words("the cat sat on mat", "the cat sat on the mat");  // the second "the" is missing
  CHECK(e.deletions == 1);
  CHECK(e.errors == 1);

  e = words("", "three seven");  // nothing heard: every reference word deleted
  CHECK(e.deletions == 2);
  CHECK(e.rate() == 1.0);
  e = words("nine", "");  // only insertions, and no rate
  CHECK(e.insertions == 1);
  CHECK(e.reference_length == 0);
  CHECK_THROWS_WITH_AS(e.rate(), doctest::Contains("ErrorRate::rate: 1 errors against an empty reference"),
                       attn::ValueError);
  CHECK(words("", "").rate() == 0.0);
}

TEST_CASE("error_counts: among optimal alignments, substitutions before deletions before insertions") {
  // "b c" for "a b": two substitutions, or delete "a" and insert "c"; both cost 2.
  ErrorRate e = words("b c", "a b");
  CHECK(e.errors == 2);
  CHECK(e.substitutions == 2);
  CHECK(e.insertions + e.deletions == 0);
  // Swapped words: the same tie, the same choice.
  e = words("seven three", "three seven");
  CHECK(e.substitutions == 2);
  // "x" for "a b": one substitution and one deletion, whichever word "x" replaced.
  e = words("x", "a b");
  CHECK(e.substitutions == 1);
  CHECK(e.deletions == 1);
}

TEST_CASE("corpus rates sum the edits and the lengths; they are not a mean of sentence rates") {
  // 1 error in 1 word, 0 in 3: the corpus WER is 1/4, the mean of the rates would be 1/2.
  const ErrorRate w = word_error_rate({"two", "three seven one"}, {"one", "three seven one"});
  CHECK(w.errors == 1);
  CHECK(w.reference_length == 4);
  CHECK(w.rate() == 0.25);
  // An empty reference inside a corpus adds its insertions; the rate stays defined.
  const ErrorRate c = character_error_rate({"ab", "x"}, {"ab", ""});
  CHECK(c.insertions == 1);
  CHECK(c.rate() == 0.5);
  // Spaces are characters; runs of spaces do not make words.
  CHECK(character_error_rate({"a  b"}, {"a b"}).errors == 1);
  CHECK(word_error_rate({"a  b"}, {"a b"}).errors == 0);
  // UTF-8: "é" is one character.
  CHECK(character_error_rate({"été"}, {"ete"}).errors == 2);
  CHECK(character_error_rate({"été"}, {"ete"}).reference_length == 3);
  ErrorRate sum;
  sum += w;
  sum += w;
  CHECK(sum.errors == 2);
  CHECK(sum.reference_length == 8);
}

TEST_CASE("character_error_rate and word_error_rate refuse lists of different lengths, by name") {
  CHECK_THROWS_WITH_AS(word_error_rate({"a", "b"}, {"a"}),
                       doctest::Contains("word_error_rate: expected one reference per hypothesis, got 2 hypotheses and 1 references"),
                       attn::ValueError);
  CHECK_THROWS_WITH_AS(character_error_rate({}, {"a"}), doctest::Contains("character_error_rate"), attn::ValueError);
  CHECK(word_error_rate({}, {}).rate() == 0.0);
}
