"""BPE reference values, for tests/data/test_bpe.cpp.

The learning loop is Algorithm 1 of Sennrich, Haddow & Birch (2016), "Neural Machine
Translation of Rare Words with Subword Units" (https://aclanthology.org/P16-1162/):
count every adjacent pair over the whole vocabulary, merge the most frequent one,
repeat. It recounts everything at every step; data/bpe.cpp updates only the words
that change, so the two are independent implementations of the same rule. Ties go to
the pair first in string order (the paper's code takes whichever max() meets first;
attn fixes the order so that merges are reproducible). Applying merges to a word
follows subword-nmt: the earliest-learned merge present, until none applies; "@@" on
every piece but a word's last.

Writes tests/reference/bpe.json. Regenerate with:  /usr/bin/python3 tools/reference/bpe.py
"""
import collections
import json
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "reference", "bpe.json")
EOW = "</w>"


def get_stats(vocab):
    pairs = collections.defaultdict(int)
    for word, freq in vocab.items():
        symbols = word.split()
        for i in range(len(symbols) - 1):
            pairs[symbols[i], symbols[i + 1]] += freq
    return pairs


def merge_vocab(pair, v_in):
    bigram = re.escape(" ".join(pair))
    p = re.compile(r"(?<!\S)" + bigram + r"(?!\S)")
    return {p.sub("".join(pair), word): freq for word, freq in v_in.items()}


def learn(sentences, merges, min_frequency=2):
    counts = collections.Counter(w for s in sentences for w in s)
    vocab = {" ".join(list(w) + [EOW]): c for w, c in counts.items()}
    learned = []
    for _ in range(merges):
        pairs = get_stats(vocab)
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[best] < min_frequency:
            break
        vocab = merge_vocab(best, vocab)
        learned.append(best)
    return learned


def encode_word(word, ranks):
    symbols = list(word) + [EOW]
    while len(symbols) > 1:
        candidates = [(ranks[p], i) for i, p in enumerate(zip(symbols, symbols[1:])) if p in ranks]
        if not candidates:
            break
        best = min(candidates)[0]
        pair = next(p for p, r in ranks.items() if r == best)
        out, i = [], 0
        while i < len(symbols):
            if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
                out.append(symbols[i] + symbols[i + 1])
                i += 2
            else:
                out.append(symbols[i])
                i += 1
        symbols = out
    if symbols[-1] == EOW:
        symbols.pop()
    else:
        symbols[-1] = symbols[-1][: -len(EOW)]
    return [s + "@@" for s in symbols[:-1]] + [symbols[-1]]


def case(name, sentences, merges, words, min_frequency=2):
    learned = learn(sentences, merges, min_frequency)
    ranks = {}
    for i, p in enumerate(learned):
        ranks.setdefault(p, i)
    return {"name": name, "sentences": sentences, "merges": merges, "min_frequency": min_frequency,
            "learned": [list(p) for p in learned],
            "words": words, "encoded": [encode_word(w, ranks) for w in words]}


def main():
    # The paper's Algorithm 1 vocabulary: low x5, lower x2, newest x6, widest x3.
    paper = [["low"]] * 5 + [["lower"]] * 2 + [["newest"]] * 6 + [["widest"]] * 3
    messages = [s.split() for s in [
        "cannot open file", "cannot read file", "cannot write file", "unable to open directory",
        "unable to read directory", "file not found", "directory not found", "permission denied",
        "impossible d' ouvrir le fichier", "impossible de lire le fichier", "fichier introuvable",
        "répertoire introuvable", "permission refusée", "écriture impossible", "lecture réussie",
        "the file is readable", "the file is unreadable", "the files are unreadable", "reopen the files",
    ]]
    cases = [
        case("paper_algorithm_1", paper, 10, ["low", "lowest", "newer", "wider", "slow"]),
        case("messages", messages, 60, ["unreadable", "files", "reading", "fichiers", "réécriture", "opened", "x"]),
        case("messages_min_frequency_1", messages, 200, ["unreadable", "répertoires"], min_frequency=1),
    ]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"generator": "tools/reference/bpe.py", "cases": cases}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {OUT}: " + ", ".join(f"{c['name']} ({len(c['learned'])} merges)" for c in cases))


if __name__ == "__main__":
    main()
