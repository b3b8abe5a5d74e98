#!/usr/bin/python3
"""The command line's last guards (issue 63): a run's corpus kept wherever a command starts (the user's
run list, cli/output.hpp), a model too large to train refused by its setting, text files in another
encoding named as such, eval refusing changed subword codes as --resume does, a page over the 8 MB
limit, the corpus-reading progress line, and a lexicon bias added or removed in config.json named by
its key.

    /usr/bin/python3 tests/cli/test_limits.py build/cli/attn [-v] [TestName...]

Standard library only. The run list is a scratch one of this process (common.py sets XDG_STATE_HOME):
the user's own list is never read or written.
"""
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest

import common
from common import attn, folder_digest, read_part, write_part
import test_documents

SHORT = ["open the file .\touvrir le fichier .", "close the window .\tfermer la fenêtre .",
         "save the file .\tenregistrer le fichier ."] * 10
SMALL = ["--set", "embed_dim=8", "--set", "encoder_dim=8", "--set", "decoder_dim=8", "--set", "attention_dim=8",
         "--batch-size", "4", "--seed", "3", "--eval-every", "0"]


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Limits(common.ScratchTest):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="attn_limits_")
        # The corpus in one folder, the run in another, and the commands started from a third: no run is next
        # to the corpus or under the current folder, so only the run list can tell that the corpus is needed.
        for d in ("data", "runs", "elsewhere"):
            os.mkdir(cls.path(d))
        cls.corpus = cls.path("data", "corpus.tsv")
        with open(cls.corpus, "w", encoding="utf-8") as f:
            f.write("\n".join(SHORT) + "\n")
        cls.run_dir = cls.path("runs", "far")
        status, out, err = attn("train", "--task", cls.corpus, *SMALL, "--steps", "2", "--out", cls.run_dir)
        assert status == 0, err

    def test_run_list_keeps_a_far_corpus(self):
        """bpe learn, corpus gettext and eval --predictions onto the corpus of a run that is neither next to it
        nor under the current folder: refused even with --overwrite, naming the run and the list."""
        with open(os.environ["XDG_STATE_HOME"] + "/attn/corpora.tsv", encoding="utf-8") as f:
            self.assertIn(os.path.abspath(self.corpus) + "\t" + os.path.abspath(self.run_dir) + "\n", f.read())
        before, run_before = digest(self.corpus), folder_digest(self.run_dir)
        elsewhere = self.path("elsewhere")
        other = self.path("runs", "other")
        if not os.path.exists(other):
            self.ok("train", "--task", "reverse", *SMALL, "--steps", "1", "--out", other)
        for args in (["bpe", "learn", "--task", self.path("data", "other.tsv"), "--merges", "5", "--out", self.corpus,
                      "--overwrite"],
                     ["eval", "--checkpoint", other, "--predictions", self.corpus, "--overwrite"]):
            if args[0] == "bpe":
                with open(self.path("data", "other.tsv"), "w", encoding="utf-8") as f:
                    f.write("\n".join(SHORT) + "\n")
            status, out, err = attn(*args, cwd=elsewhere)
            common.check_failure(self, status, out, err, (self.corpus, "the corpus of the run " +
                                                          os.path.abspath(self.run_dir), "corpora.tsv"), args)
        self.assertEqual(digest(self.corpus), before)
        self.assertEqual(folder_digest(self.run_dir), run_before)

    def test_run_list_forgets_a_removed_run(self):
        """Once the run is gone, its corpus is the user's again: --overwrite replaces it."""
        data = self.path("data", "gone.tsv")
        with open(data, "w", encoding="utf-8") as f:
            f.write("\n".join(SHORT) + "\n")
        run = self.path("runs", "gone")
        self.ok("train", "--task", data, *SMALL, "--steps", "1", "--out", run)
        shutil.rmtree(run)
        other = self.path("runs", "other2")
        self.ok("train", "--task", "reverse", *SMALL, "--steps", "1", "--out", other)
        status, out, err = attn("eval", "--checkpoint", other, "--predictions", data, "--overwrite",
                                cwd=self.path("elsewhere"))
        self.assertEqual(status, 0, err)

    def test_huge_model_refused_by_its_setting(self):
        """--set kernel1=100000 gives a conv model of over 100 million parameters: refused before training,
        naming the count, the limit and the setting; no run folder is made."""
        out = self.path("huge_conv")
        line = self.fails("train", "--model", "conv", "--task", "reverse", "--set", "kernel1=100000", "--steps", "1",
                          "--out", out, message=("kernel1=100000: at most 65,536 for a size", "--set kernel1=N"))
        self.assertEqual(line.count("the model's settings"), 1, line)
        for setting in ("coverage_embedding=20000000", "coverage_embedding=200000"):  # refused before building
            self.fails("train", "--task", "reverse", "--set", setting, "--steps", "1", "--out", out,
                       message=(setting + ": at most 65,536", "--set coverage_embedding=N"))
        # Every size allowed, and still far too many parameters: counted once the model is built.
        line = self.fails("train", "--model", "transformer", "--task", "reverse", "--set", "d_model=1024",
                          "--set", "dim_feedforward=16384", "--set", "num_encoder_layers=1",
                          "--set", "num_decoder_layers=1", "--steps", "1", "--out", out,
                          message=("parameters, more than the 50,000,000", "dim_feedforward=16384",
                                   "--set dim_feedforward=N"))
        self.assertEqual(line.count("the model's settings"), 1, line)
        self.assertFalse(os.path.exists(out))

    def test_unwritable_run_list_warns(self):
        """A run list that cannot be written (XDG_STATE_HOME is a file): the run is made, and a warning says its
        corpus is then guarded only where a command finds the run."""
        state = self.path("state_is_a_file")
        with open(state, "w") as f:
            f.write("x")
        env = dict(os.environ, XDG_STATE_HOME=state)
        p = subprocess.run([common.ATTN, "train", "--task", self.corpus, *SMALL, "--steps", "1", "--out",
                            self.path("runs", "unlisted")], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr.count("the run list cannot be written"), 1, p.stderr)
        self.assertIn("guarded only from commands started above the run or next to the corpus", p.stderr)

    def test_other_encodings_named(self):
        """A UTF-16 corpus (with and without its byte-order mark), a UTF-32 one and one with CR-only line ends:
        each refused as what it is, with a command that converts it, by train and by bpe learn."""
        text = "\n".join(SHORT) + "\n"
        mark, every_other, three = "(it begins with a byte-order mark)", "(every other byte is NUL)", "(three of every four"
        cases = {"utf16.tsv": (text.encode("utf-16"), "UTF-16 text " + mark, "iconv -f UTF-16 -t UTF-8"),
                 "utf16le.tsv": (text.encode("utf-16-le"), "UTF-16 text " + every_other, "iconv -f UTF-16LE -t UTF-8"),
                 "utf16be.tsv": (text.encode("utf-16-be"), "UTF-16 text " + every_other, "iconv -f UTF-16BE -t UTF-8"),
                 "utf32.tsv": (text.encode("utf-32"), "UTF-32 text " + mark, "iconv -f UTF-32 -t UTF-8"),
                 "utf32le.tsv": (text.encode("utf-32-le"), "UTF-32 text " + three, "iconv -f UTF-32LE -t UTF-8"),
                 "utf32be.tsv": (text.encode("utf-32-be"), "UTF-32 text " + three, "iconv -f UTF-32BE -t UTF-8"),
                 "mac.tsv": (text.replace("\n", "\r").encode("utf-8"), "its lines end with CR alone",
                             "tr '\\r' '\\n'")}
        for name, (data, what, hint) in cases.items():
            path = self.path(name)
            with open(path, "wb") as f:
                f.write(data)
            self.fails("train", "--task", path, *SMALL, "--steps", "1", "--out", self.path("enc_" + name),
                       message=(path, what, hint))
            self.fails("bpe", "learn", "--task", path, "--merges", "5", "--out", self.path(name + ".codes"),
                       message=(path, what, hint))
            self.assertFalse(os.path.exists(self.path("enc_" + name)))

    def test_a_word_too_long(self):
        """A corpus line holding 100 KB of marks after a word: refused at once, naming the file and the line, by
        train and by bpe learn (splitting punctuation off such a word took seconds, a megabyte minutes)."""
        path = self.path("marks.tsv")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(SHORT[:3]) + "\nopen" + ".," * 50000 + "\touvrir .\n")
        for args in (["train", "--task", path, *SMALL, "--steps", "1", "--out", self.path("marks_run")],
                     ["bpe", "learn", "--task", path, "--merges", "5", "--out", self.path("marks.codes")]):
            status, out, err = attn(*args, timeout=20)
            common.check_failure(self, status, out, err, (path + ":4: holds a word of over 4096 bytes",), args)
        self.assertFalse(os.path.exists(self.path("marks_run")))

    def test_eval_refuses_changed_codes(self):
        """bpe.codes changed (its last merge dropped) and re-sealed in the manifest: eval refuses the run, as
        --resume does, instead of scoring other test pairs."""
        run = self.path("runs", "bpe")
        self.ok("train", "--task", self.corpus, *SMALL, "--bpe", "20", "--max-length", "40", "--steps", "2",
                "--out", run)
        codes = read_part(run, "bpe.codes").decode("utf-8").rstrip("\n").split("\n")
        write_part(run, "bpe.codes", ("\n".join(codes[:-1]) + "\n").encode("utf-8"))
        for args in (["eval", "--checkpoint", run], ["train", "--resume", run, "--steps", "3"]):
            self.fails(*args, message=("vocab.json: differs from the vocabulary", "bpe.codes was changed since",
                                       "restore it"))

    def test_page_over_the_limit(self):
        """classify of a page over 8 MB: refused at once, naming the file and the limit."""
        run = self.documents_run()
        page = self.path("big_page.txt")
        with open(page, "w", encoding="utf-8") as f:
            f.write(("the kernel returns errno to the shell . " * 1000 + "\n") * 210)
        self.assertGreater(os.path.getsize(page), 8 << 20)
        self.fails("classify", "--checkpoint", run, page, message=(page, "larger than the 8 MB a page may be"))

    def test_corpus_reading_says_how_far_it_is(self):
        """A documents corpus that takes over 2 s to read prints a 'reading FILE' line and its end; a small one
        prints none (the small run of documents_run)."""
        run = self.documents_run()
        with open(os.path.join(run, "train.out"), encoding="utf-8") as f:
            self.assertNotIn("reading ", f.read())
        big = self.path("big.jsonl")
        lines = test_documents.corpus_lines()
        filler = " ".join(["the manual page of the shell"] * 40) + "."
        with open(big, "w", encoding="utf-8") as f:
            for i in range(60000):
                record = json.loads(lines[i % len(lines)])
                record["paragraphs"].append(filler)
                f.write(json.dumps(record) + "\n")
        status, out, err = attn("train", *test_documents.model_args("bag-of-words"), "--task", big, "--epochs", "1",
                                "--max-sentences", "2", "--out", self.path("runs", "big_docs"), timeout=600)
        self.assertEqual(status, 0, err)
        self.assertIn("reading " + big, out)
        self.assertIn("reading " + big + ": done in", out)

    def test_bpe_learning_says_how_far_it_is(self):
        """Learning 2,000 merges over 36,000 distinct words takes several seconds: a line counts the merges learned
        (no time left is guessed from the count: the first merges cost the most), and one says when it is done."""
        rng = random.Random(1)
        word = lambda: "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 10)))
        corpus = self.path("random.tsv")
        with open(corpus, "w", encoding="utf-8") as f:
            for _ in range(3000):
                f.write(" ".join(word() for _ in range(6)) + "\t" + " ".join(word() for _ in range(6)) + "\n")
        status, out, err = attn("bpe", "learn", "--task", corpus, "--merges", "2000", "--out", self.path("random.codes"),
                                timeout=600)
        self.assertEqual(status, 0, err)
        self.assertRegex(out, r"learning 2000 subword merges: 0:0\d, \d+ of 2000 learned\n")
        self.assertIn("learning 2000 subword merges: done in ", out)
        self.assertNotIn("left", out)

    def test_lexicon_bias_changed_named_by_key(self):
        """lexicon_bias turned on or off in config.json: eval and --resume name the key, not a weight or a C++ class."""
        on = self.path("runs", "lexicon_on")
        self.ok("train", "--task", self.corpus, *SMALL, "--set", "lexicon_bias=true", "--steps", "2", "--out", on)
        off = self.path("runs", "lexicon_off")
        self.ok("train", "--task", self.corpus, *SMALL, "--steps", "2", "--out", off)
        for run, value in ((on, False), (off, True)):
            config = json.loads(read_part(run, "config.json"))
            config["model"]["lexicon_bias"] = value
            write_part(run, "config.json", json.dumps(config, indent=2))
            for args in (["eval", "--checkpoint", run], ["train", "--resume", run, "--steps", "3"]):
                line = self.fails(*args, message=("config.json", "the setting lexicon_bias (now %s)" % json.dumps(value),
                                                   "restore config.json"))
                for word in ("io::load", "strict", "Bahdanau", "Seq2Seq", "lexicon_table", "attn::"):
                    self.assertNotIn(word, line)

    @classmethod
    def documents_run(cls):
        run = cls.path("runs", "docs")
        if not os.path.exists(run):
            corpus = cls.path("docs.jsonl")
            test_documents.write_corpus(corpus, test_documents.corpus_lines())
            status, out, err = attn("train", *test_documents.model_args("bag-of-words"), "--task", corpus,
                                    "--epochs", "1", "--out", run)
            assert status == 0, err
            with open(os.path.join(run, "train.out"), "w", encoding="utf-8") as f:
                f.write(out)
        return run


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_limits.py PATH/TO/attn [unittest arguments]")
    common.ATTN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
