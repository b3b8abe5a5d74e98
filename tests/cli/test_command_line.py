#!/usr/bin/python3
"""The command line says what it does (issue 63): no output replaces a file a run depends on,
formats follow the file's extension, filters say what they drop, --help is complete and its
defaults true, --version, suggestions for a mistyped flag or command, and clear messages.

    /usr/bin/python3 tests/cli/test_command_line.py build/cli/attn [-v] [TestName...]

Standard library only; tiny models, a few steps: seconds in all.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import common
from common import TINY, attn, folder_digest, read_part, write_part

# A small corpus: 30 short pairs and 5 long ones (14 words a side, over the default limit of 12).
SHORT = ["open the file .\touvrir le fichier .", "close the window .\tfermer la fenêtre .",
         "save the file .\tenregistrer le fichier ."] * 10
LONG = ["open the file and close the window and save the file now please .\t"
        "ouvrir le fichier et fermer la fenêtre et enregistrer le fichier ."] * 5
SMALL = ["--set", "embed_dim=8", "--set", "encoder_dim=8", "--set", "decoder_dim=8", "--set", "attention_dim=8",
         "--batch-size", "4", "--seed", "3", "--eval-every", "0"]


class CommandLine(common.ScratchTest):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="attn_command_line_")
        cls.corpus = cls.path("corpus.tsv")
        with open(cls.corpus, "w", encoding="utf-8") as f:
            f.write("\n".join(SHORT + LONG) + "\n")
        cls.run_dir = cls.path("run")
        status, cls.train_out, err = attn("train", "--task", cls.corpus, *SMALL, "--steps", "2", "--out", cls.run_dir)
        assert status == 0, err
        cls.bpe_run = cls.path("bpe_run")
        status, out, err = attn("train", "--task", cls.corpus, *SMALL, "--bpe", "20", "--max-length", "40", "--steps", "2",
                                "--out", cls.bpe_run)
        assert status == 0, err

    def corpus_unchanged(self):
        with open(self.corpus, encoding="utf-8") as f:
            self.assertEqual(f.read(), "\n".join(SHORT + LONG) + "\n")

    def test_outputs_never_replace_a_runs_corpus(self):
        """heatmap --out/--html and eval --predictions onto the run's own corpus: refused, even with --overwrite."""
        before = folder_digest(self.run_dir)
        for run in (self.run_dir, self.bpe_run):
            for args in (["heatmap", "--checkpoint", run, "open the file", "--out", self.corpus, "--overwrite"],
                         ["heatmap", "--checkpoint", run, "open the file", "--html", self.corpus, "--overwrite"],
                         ["eval", "--checkpoint", run, "--predictions", self.corpus, "--overwrite"]):
                self.fails(*args, message=(self.corpus, "the run's corpus", "even --overwrite"))
        self.corpus_unchanged()
        self.assertEqual(folder_digest(self.run_dir), before)
        self.ok("eval", "--checkpoint", self.run_dir)
        # another name of the corpus (a hard link) is the same file
        other = self.path("corpus_link.tsv")
        if not os.path.exists(other):
            os.link(self.corpus, other)
        self.fails("heatmap", "--checkpoint", self.bpe_run, "open the file", "--html", other, "--overwrite",
                   message=("--html " + other, "the run's corpus"))
        self.corpus_unchanged()

    def test_commands_that_read_no_run_never_replace_a_runs_corpus(self):
        """corpus gettext --out and bpe learn --out read no run, but the file may be the corpus (or the test
        file) of one: replaced, that run could no longer be evaluated or resumed (its checksum changed). Refused,
        even with --overwrite, for a run next to the file or under the current folder; a file no run reads is
        replaced as before. (Before: both replaced the run's corpus without a word.)"""
        from test_bad_inputs import write_mo_bytes
        locale = self.path("locale_out")
        os.makedirs(os.path.join(locale, "fr", "LC_MESSAGES"), exist_ok=True)
        with open(os.path.join(locale, "fr", "LC_MESSAGES", "a.mo"), "wb") as f:
            f.write(write_mo_bytes([("Cannot open the file now.", "Impossible d'ouvrir le fichier maintenant.")]))
        other = self.path("other.tsv")
        shutil.copy(self.corpus, other)
        # The run's corpus elsewhere, the run under the current folder.
        away = tempfile.mkdtemp(prefix="attn_command_line_away_")
        try:
            corpus_away = os.path.join(away, "away.tsv")
            shutil.copy(self.corpus, corpus_away)
            os.makedirs(self.path("work", "runs"))
            self.ok("train", "--task", corpus_away, *SMALL, "--steps", "1", "--out", self.path("work", "runs", "away"))
            before = {self.corpus: folder_digest(self.tmp), corpus_away: folder_digest(away)}
            # (the runs of this folder that read the corpus: self.run_dir and others of the tests; any of them is named)
            for corpus, run, cwd in ((self.corpus, self.tmp + "/", None), (corpus_away, "runs/away", self.path("work"))):
                for args in (["corpus", "gettext", "--locale-dir", locale, "--out", corpus, "--overwrite"],
                             ["bpe", "learn", "--task", other, "--merges", "3", "--out", corpus, "--overwrite"]):
                    status, out, err = attn(*args, cwd=cwd)
                    common.check_failure(self, status, out, err, ("--out " + corpus, "the corpus of the run", run,
                                                                  "even --overwrite"), args)
            self.assertEqual({self.corpus: folder_digest(self.tmp), corpus_away: folder_digest(away)}, before)
        finally:
            shutil.rmtree(away, ignore_errors=True)
        self.corpus_unchanged()
        self.ok("eval", "--checkpoint", self.run_dir)
        # A file no run reads is replaced with --overwrite, as before.
        self.ok("bpe", "learn", "--task", other, "--merges", "3", "--out", other + ".bpe")
        self.ok("bpe", "learn", "--task", other, "--merges", "3", "--out", other + ".bpe", "--overwrite")
        self.ok("corpus", "gettext", "--locale-dir", locale, "--min-words", "1", "--out", self.path("fresh.tsv"))
        self.ok("corpus", "gettext", "--locale-dir", locale, "--min-words", "1", "--out", self.path("fresh.tsv"),
                "--overwrite")

    def test_output_in_a_kernel_folder(self):
        """--html /proc/version: named as a folder nothing can be written to, not 'No such file or directory'."""
        self.fails("heatmap", "--checkpoint", self.run_dir, "open the file", "--html", "/proc/version", "--overwrite",
                   message=("--html /proc/version", "a folder of the kernel's"))

    def test_format_follows_the_extension(self):
        """heatmap writes SVG and HTML, graph DOT or SVG: a file named for another format is refused."""
        png = self.path("x.png")
        self.fails("heatmap", "--checkpoint", self.run_dir, "open the file", "--out", png,
                   message=("--out " + png, "SVG", ".svg"))
        self.fails("heatmap", "--checkpoint", self.run_dir, "open the file", "--html", self.path("x.svg"),
                   message=("--html", ".html"))
        self.fails("graph", "--out", self.path("g.png"), message=("--out", ".dot", ".svg"))
        self.assertFalse(os.path.exists(png))
        self.ok("graph", "--out", self.path("g.dot"))
        with open(self.path("g.dot")) as f:
            self.assertTrue(f.read().startswith("digraph"))
        self.ok("graph", "--out", self.path("g.SVG"))
        with open(self.path("g.SVG")) as f:
            self.assertIn("<svg", f.read())

    def test_filters_say_what_they_drop(self):
        """A FILE.tsv run says how many pairs it kept and how many the length limit dropped."""
        self.assertIn(f"{self.corpus}: 30 of 35 sentence pairs kept, 5 dropped as longer than 12 tokens",
                      self.train_out)
        self.assertIn("--max-length N keeps longer pairs", self.train_out)
        out = self.ok("train", "--task", self.corpus, *SMALL, "--max-length", "20", "--steps", "1",
                      "--out", self.path("long"))
        self.assertIn("35 of 35 sentence pairs kept", out)
        self.assertNotIn("dropped", out)

    def test_help_is_complete(self):
        """Every flag of every command has a description; defaults are shown without float noise, and true."""
        commands = [["demo"], ["train"], ["eval"], ["translate"], ["heatmap"], ["classify"], ["graph"],
                    ["corpus", "gettext"], ["bpe", "learn"], ["batches"]]
        for command in commands:
            text = self.ok(*command, "--help")
            lines = text.split("\n")
            for i, line in enumerate(lines):
                # "  --flag[,--other] [TYPE[=default]] [...] description", the description maybe on the next line
                m = re.match(r"^  -\S*(?: [A-Z]+\S*)?(?: \.\.\.)?(?: REQUIRED)?(.*)$", line)
                if not m:
                    continue
                follows = i + 1 < len(lines) and re.match(r"^ {20,}\S", lines[i + 1])
                self.assertTrue(m.group(1).strip() or follows,
                                f"attn {' '.join(command)} --help: no description: {line!r}")
            self.assertNotRegex(text, r"\d\.\d{9,}", f"attn {' '.join(command)} --help: float noise")
        train = self.ok("train", "--help")
        self.assertIn("FLOAT=0.003", train)
        self.assertNotIn("--max-length UINT=0", train)  # the default that applies is 12 (FILE.tsv) or 15
        self.assertIn("(default 12)", train)
        heatmap = self.ok("heatmap", "--help")
        self.assertNotIn("--layer UINT=0", heatmap)  # the default is the last layer
        self.assertNotIn("--head UINT=0", heatmap)  # and every head
        self.assertNotIn("{false}", train)  # --lowercase and --no-lowercase, each with its meaning
        self.assertNotIn("Excludes", train)
        self.fails("train", "--task", self.corpus, "--lowercase", "--no-lowercase", "--out", self.path("both"),
                   message="--lowercase and --no-lowercase contradict each other")

    def test_version(self):
        status, out, err = attn("--version")
        self.assertEqual(status, 0, err)
        self.assertRegex(out.strip(), r"^attn \d+\.\d+\.\d+")

    def test_suggestions(self):
        """A mistyped flag or command gets the one meant."""
        self.fails("train", "--modle", "luong", "--out", self.path("never"),
                   message=("'attn train' has no flag --modle", "did you mean --model?"))
        self.fails("train", "--stpes=3", message="did you mean --steps?")
        self.fails("bpe", "learn", "--merge", "3", message=("'attn bpe learn' has no flag --merge", "--merges"))
        self.fails("eval", "--checkpoint", self.run_dir, "--nothing-like-this",
                   message=("'attn eval' has no flag --nothing-like-this", "see attn eval --help"))
        self.fails("trian", message=("unknown command 'trian'", "did you mean 'train'?"))
        self.assertFalse(os.path.exists(self.path("never")))

    def test_model_settings_named(self):
        """A setting that cannot work is refused before training, naming the --set and what to change."""
        self.fails("train", "--model", "transformer", "--task", "reverse", "--set", "attention_position=rotary",
                   "--set", "d_model=30", "--set", "nhead=2", "--steps", "1", "--out", self.path("rotary"),
                   message=("--set attention_position=rotary", "d_model / nhead must be even", "30 / 2 = 15"))
        self.fails("train", "--task", "reverse", "--set", "coverage_embedding=1000000000000", "--steps", "1",
                   "--out", self.path("huge"),
                   message=("coverage_embedding=1000000000000", "more memory than this machine has",
                            "smaller coverage_embedding"))
        self.assertFalse(os.path.exists(self.path("rotary")) or os.path.exists(self.path("huge")))

    def test_changed_model_setting_on_resume(self):
        """A model setting changed in config.json: --resume says so, with no advice for C++ code."""
        run = self.path("changed_setting")
        self.ok("train", *TINY, "--steps", "2", "--out", run)
        config = json.loads(read_part(run, "config.json"))
        config["model"]["lexicon_bias"] = True
        write_part(run, "config.json", json.dumps(config, indent=2))
        for args in (["train", "--resume", run, "--steps", "4"], ["eval", "--checkpoint", run]):
            line = self.fails(*args, message=("config.json", "restore config.json"))
            self.assertNotIn("io::load", line)
            self.assertNotIn("strict", line)

    def test_zero_size_named_on_resume(self):
        """A size set to 0 in config.json: the refusal names the key."""
        run = self.path("zero_kernel")
        self.ok("train", "--model", "conv", "--task", "reverse", "--n-train", "100", "--batch-size", "8", "--steps", "2",
                "--eval-every", "0", "--out", run)
        config = json.loads(read_part(run, "config.json"))
        config["model"]["kernel1"] = 0
        write_part(run, "config.json", json.dumps(config, indent=2))
        for args in (["train", "--resume", run, "--steps", "4"], ["eval", "--checkpoint", run]):
            self.fails(*args, message=("config.json", "0 in the keys: kernel1"))

    def test_checkpoint_of_a_demo_folder(self):
        """translate --checkpoint out/demo points to out/demo/run, where attn demo writes its run."""
        demo = self.path("demo")
        if not os.path.exists(demo):
            os.mkdir(demo)
            shutil.copytree(self.run_dir, os.path.join(demo, "run"))
        self.fails("translate", "--checkpoint", demo, "open the file",
                   message=(demo + ": holds no checkpoint", "--checkpoint " + os.path.join(demo, "run")))

    def test_bpe_learn_message(self):
        """A malformed line: "--skip-malformed skips such lines", said once."""
        bad = self.path("bad.tsv")
        with open(bad, "w") as f:
            f.write("a b\tc d\nno tab here\n")
        line = self.fails("bpe", "learn", "--task", bad, "--merges", "3", "--out", self.path("bad.bpe"),
                          message=(bad + ":2:", "--skip-malformed skips such lines"))
        self.assertNotIn("skips skips", line)

    def test_multi_source_malformed_line_number(self):
        """A multi-source line without its two sources is named by its line number."""
        mixed = self.path("mixed.tsv")
        with open(mixed, "w", encoding="utf-8") as f:
            f.write("red ||| rot\trouge\n\nblue ||| blau\tbleu\ngreen only\tvert\nbig ||| groß\tgrand\n")
        self.fails("train", "--model", "multi-source", "--task", mixed, "--set", "embed_dim=8", "--set",
                   "hidden_dim=8", "--steps", "1", "--out", self.path("ms"),
                   message=(mixed + ":4: ", "has 1 part", "--skip-malformed"))
        status, out, err = attn("train", "--model", "multi-source", "--task", mixed, "--set", "embed_dim=8", "--set",
                                "hidden_dim=8", "--batch-size", "2", "--skip-malformed", "--steps", "1",
                                "--eval-every", "0", "--out", self.path("ms_skipped"))
        self.assertEqual(status, 0, err)
        self.assertIn("1 pairs without 2 sources skipped (the first: line 4)", out)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_command_line.py PATH/TO/attn [unittest arguments]")
    common.ATTN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
