"""Edit distances, CER and WER from NLTK (Debian's python3-nltk), for tests/eval/test_error_rate.cpp.

A dozen hand-chosen (hypothesis, reference) pairs: empty strings, identical, all substitutions,
insertions only, deletions only, UTF-8 characters, several words. For each pair,
nltk.edit_distance (substitution, insertion and deletion cost 1, no transpositions) over its
characters (Python's code points: one per UTF-8 character) and over its words (str.split),
and the rates; then the corpus rates of all pairs together: summed distances over summed
reference lengths, as jiwer computes them.

Writes tests/reference/error_rate.json in tests/reference.hpp's format, numbers as tensors
of shape [] and the strings next to them:
  {"generator": ..., "nltk": "3.8", "cases": {
     "<name>": {"hypothesis": "...", "reference": "...",
                "char_distance": {"shape": [], "data": [d]}, "char_length": ..., "cer": ...,
                "word_distance": ..., "word_length": ..., "wer": ...}, ...,
     "corpus": {"hypotheses": [...], "references": [...], "char_distance": ..., ...}}}
"cer" and "wer" are left out where the reference is empty (the rate is undefined).
Regenerate with:  /usr/bin/python3 tools/reference/error_rate.py
"""
import json
import os

import nltk

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "reference", "error_rate.json")

# name: (hypothesis, reference)
PAIRS = {
    "both_empty": ("", ""),
    "empty_hypothesis": ("", "three seven"),
    "empty_reference": ("nine", ""),
    "identical": ("three seven one", "three seven one"),
    "all_substitutions": ("abc def", "xyz uvw"),
    "insertions_only": ("one two three four", "one three"),
    "deletions_only": ("two", "one two three"),
    "one_substitution": ("three seven one", "three eleven one"),
    "utf8": ("été à paris", "ete a París"),
    "utf8_wide": ("日本語 テスト", "日本 テスト 語"),
    "multi_word": ("the cat sat on mat", "the cat sat on the mat"),
    "swapped_words": ("seven three", "three seven"),
    "extra_spaces": ("four  five", "four five"),
    "longer_hypothesis": ("zero zero one two", "zero"),
}


def scalar(x):
    return {"shape": [], "data": [float(x)]}


def measures(hypotheses, references):
    char_distance = sum(nltk.edit_distance(r, h) for h, r in zip(hypotheses, references))
    word_distance = sum(nltk.edit_distance(r.split(), h.split()) for h, r in zip(hypotheses, references))
    char_length = sum(len(r) for r in references)
    word_length = sum(len(r.split()) for r in references)
    out = {"char_distance": scalar(char_distance), "char_length": scalar(char_length),
           "word_distance": scalar(word_distance), "word_length": scalar(word_length)}
    if char_length > 0:
        out["cer"] = scalar(char_distance / char_length)
    if word_length > 0:
        out["wer"] = scalar(word_distance / word_length)
    return out


def main():
    cases = {}
    for name, (hyp, ref) in PAIRS.items():
        # The distance is symmetric: check NLTK agrees before recording one order.
        assert nltk.edit_distance(hyp, ref) == nltk.edit_distance(ref, hyp)
        cases[name] = {"hypothesis": hyp, "reference": ref, **measures([hyp], [ref])}
    hyps = [h for h, _ in PAIRS.values()]
    refs = [r for _, r in PAIRS.values()]
    cases["corpus"] = {"hypotheses": hyps, "references": refs, **measures(hyps, refs)}
    with open(OUT, "w") as f:
        # One case a line: small diffs, still readable.
        f.write('{"generator": "tools/reference/error_rate.py", "nltk": %s, "cases": {\n' % json.dumps(nltk.__version__))
        f.write(",\n".join("%s: %s" % (json.dumps(k), json.dumps(v, ensure_ascii=False)) for k, v in cases.items()))
        f.write("\n}}\n")
    print("wrote", OUT, len(cases), "cases")


if __name__ == "__main__":
    main()
