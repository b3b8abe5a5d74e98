"""BLEU reference values from NLTK (Debian's python3-nltk), for tests/models/test_bleu.cpp.

Random small corpora over a 6-word vocabulary, hypotheses often noisy copies of a\nreference (so that 4-grams match too), scored
by nltk.translate.bleu_score.corpus_bleu and sentence_bleu with smoothing
methods 0, 1 and 3. Writes tests/reference/bleu.json:
  {"generator": ..., "nltk": "3.8", "cases": [
     {"name": ..., "max_order": 4, "all_long": true,
      "references": [[[tokens], ...], ...], "hypotheses": [[tokens], ...],
      "corpus": {"method0": x, "method1": x, "method3": x},
      "sentence": {"method1": [x, ...], "method3": [x, ...]}}, ...]}
"all_long": every hypothesis has at least max_order tokens, so NLTK's max(1, count)
denominators equal Papineni's and nltk_counts = false must give the same numbers.
Regenerate with:  /usr/bin/python3 tools/reference/bleu.py
"""
import json
import os
import random
import warnings

import nltk
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu

warnings.simplefilter("ignore")  # NLTK warns on every zero count (method0)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "reference", "bleu.json")
WORDS = ["le", "chat", "dort", "sur", "un", "tapis"]
SMOOTH = SmoothingFunction()
METHODS = {"method0": SMOOTH.method0, "method1": SMOOTH.method1, "method3": SMOOTH.method3}


def sentence(rng, lo, hi):
    return [rng.choice(WORDS) for _ in range(rng.randint(lo, hi))]


def noisy_copy(rng, ref, lo):
    """The reference with some words replaced, dropped or inserted (so 4-grams match too)."""
    out = []
    for w in ref:
        r = rng.random()
        if r < 0.15:
            out.append(rng.choice(WORDS))
        elif r < 0.25:
            continue
        elif r < 0.35:
            out += [w, rng.choice(WORDS)]
        else:
            out.append(w)
    while len(out) < lo:
        out.append(rng.choice(WORDS))
    return out


def case(name, references, hypotheses, max_order):
    weights = tuple([1.0 / max_order] * max_order)
    out = {"name": name, "max_order": max_order,
           "all_long": all(len(h) >= max_order for h in hypotheses),
           "references": references, "hypotheses": hypotheses,
           "corpus": {m: float(corpus_bleu(references, hypotheses, weights, f)) for m, f in METHODS.items()},
           "sentence": {m: [float(sentence_bleu(r, h, weights, METHODS[m])) for r, h in zip(references, hypotheses)]
                        for m in ("method1", "method3")}}
    return out


def main():
    rng = random.Random(21)
    cases = []
    for i in range(12):  # long hypotheses, one or more references
        n = rng.randint(1, 8)
        refs = [[sentence(rng, 3, 12) for _ in range(rng.randint(1, 3))] for _ in range(n)]
        hyps = [noisy_copy(rng, r[0], 4) if rng.random() < 0.7 else sentence(rng, 4, 12) for r in refs]
        cases.append(case("long_%d" % i, refs, hyps, 4))
    for i in range(8):  # any length, empty hypotheses included
        n = rng.randint(1, 8)
        refs = [[sentence(rng, 1, 10) for _ in range(rng.randint(1, 2))] for _ in range(n)]
        hyps = [noisy_copy(rng, r[0], 0)[:6] if rng.random() < 0.5 else sentence(rng, 0, 6) for r in refs]
        cases.append(case("short_%d" % i, refs, hyps, 4))
    for i in range(4):  # bigram BLEU
        n = rng.randint(2, 6)
        refs = [[sentence(rng, 2, 8)] for _ in range(n)]
        hyps = [sentence(rng, 2, 8) for _ in range(n)]
        cases.append(case("order2_%d" % i, refs, hyps, 2))
    # Fixed cases: identical, disjoint, empty, shorter than any n, a hypothesis longer than its reference.
    cases.append(case("identical", [[["le", "chat", "dort", "sur", "le", "tapis"]]],
                      [["le", "chat", "dort", "sur", "le", "tapis"]], 4))
    cases.append(case("disjoint", [[["le", "chat", "dort"]]], [["un", "tapis", "sur"]], 4))
    cases.append(case("empty_hypothesis", [[["le", "chat"]], [["un", "chat", "dort", "sur", "le", "tapis"]]],
                      [[], ["un", "chat", "dort", "sur", "le", "tapis"]], 4))
    cases.append(case("three_words", [[["le", "chat", "dort"]]], [["le", "chat", "dort"]], 4))
    cases.append(case("clipped", [[["le", "chat", "dort", "sur", "le", "tapis"]]],
                      [["le", "le", "le", "le", "le", "le", "le"]], 4))
    with open(OUT, "w") as f:
        # One case a line: small diffs, still readable.
        f.write('{"generator": "tools/reference/bleu.py", "nltk": %s, "cases": [\n' % json.dumps(nltk.__version__))
        f.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases))
        f.write("\n]}\n")
    print("wrote", OUT, len(cases), "cases")


if __name__ == "__main__":
    main()
