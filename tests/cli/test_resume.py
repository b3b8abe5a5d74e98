#!/usr/bin/python3
"""Every run resumes: the grid captioner, Listen, Attend and Spell and the document classifiers train
with one loop (train/epoch_trainer.hpp) whose checkpoints hold the optimizer's state, the position in
the epoch and the generators. For one model of each of these families, a run interrupted (by Ctrl-C at
a random moment, or by a smaller --steps or --epochs) and resumed with `attn train --resume` ends with
exactly the arrays of one run straight through: model.npz (the weights eval reads) and
model.trainer.npz (the training weights, the optimizer's moments, the generators), compared value by
value, bit for bit. Run folders made before these runs resumed (tests/cli/old_runs/, made by that
attn: see its README) still load for eval, with the very output they gave then, and --resume refuses
them, saying why.

    /usr/bin/python3 tests/cli/test_resume.py build/cli/attn [-v] [TestName...]

Standard library only. The las tests are skipped without espeak-ng.
"""
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
import unittest
import zipfile

import common
from common import attn, read_part, write_part

HERE = os.path.dirname(os.path.abspath(__file__))
OLD_RUNS = os.path.join(HERE, "old_runs")
sys.path.insert(0, HERE)
import test_documents  # noqa: E402  (its corpus: three classes a tiny model learns at once)

GRID = ["--model", "grid", "--task", "grid", "--n-train", "100", "--batch-size", "8", "--set", "embed_dim=8",
        "--set", "decoder_dim=8", "--set", "attention_dim=8", "--set", "attention=hard", "--seed", "3",
        "--eval-every", "0", "--checkpoint-every", "0"]
HAN = [*test_documents.model_args("han"), "--lr", "0.03", "--batch-size", "8", "--seed", "3"]
LAS = ["--model", "las", "--task", "speech", "--n-train", "48", "--batch-size", "16", "--lr", "0.002", "--seed", "5",
       "--set", "listener_dim=8", "--set", "speller_dim=16", "--set", "attention_dim=8", "--set", "embed_dim=8",
       "--set", "pyramid_layers=1"]


def arrays(run, name):
    """The arrays of one .npz of a run's checkpoint, by name: the .npy bytes (header and values), not
    the archive's, whose entries carry the time they were written."""
    path = os.path.join(common.unit(run), name)
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


class ResumeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="attn_resume_test_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def ok(self, *args, timeout=600):
        status, out, err = attn(*args, timeout=timeout)
        self.assertEqual(status, 0, f"attn {' '.join(args)}: {err}")
        return out

    def fails(self, *args, message):
        status, out, err = attn(*args)
        return common.check_failure(self, status, out, err, message, args)

    def assert_same_run(self, a, b):
        """Two runs' checkpoints hold the same arrays, bit for bit, and the same config.json."""
        for name in ("model.npz", "model.trainer.npz"):
            x, y = arrays(a, name), arrays(b, name)
            self.assertEqual(sorted(x), sorted(y), name)
            differing = [k for k in x if x[k] != y[k]]
            self.assertEqual(differing, [], f"{name}: these arrays differ from the run straight through")
        self.assertEqual(json.loads(read_part(a, "config.json")), json.loads(read_part(b, "config.json")))

    def interrupt_and_resume(self, args, whole, seconds):
        """Runs `args` into a new folder, Ctrl-C at a random moment of its training, then --resume to the end;
        returns the folder, or None if the run ended before the signal."""
        rng = random.Random(int(os.environ.get("ATTN_SIGINT_SEED", "1")))
        for attempt in range(3):
            run = self.path(f"{os.path.basename(whole)}_sigint_{attempt}")
            status, out, err = common.interrupted([*args, "--out", run], rng.uniform(0, seconds / 2))
            if status == 0:
                continue  # it finished before the signal
            self.assertEqual(status, 130, err)
            m = re.search(r"^attn: stopped by Ctrl-C at step (\d+) of (\d+)(.*); the checkpoint in (.+) holds step \1",
                          err, re.M)
            self.assertIsNotNone(m, err)
            self.assertEqual(m.group(4), run)
            command = err.strip().split("\n")[-1].strip()
            self.assertEqual(command, f"{common.ATTN} train --resume {run}")
            self.assertNotIn("stopped_at_step", json.loads(read_part(run, "config.json"))["train"])
            print(f"\n{' '.join(args[:3])}: stopped at step {m.group(1)} of {m.group(2)}{m.group(3)}", file=sys.stderr)
            out = self.ok("train", "--resume", run)
            self.assertIn(f"step {m.group(1)}", out.splitlines()[[i for i, l in enumerate(out.splitlines())
                                                                   if l.startswith("training ")][0]])
            return run
        return None


class Grid(ResumeTest):
    def test_steps_then_resume(self):
        whole, part = self.path("grid_whole"), self.path("grid_part")
        self.ok("train", *GRID, "--steps", "30", "--out", whole)
        self.ok("train", *GRID, "--steps", "11", "--out", part)  # 13 batches an epoch: in the first epoch
        self.assertEqual(sorted(os.listdir(common.unit(part))),
                         ["config.json", "manifest.json", "model.npz", "model.trainer.npz", "vocab.json"])
        out = self.ok("train", "--resume", part, "--steps", "30")
        self.assertIn("resumed at step 11", out)
        self.assert_same_run(whole, part)
        self.assertEqual(self.ok("eval", "--checkpoint", part), self.ok("eval", "--checkpoint", whole))
        self.fails("train", "--resume", part, "--steps", "30", message="already at step 30")
        self.fails("train", "--resume", part, "--epochs", "3", message="--epochs does not apply to this grid run")

    def test_ctrl_c_then_resume(self):
        whole = self.path("grid_sigint_whole")
        began = time.monotonic()
        self.ok("train", *GRID, "--steps", "300", "--out", whole)
        run = self.interrupt_and_resume(["train", *GRID, "--steps", "300"], whole, time.monotonic() - began)
        self.assertIsNotNone(run, "no attempt was interrupted before its end")
        self.assert_same_run(whole, run)


class Documents(ResumeTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.corpus = os.path.join(cls.tmp, "docs.jsonl")
        test_documents.write_corpus(cls.corpus, test_documents.corpus_lines())

    def test_epochs_then_resume(self):
        whole, part = self.path("han_whole"), self.path("han_part")
        self.ok("train", *HAN, "--task", self.corpus, "--epochs", "5", "--out", whole)
        self.ok("train", *HAN, "--task", self.corpus, "--epochs", "2", "--out", part)
        out = self.ok("train", "--resume", part, "--epochs", "5")
        self.assertIn("resumed after epoch 2 (step 22)", out)
        self.assertEqual(len(re.findall(r"^  epoch \d+/5: ", out, re.M)), 3)  # epochs 3 to 5
        self.assert_same_run(whole, part)
        # The epoch kept is the best of all five, the first two included (their validation is in the checkpoint).
        self.assertEqual(self.ok("eval", "--checkpoint", part), self.ok("eval", "--checkpoint", whole))
        self.fails("train", "--resume", part, message="has trained 5 epochs; to train it further, give --epochs more than 5")
        self.fails("train", "--resume", part, "--steps", "40", message="--steps does not apply to this han run")

    def test_ctrl_c_then_resume(self):
        whole = self.path("han_sigint_whole")
        args = [*HAN, "--task", self.corpus, "--epochs", "30"]
        began = time.monotonic()
        self.ok("train", *args, "--out", whole)
        run = self.interrupt_and_resume(["train", *args], whole, time.monotonic() - began)
        self.assertIsNotNone(run, "no attempt was interrupted before its end")
        self.assert_same_run(whole, run)


@unittest.skipIf(shutil.which("espeak-ng") is None, "espeak-ng is not installed")
class Speech(ResumeTest):
    def test_ctrl_c_then_resume(self):
        whole = self.path("las_whole")
        args = [*LAS, "--epochs", "3"]
        out = self.ok("train", *args, "--out", whole)
        seconds = float(re.search(r"^training time: 3 epochs in ([0-9.]+) s", out, re.M).group(1))
        run = self.interrupt_and_resume(["train", *args], whole, seconds)
        if run is None:  # every attempt ended first: stop at an epoch's end instead
            run = self.path("las_part")
            self.ok("train", *LAS, "--epochs", "1", "--out", run)
            self.ok("train", "--resume", run, "--epochs", "3")
        self.assert_same_run(whole, run)


class OldRuns(ResumeTest):
    """Run folders made by attn 6c669a3 (before these runs resumed; old_runs/README.md): each loads for eval
    and prints what that attn printed; --resume refuses each, naming the missing trainer state (and the stop,
    for one stopped)."""

    def copy(self, name):
        run = self.path("old_" + name)
        shutil.copytree(os.path.join(OLD_RUNS, name), run)
        return run

    def expected(self, name):
        with open(os.path.join(OLD_RUNS, name + ".eval.txt"), encoding="utf-8") as f:
            return f.read()

    def check(self, name, stopped_at=None):
        run = self.copy(name)
        if name.startswith("han"):  # its corpus, where this checkout has it (config.json records the path)
            corpus = self.path("old_docs.jsonl")
            shutil.copyfile(os.path.join(OLD_RUNS, "docs.jsonl"), corpus)
            config = json.loads(read_part(run, "config.json"))
            config["task"]["file"] = corpus
            write_part(run, "config.json", json.dumps(config, indent=2) + "\n")
        config = json.loads(read_part(run, "config.json"))
        self.assertEqual(config["train"].get("stopped_at_step"), stopped_at)
        out = "".join(line for line in self.ok("eval", "--checkpoint", run).splitlines(True)
                      if not line.startswith("speaking "))  # how long espeak-ng took: not the run's
        self.assertEqual(out, self.expected(name))
        if name.startswith("han"):  # the probabilities of a page, to two digits: the weights themselves
            shutil.copyfile(os.path.join(OLD_RUNS, "page2.txt"), self.path("page2.txt"))
            status, out, err = attn("classify", "--checkpoint", run, "page2.txt", cwd=self.tmp)
            self.assertEqual(status, 0, err)
            with open(os.path.join(OLD_RUNS, name + ".classify.txt"), encoding="utf-8") as f:
                self.assertEqual(out, f.read())
        message = ["model.trainer.npz is missing", "cannot resume", "eval reads it as it is"]
        if stopped_at:
            message.append(f"(it was stopped at step {stopped_at})")
        before = common.folder_digest(run)
        self.fails("train", "--resume", run, message=tuple(message))
        self.assertEqual(common.folder_digest(run), before)

    def test_grid(self):
        self.check("grid")

    def test_grid_stopped(self):
        self.check("grid_stopped", stopped_at=json.loads(read_part(os.path.join(OLD_RUNS, "grid_stopped"),
                                                                   "config.json"))["train"]["stopped_at_step"])

    def test_han(self):
        self.check("han")

    def test_han_stopped(self):
        self.check("han_stopped", stopped_at=json.loads(read_part(os.path.join(OLD_RUNS, "han_stopped"),
                                                                  "config.json"))["train"]["stopped_at_step"])

    @unittest.skipIf(shutil.which("espeak-ng") is None, "espeak-ng is not installed")
    def test_las(self):
        self.check("las")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_resume.py PATH/TO/attn [unittest arguments]")
    common.ATTN = os.path.abspath(sys.argv.pop(1))
    test_documents.common.ATTN = common.ATTN
    unittest.main(verbosity=2)
