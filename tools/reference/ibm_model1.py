"""NLTK reference values for IBM model 1 (data/lexicon.hpp): nltk.translate.IBMModel1 on Koehn's
small German-English example (the pairs of "Statistical Machine Translation", 2010, chapter 4),
English the source and German the target, after 1, 2 and 5 iterations of EM.

Ids: 0 is left free (the course's <pad>); source words 1.., target words 1.. in order of first
appearance. Written for each run: the pairs (f, e) that share a sentence pair with t(e | f), and
t(e | NULL) for every target word. NLTK keeps its starting value for pairs that never meet and
floors every estimate at 1e-12; the C++ table gives such pairs 0, so only pairs that meet are
compared.
"""
import json
import os

import nltk
from nltk.translate import AlignedSent, IBMModel1

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PAIRS = [  # (English source, German target)
    ("the house is small", "klein ist das haus"),
    ("the house is big", "das haus ist ja groß"),
    ("the book is small", "das buch ist ja klein"),
    ("the house", "das haus"),
    ("the book", "das buch"),
    ("a book", "ein buch"),
]


def ids(sentences):
    vocab = {}
    out = [[vocab.setdefault(w, len(vocab) + 1) for w in s.split()] for s in sentences]
    return out, vocab


def main():
    src, src_vocab = ids(p[0] for p in PAIRS)
    tgt, tgt_vocab = ids(p[1] for p in PAIRS)
    cases = {}
    for iterations in (1, 2, 5):
        bitext = [AlignedSent(t.split(), s.split()) for s, t in PAIRS]
        model = IBMModel1(bitext, iterations)
        table = model.translation_table  # table[target][source]
        meet = sorted({(f, e) for s, t in PAIRS for f in s.split() for e in t.split()})
        cases["iterations_%d" % iterations] = {
            "iterations": iterations,
            "pairs": [[src_vocab[f], tgt_vocab[e], table[e][f]] for f, e in meet],
            "null": [[tgt_vocab[e], table[e][None]] for e in sorted(tgt_vocab)],
        }
    out = {"generator": "tools/reference/ibm_model1.py", "nltk": nltk.__version__,
           "src": src, "tgt": tgt, "src_vocab": len(src_vocab) + 1, "tgt_vocab": len(tgt_vocab) + 1, "cases": cases}
    path = os.path.join(ROOT, "tests", "reference", "ibm_model1.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=0)
        f.write("\n")
    print("wrote", path, len(cases), "cases")


if __name__ == "__main__":
    main()
