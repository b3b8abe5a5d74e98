#!/usr/bin/python3
"""NLTK's corpus BLEU of an `attn eval --predictions FILE` file, as a user would
recompute it: nltk.translate.bleu_score.corpus_bleu with its defaults (weights
1/4 each, no smoothing), the reference (column 2) and the output (column 3) of
every line split on spaces.

    /usr/bin/python3 tests/cli/nltk_bleu.py predictions.tsv     prints 100 * BLEU
"""
import sys
import warnings

from nltk.translate.bleu_score import corpus_bleu


def nltk_bleu(path):
    references, hypotheses = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            _, reference, output = line.rstrip("\n").split("\t")
            references.append([reference.split(" ") if reference else []])
            hypotheses.append(output.split(" ") if output else [])
    with warnings.catch_warnings():  # NLTK warns when an order has no match (BLEU then ~0)
        warnings.simplefilter("ignore")
        return 100 * corpus_bleu(references, hypotheses)


if __name__ == "__main__":
    print("%.6f" % nltk_bleu(sys.argv[1]))
