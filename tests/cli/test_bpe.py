#!/usr/bin/python3
"""Byte-pair encoding on the command line (`attn bpe learn`, `attn train --bpe N`), and
BLEU that a user recomputes with NLTK from `attn eval --predictions`.

    /usr/bin/python3 tests/cli/test_bpe.py build/cli/attn [-v] [TestName...]

NLTK (python3-nltk) for the BLEU test; the rest is the standard library. Tiny models,
few steps: seconds in all.
"""
import json
import os
import re
import shutil
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

import common
from common import attn, fnv1a64, folder_digest, read_part, unit, write_part

SVG = "{http://www.w3.org/2000/svg}"
TINY = ["--set", "embed_dim=8", "--set", "encoder_dim=8", "--set", "decoder_dim=8", "--set", "attention_dim=8",
        "--batch-size", "4", "--seed", "3"]

# Every pair but the last four times: "unreadable" and "illisibles" occur once, in training.
PAIRS = ["Cannot open the file.\tImpossible d'ouvrir le fichier.", "Close the window.\tFermer la fen\u00eatre.",
         "Open the window.\tOuvrir la fen\u00eatre.", "Save the file.\tEnregistrer le fichier.",
         "Cannot save the file.\tImpossible d'enregistrer le fichier.",
         "Reopen the files.\tRouvrir les fichiers.", "Read the file.\tLire le fichier."] * 4 + \
        ["Unreadable windows.\tFen\u00eatres illisibles."]
RARE = "unreadable"


def encode_word(word, ranks):
    """data::Bpe::encode_word: the earliest-learned merge present, until none applies; "@@" on all pieces but the last."""
    symbols = list(word) + ["</w>"]
    while len(symbols) > 1:
        found = [(ranks[(a, b)], (a, b)) for a, b in zip(symbols, symbols[1:]) if (a, b) in ranks]
        if not found:
            break
        _, (a, b) = min(found)
        merged, i = [], 0
        while i < len(symbols):
            if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
                merged.append(a + b)
                i += 2
            else:
                merged.append(symbols[i])
                i += 1
        symbols = merged
    if symbols[-1] == "</w>":
        symbols.pop()
    else:
        symbols[-1] = symbols[-1][:-len("</w>")]
    return [s + "@@" for s in symbols[:-1]] + symbols[-1:]


def read_codes(text):
    lines = text.split("\n")
    assert lines[0] == "#attn bpe 1", lines[0]
    return {tuple(line.split(" ")): i for i, line in enumerate(lines[1:]) if line}


def svg_matrix(path):
    """A heatmap's (row labels, column labels, values [rows][cols]), from its cells' titles and positions."""
    by_row = {}
    for rect in ET.parse(path).getroot().iter(SVG + "rect"):
        title = rect.find(SVG + "title")
        if title is not None:
            m = re.fullmatch(r"(.*) / (.*): (\S+)", title.text)
            by_row.setdefault(float(rect.get("y")), []).append((float(rect.get("x")), m.group(1), m.group(2),
                                                                 float(m.group(3))))
    rows, cols, values = [], None, []
    for y in sorted(by_row):
        cells = sorted(by_row[y])
        rows.append(cells[0][1])
        cols = [cell[2] for cell in cells]
        values.append([cell[3] for cell in cells])
    return rows, cols, values


def spans(pieces):
    out, first = [], 0
    for i, p in enumerate(pieces):
        if not p.endswith("@@") or i + 1 == len(pieces):
            out.append((first, i + 1))
            first = i + 1
    return out


class BpeTest(unittest.TestCase):
    tmp = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="attn_bpe_test_")
        cls.corpus = cls.path("corpus.tsv")
        with open(cls.corpus, "w", encoding="utf-8") as f:
            f.write("\n".join(PAIRS) + "\n")
        cls.test_file = cls.path("held_out.tsv")  # all of the corpus trains, the rare pair included
        with open(cls.test_file, "w", encoding="utf-8") as f:
            f.write("Open the file.\tOuvrir le fichier.\nClose the files.\tFermer les fichiers.\n"
                    + "Quux " * 13 + ".\t" + "Quux " * 13 + ".\n")  # 'q' only here, often: no merge may hold it
        cls.run_dir = cls.path("run")
        status, cls.train_out, err = attn("train", "--task", cls.corpus, "--test-file", cls.test_file, *TINY,
                                          "--bpe", "30", "--max-length", "80", "--steps", "10", "--out", cls.run_dir)
        assert status == 0, err

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def path(cls, *parts):
        return os.path.join(cls.tmp, *parts)

    def ok(self, *args):
        status, out, err = attn(*args)
        self.assertEqual(status, 0, f"attn {' '.join(args)} failed: {err}")
        return out, err

    def fails(self, *args, message):
        status, out, err = attn(*args)
        return common.check_failure(self, status, out, err, message, args)

    def codes(self, run=None):
        return read_part(run or self.run_dir, "bpe.codes").decode("utf-8")

    def vocab(self, side):
        return json.loads(read_part(self.run_dir, "vocab.json"))[side]["tokens"]


class Learn(BpeTest):
    def test_learn_writes_a_codes_file(self):
        codes = self.path("codes.bpe")
        out, _ = self.ok("bpe", "learn", "--task", self.corpus, "--merges", "40", "--out", codes)
        with open(codes, encoding="utf-8") as f:
            text = f.read()
        lines = text.split("\n")
        self.assertEqual(lines[0], "#attn bpe 1")
        self.assertEqual(lines[-1], "")
        merges = [tuple(line.split(" ")) for line in lines[1:-1]]
        self.assertEqual(len(merges), 40)
        self.assertIn("learned 40 merges (of 40 asked) from 29 pairs", out)
        for a, b in merges:
            self.assertTrue(a and b and " " not in a + b)
        # The most frequent pair of the lowercased words of both sides comes first: 'e' before the end of a word.
        self.assertEqual(merges[0], ("e", "</w>"))
        # Joint codes: merges that build a French-only word and an English-only one.
        self.assertIn("fichier</w>", {a + b for a, b in merges})
        self.assertIn("file</w>", {a + b for a, b in merges})
        # Never over an existing file without --overwrite, never over the corpus it reads.
        before = folder_digest(self.tmp)
        self.fails("bpe", "learn", "--task", self.corpus, "--merges", "5", "--out", codes, message="add --overwrite")
        self.fails("bpe", "learn", "--task", self.corpus, "--merges", "5", "--out", self.corpus, "--overwrite",
                   message="the corpus it reads")
        self.fails("bpe", "learn", "--task", self.corpus, "--merges", "0", "--out", self.path("x.bpe"),
                   message="--merges: expected a whole number in [1, 1000000]")
        self.assertEqual(folder_digest(self.tmp), before)
        self.ok("bpe", "learn", "--task", self.corpus, "--merges", "5", "--out", codes, "--overwrite")
        with open(codes, encoding="utf-8") as f:
            self.assertEqual(f.read(), "\n".join(text.split("\n")[:6]) + "\n")  # the first 5 merges of the 40


class Train(BpeTest):
    def test_the_rare_word_is_trained_on_as_pieces(self):
        # Every pair trains (29 of 29, none dropped), and says how the words would have fared.
        self.assertIn("bpe: 30 merges learned from the 29 training pairs; training pairs kept 29 of 29", self.train_out)
        self.assertIn("29 train / 3 test examples", self.train_out)
        # The codes come from the training pairs only: nothing of the held-out words.
        self.assertFalse([m for m in read_codes(self.codes()) if "q" in m[0] + m[1]])
        config = json.loads(read_part(self.run_dir, "config.json"))
        self.assertEqual(config["task"]["bpe"], 30)
        ranks = read_codes(self.codes())
        self.assertEqual(len(ranks), 30)
        pieces = encode_word(RARE, ranks)
        self.assertGreater(len(pieces), 1)
        self.assertNotIn(RARE, self.vocab("src"))  # never seen as a whole...
        for piece in pieces:  # ...but every piece is known: nothing of the pair read as <unk>
            self.assertIn(piece, self.vocab("src"))
        for piece in encode_word("illisibles", ranks):
            self.assertIn(piece, self.vocab("tgt"))
        # Word-level, the same corpus at --min-freq 2 reads the rare word as <unk>.
        words = self.path("words_run")
        self.ok("train", "--task", self.corpus, "--test-file", self.test_file, *TINY, "--min-freq", "2",
                "--steps", "2", "--out", words)
        _, err = self.ok("translate", "--checkpoint", words, "Unreadable windows.")
        self.assertIn("'unreadable' is not in the model's source vocabulary", err)

    def test_translate_round_trip_of_an_unseen_word(self):
        out, err = self.ok("translate", "--checkpoint", self.run_dir, "--show-attention", "Unreadable windows.")
        self.assertEqual(err, "")  # no piece is unknown
        self.assertNotIn("@@", out)  # the output and the heatmap's labels are words
        self.assertIn(RARE, out)  # the source word, whole again, labels a column
        eval_out, _ = self.ok("eval", "--checkpoint", self.run_dir, "--predictions", self.path("p.tsv"))
        with open(self.path("p.tsv"), encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertEqual(sorted(line.split("\t")[0] for line in lines), ["close the files .", "open the file .", "quux " * 13 + "."])
        self.assertNotIn("@@", "\n".join(lines))

    def test_the_codes_are_in_the_manifest(self):
        manifest = json.loads(read_part(self.run_dir, "manifest.json"))
        data = read_part(self.run_dir, "bpe.codes")
        self.assertEqual(manifest["files"]["bpe.codes"], {"bytes": len(data), "fnv1a64": fnv1a64(data)})

    def test_resume_keeps_the_codes(self):
        run = self.path("resumed")
        shutil.copytree(self.run_dir, run)
        codes = read_part(run, "bpe.codes")
        out, _ = self.ok("train", "--resume", run, "--steps", "14")
        self.assertIn("bpe: 30 merges (the checkpoint's codes)", out)
        self.assertIn("resumed at step 10", out)
        self.assertEqual(read_part(run, "bpe.codes"), codes)
        out, _ = self.ok("train", "--resume", run, "--steps", "16", "--bpe", "30")  # its own N: accepted
        self.assertEqual(read_part(run, "bpe.codes"), codes)
        before = folder_digest(run)
        self.fails("train", "--resume", run, "--steps", "20", "--bpe", "40",
                   message=("--bpe 40 differs from the run's --bpe 30", "config.json"))
        self.fails("train", "--resume", self.path("words_run_for_resume"), "--steps", "20", "--bpe", "40",
                   message="no such checkpoint directory")
        self.assertEqual(folder_digest(run), before)
        words = self.path("words_resume")
        self.ok("train", "--task", self.corpus, *TINY, "--steps", "2", "--out", words)
        before = folder_digest(words)
        self.fails("train", "--resume", words, "--steps", "4", "--bpe", "30", message="trained on words, without --bpe")
        self.assertEqual(folder_digest(words), before)
        self.fails("heatmap", "--checkpoint", words, "--merge-subwords", "open", "--out", self.path("w.svg"),
                   message="for a run trained with --bpe")

    def test_bad_codes_are_refused(self):
        run = self.path("damaged")
        shutil.copytree(self.run_dir, run)
        good = self.codes(run)
        predictions = self.path("never.tsv")
        # Damaged, and recorded in the manifest: the file itself is refused, with its line.
        write_part(run, "bpe.codes", good.split("\n")[0] + "\n" + good.split("\n")[1] + "\nthree symbols here\n")
        before = folder_digest(run)
        for args in (("eval", "--checkpoint", run, "--predictions", predictions),
                     ("translate", "--checkpoint", run, "open"),
                     ("train", "--resume", run, "--steps", "20")):
            self.fails(*args, message=unit(run) + "/bpe.codes:3: expected two symbols separated by one space")
        self.assertEqual(folder_digest(run), before)
        write_part(run, "bpe.codes", "#attn bpe 2\n")
        self.fails("eval", "--checkpoint", run, message=unit(run) + "/bpe.codes:1: expected the header")
        # More merges than the run learned: refused by eval, and by --resume before it trains.
        write_part(run, "bpe.codes", good + "".join(f"{chr(0x100 + i)} {chr(0x200 + i)}\n" for i in range(40)))
        self.fails("eval", "--checkpoint", run, message="holds 70 merges, more than the 30")
        before = folder_digest(run)
        self.fails("train", "--resume", run, "--steps", "20", message="holds 70 merges, more than the 30")
        self.assertEqual(folder_digest(run), before)
        # Damaged in ways the format alone allows, and re-sealed: refused with the line, by eval and --resume.
        lines = good.rstrip("\n").split("\n")
        first, second = lines[1], lines[2]
        for damaged, message in (
                ("\n".join([lines[0], "a\x00 b"] + lines[1:]), ":2: holds the control character 0x00 (NUL)"),
                ("\n".join([lines[0], "a\x1b[31m b"] + lines[1:]), ":2: holds the control character 0x1b (ESC)"),
                ("\n".join([lines[0], "a\tc b"] + lines[1:]), ":2: holds the control character 0x09 (a TAB)"),
                ("\n".join(lines + [first]), f":{len(lines) + 1}: the merge '{first}' is listed twice"),
                ("\n".join([lines[0]] + lines[:0:-1]), "before any line makes it")):
            write_part(run, "bpe.codes", damaged + "\n")
            for args in (("eval", "--checkpoint", run), ("train", "--resume", run, "--steps", "20")):
                self.fails(*args, message=(unit(run) + "/bpe.codes", message, "damaged"))
        # Well-formed codes, but not the run's (its last merge dropped): --resume names the codes, not the corpus.
        write_part(run, "bpe.codes", "\n".join(lines[:-1]) + "\n")
        self.fails("train", "--resume", run, "--steps", "20",
                   message=("vocab.json", "the corpus is unchanged", "bpe.codes was changed since the run began"))
        write_part(run, "bpe.codes", b"#attn bpe 1\n" + second.encode() + b"\n\xff\xfe x\n")
        self.fails("eval", "--checkpoint", run, message=(unit(run) + "/bpe.codes:3: not valid UTF-8", "damaged"))
        # Changed without the manifest: refused by it.
        write_part(run, "bpe.codes", good.replace("e </w>", "e s"), sign=False)
        self.fails("eval", "--checkpoint", run, message="bpe.codes: does not match manifest.json")
        self.fails("train", "--resume", run, "--steps", "20", message="bpe.codes: does not match manifest.json")
        # Missing from the manifest while config.json asks for codes.
        write_part(run, "bpe.codes", good)
        manifest = json.loads(read_part(run, "manifest.json"))
        del manifest["files"]["bpe.codes"]
        write_part(run, "manifest.json", json.dumps(manifest), sign=False)
        self.fails("eval", "--checkpoint", run, message="bpe.codes: missing (config.json's task has \"bpe\"")
        self.assertFalse(os.path.exists(predictions))  # no refusal wrote anything
        before = folder_digest(run)
        self.fails("train", "--resume", run, "--steps", "20", message="bpe.codes: missing")
        self.assertEqual(folder_digest(run), before)

    def test_heatmap_draws_words(self):
        pieces_svg, words_svg = self.path("pieces.svg"), self.path("words.svg")
        text = "Unreadable windows."
        self.ok("heatmap", "--checkpoint", self.run_dir, text, "--no-merge-subwords", "--out", pieces_svg)
        self.ok("heatmap", "--checkpoint", self.run_dir, text, "--out", words_svg)  # words by default
        rows, cols, a = svg_matrix(pieces_svg)
        word_rows, word_cols, w = svg_matrix(words_svg)
        self.assertEqual(cols, encode_word(RARE, read_codes(self.codes())) + encode_word("windows", read_codes(self.codes())) + ["."])
        self.assertEqual(word_cols, [RARE, "windows", "."])
        row_spans, col_spans = spans(rows), spans(cols)
        self.assertEqual(len(word_rows), len(row_spans))
        for r, (r0, r1) in enumerate(row_spans):
            for c, (c0, c1) in enumerate(col_spans):
                expected = sum(a[i][j] for i in range(r0, r1) for j in range(c0, c1)) / (r1 - r0)
                # the SVG shows 3 significant digits: a few rounding errors add up
                self.assertAlmostEqual(w[r][c], expected, delta=0.002 * (c1 - c0) + 0.001)
            self.assertAlmostEqual(sum(w[r]), 1.0, delta=0.003 * len(word_cols))  # still a distribution


class NltkBleu(unittest.TestCase):
    """The BLEU that train and eval print is NLTK's corpus_bleu over the --predictions file."""

    def test_printed_bleu_is_nltk_corpus_bleu(self):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from nltk_bleu import nltk_bleu
        tmp = tempfile.mkdtemp(prefix="attn_bleu_test_")
        try:
            # Number words to French, 1 to 6 words: many outputs shorter than 4 words, where the counts differ.
            en = "zero one two three four five six seven eight nine".split()
            fr = "z\u00e9ro un deux trois quatre cinq six sept huit neuf".split()
            lines, x = [], 7
            for i in range(400):
                x = (x * 1103515245 + 12345) % 2 ** 31
                n = 1 + x % 6
                digits = [(x >> (3 * k + 4)) % 10 for k in range(n)]
                lines.append(" ".join(en[d] for d in digits) + "\t" + " ".join(fr[d] for d in digits))
            corpus = os.path.join(tmp, "numbers.tsv")
            with open(corpus, "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
            run = os.path.join(tmp, "run")
            status, out, err = attn("train", "--task", corpus, "--set", "embed_dim=16", "--set", "encoder_dim=16",
                                    "--set", "decoder_dim=16", "--set", "attention_dim=16", "--steps", "300",
                                    "--batch-size", "16", "--valid-fraction", "0.25", "--seed", "1", "--out", run,
                                    timeout=300)
            self.assertEqual(status, 0, err)
            trained = float(re.search(r"exact match on the test set: .*, BLEU (\S+)  \(", out).group(1))
            predictions = os.path.join(tmp, "p.tsv")
            status, out, err = attn("eval", "--checkpoint", run, "--predictions", predictions)
            self.assertEqual(status, 0, err)
            printed = re.search(r"test sentences: .*, BLEU (\S+), loss", out).group(1)
            nltk = nltk_bleu(predictions)
            self.assertEqual(printed, "%.2f" % nltk)
            self.assertEqual(trained, float(printed))
            # The file must tell the two countings apart, or the check above could not fail.
            with open(predictions, encoding="utf-8") as f:
                rows = [line.rstrip("\n").split("\t") for line in f]
            short = sum(1 for row in rows if len(row[2].split()) < 4)
            self.assertGreater(short, 10)
            self.assertGreater(nltk, 1.0)
            self.assertNotEqual("%.2f" % nltk, "%.2f" % plain_count_bleu(rows))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def plain_count_bleu(rows):
    """Papineni's corpus BLEU without NLTK's max(1, n-grams): a hypothesis shorter than n adds no n-gram."""
    import math
    from collections import Counter
    matches, totals, c, r = [0] * 4, [0] * 4, 0, 0
    for _, reference, output in rows:
        ref, hyp = reference.split(), output.split()
        c, r = c + len(hyp), r + len(ref)
        for n in range(1, 5):
            h = Counter(tuple(hyp[i:i + n]) for i in range(len(hyp) - n + 1))
            g = Counter(tuple(ref[i:i + n]) for i in range(len(ref) - n + 1))
            matches[n - 1] += sum(min(k, g[gram]) for gram, k in h.items())
            totals[n - 1] += sum(h.values())
    if min(matches) == 0:
        return 0.0
    bp = 1.0 if c > r else math.exp(1 - r / c)
    return 100 * bp * math.exp(sum(math.log(m / t) for m, t in zip(matches, totals)) / 4)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_bpe.py PATH/TO/attn [unittest arguments]")
    common.ATTN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
