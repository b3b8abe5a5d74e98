"""attn with chapter 17's multi-source model: `corpus gettext --second`, and train, eval,
translate and heatmap on a corpus of 'english ||| german<TAB>french' lines (cli/multi_source.hpp).
Usage: test_multi_source.py ATTN"""
import json
import os
import sys
import tempfile
import unittest

import common
from common import attn
from test_cli import write_mo

MS = ["--set", "embed_dim=8", "--set", "hidden_dim=8", "--batch-size", "8", "--seed", "2", "--min-freq", "1"]


class MultiSource(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        # Three catalogs: English -> French and English -> German, of which two messages are in both.
        for lang, entries in {"fr": [("Cannot open the file", "Impossible d'ouvrir le fichier"),
                                     ("Save the file as", "Enregistrer le fichier sous"),
                                     ("Close the open window", "Fermer la fenêtre ouverte")],
                              "de": [("Cannot open the file", "Datei kann nicht geöffnet werden"),
                                     ("Save the file as", "Datei speichern unter"),
                                     ("Quit the program now", "Das Programm jetzt beenden")]}.items():
            folder = os.path.join(cls.tmp.name, "locale", lang, "LC_MESSAGES")
            os.makedirs(folder)
            write_mo(os.path.join(folder, "a.mo"), entries)
        # A training corpus the model can fit: every pair twice as "english ||| german<TAB>french".
        words = [("red", "rot", "rouge"), ("blue", "blau", "bleu"), ("green", "grün", "vert"), ("big", "groß", "grand")]
        lines = []
        for a in words:
            for b in words:
                lines.append(f"{a[0]} {b[0]} ||| {a[1]} {b[1]}\t{a[2]} {b[2]}")
        cls.corpus = cls.path("three.tsv")
        with open(cls.corpus, "w", encoding="utf-8") as f:
            f.write("\n".join(lines * 4) + "\n")
        cls.run_dir = cls.path("ms")
        status, cls.train_out, err = attn("train", "--model", "multi-source", "--task", cls.corpus, "--steps", "30",
                                          "--eval-every", "0", "--out", cls.run_dir, *MS)
        assert status == 0, err

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def path(cls, *parts):
        return os.path.join(cls.tmp.name, *parts)

    def fails(self, *args, message):
        status, out, err = attn(*args)
        common.check_failure(self, status, out, err, message, args)

    def test_corpus_second(self):
        out_file = self.path("en-de-fr.tsv")
        status, out, err = attn("corpus", "gettext", "--lang", "fr", "--second", "de", "--locale-dir",
                                self.path("locale"), "--out", out_file)
        self.assertEqual(status, 0, err)
        self.assertIn("English messages in both languages: 2; kept 2", out)
        with open(out_file, encoding="utf-8") as f:
            self.assertEqual(sorted(f.read().splitlines()),
                             ["Cannot open the file ||| Datei kann nicht geöffnet werden\tImpossible d'ouvrir le fichier",
                              "Save the file as ||| Datei speichern unter\tEnregistrer le fichier sous"])
        self.fails("corpus", "gettext", "--lang", "fr", "--second", "fr", "--locale-dir", self.path("locale"),
                   "--out", self.path("x.tsv"), message="--second fr is the target language too")

    def test_run_records_the_separator(self):
        config = json.loads(common.read_part(self.run_dir, "config.json"))
        vocab = json.loads(common.read_part(self.run_dir, "vocab.json"))
        self.assertEqual(config["model"]["model"], "multi-source")
        self.assertEqual(config["model"]["sources"], 2)
        self.assertEqual(config["task"]["sources"], 2)
        self.assertEqual(vocab["src"]["tokens"][config["model"]["sep_id"]], "<sep>")
        self.assertNotIn("|||", vocab["src"]["tokens"])
        self.assertIn("training multi-source (", self.train_out)

    def test_translate_eval_heatmap(self):
        status, out, err = attn("translate", "--checkpoint", self.run_dir, "--show-attention", "red blue ||| rot blau")
        self.assertEqual(status, 0, err)
        self.assertTrue(out.startswith("red blue ||| rot blau  ->  "), out)
        # One heatmap per source: the columns are that source's words.
        self.assertRegex(out, r"│red blue")
        self.assertRegex(out, r"│rot blau")
        status, out, err = attn("eval", "--checkpoint", self.run_dir, "--beam", "2")
        self.assertEqual(status, 0, err)
        self.assertIn("test sentences, beam search 2", out)
        svg = self.path("a.svg")
        status, out, err = attn("heatmap", "--checkpoint", self.run_dir, "red blue ||| rot blau", "--out", svg)
        self.assertEqual(status, 0, err)
        with open(svg, encoding="utf-8") as f:
            self.assertIn("attention over the first source", f.read())

    def test_errors(self):
        self.fails("translate", "--checkpoint", self.run_dir, "red blue", message="needs them separated by |||")
        self.fails("translate", "--checkpoint", self.run_dir, "red ||| ||| blau", message="has 3 parts")
        self.fails("train", "--model", "multi-source", "--task", "reverse", "--out", self.path("x"),
                   message="trains on a FILE.tsv")
        self.fails("train", "--model", "multi-source", "--task", self.corpus, "--set", "sep_id=3", "--out",
                   self.path("x"), message="set by train from the vocabulary")
        self.fails("train", "--model", "multi-source", "--task", self.corpus, "--set", "sources=3", "--out",
                   self.path("x"), message="has 2 parts; a run of 3 sources")
        self.fails("train", "--model", "multi-source", "--task", self.corpus, "--bpe", "10", "--out", self.path("x"),
                   message="--bpe and --char-level do not apply")
        one = self.path("one.tsv")
        with open(one, "w", encoding="utf-8") as f:
            f.write("red blue\trouge bleu\n" * 4)
        self.fails("train", "--model", "multi-source", "--task", one, "--out", self.path("x"), message="has 1 part")
        self.assertFalse(os.path.exists(self.path("x")))
        # A run whose sep_id no longer names <sep> is refused by name.
        config = json.loads(common.read_part(self.run_dir, "config.json"))
        config["model"]["sep_id"] = config["model"]["sep_id"] + 1
        bad = self.path("bad")
        import shutil
        shutil.copytree(self.run_dir, bad)
        common.write_part(bad, "config.json", json.dumps(config))
        self.fails("eval", "--checkpoint", bad, message="model.sep_id must be the id of <sep>")

    def test_test_file_skip_malformed_and_lengths(self):
        test_file = self.path("held_out.tsv")
        with open(test_file, "w", encoding="utf-8") as f:
            f.write("red green ||| rot grün\trouge vert\nblue big ||| blau groß\tbleu grand\n")
        run = self.path("with_test_file")
        status, out, err = attn("train", "--model", "multi-source", "--task", self.corpus, "--test-file", test_file,
                                "--steps", "3", "--eval-every", "0", "--out", run, *MS)
        self.assertEqual(status, 0, err)
        self.assertIn("2 test examples", out)
        status, out, err = attn("eval", "--checkpoint", run, "--predictions", self.path("p.tsv"))
        self.assertEqual(status, 0, err)
        with open(self.path("p.tsv"), encoding="utf-8") as f:
            rows = [line.split("\t") for line in f.read().splitlines()]
        self.assertEqual(sorted(r[0] for r in rows), ["blue big ||| blau groß", "red green ||| rot grün"])
        # A line without its two sources: an error, or skipped and counted with --skip-malformed.
        mixed = self.path("mixed.tsv")
        with open(self.corpus, encoding="utf-8") as f:
            good = f.read()
        with open(mixed, "w", encoding="utf-8") as f:
            f.write(good + "red|||rot\trouge\n")
        self.fails("train", "--model", "multi-source", "--task", mixed, "--out", self.path("x"),
                   message=("has 1 part", "spaces around it", "--skip-malformed"))
        status, out, err = attn("train", "--model", "multi-source", "--task", mixed, "--skip-malformed", "--steps", "2",
                                "--eval-every", "0", "--out", self.path("skipped"), *MS)
        self.assertEqual(status, 0, err)
        self.assertIn("1 pairs without 2 sources skipped", out)
        # --max-length counts each source's words: every source here has 2.
        self.fails("train", "--model", "multi-source", "--task", self.corpus, "--max-length", "1", "--out",
                   self.path("x"), message=("dropped as longer than max_length 1 tokens a source", "--max-length"))
        status, out, err = attn("train", "--model", "multi-source", "--task", self.corpus, "--max-length", "2",
                                "--steps", "2", "--eval-every", "0", "--out", self.path("two"), *MS)
        self.assertEqual(status, 0, err)


if __name__ == "__main__":
    common.ATTN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=1)
