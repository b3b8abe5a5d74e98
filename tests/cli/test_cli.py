#!/usr/bin/python3
"""The `attn` command line, run as a user runs it: one subprocess per command.

    /usr/bin/python3 tests/cli/test_cli.py build/cli/attn [-v] [TestName...]

Standard library only (unittest, subprocess, zipfile, xml). Tiny models and
few steps: the whole file takes seconds. Every failure must be ONE line on
standard error starting "attn: error:", with a non-zero exit status, never a
crash, a stack trace or "terminate called".
"""
import ast
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import unittest
import xml.etree.ElementTree as ET
import zipfile

import common
from common import TINY, attn, read_part, write_part

SVG = "{http://www.w3.org/2000/svg}"
# Every model attn train trains and every task it accepts, as the course names them.
ALL_MODELS = ["seq2seq", "bahdanau", "luong", "luong-local", "transformer", "monotonic", "conv", "conv-copy", "copynet",
              "multi-source", "grid", "show-attend-tell", "las", "han", "flat-attention", "bag-of-words", "pointer-sentinel", "transformer-lm"]
ALL_TASKS = ["copy", "reverse", "sort", "dates", "grid", "shapes", "speech", "FILE.tsv", "FILE.jsonl", "FILE.txt"]


def npy_matrix(data):
    """A 2-D float32 or float64 .npy (bytes) as a list of rows: the format's version-1 header, then the numbers."""
    assert data[:6] == b"\x93NUMPY", "not a .npy array"
    header_len = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + header_len].decode("latin1"))
    assert header["descr"] in ("<f4", "<f8") and not header["fortran_order"], header
    rows, cols = header["shape"]
    values = struct.unpack("<%d%s" % (rows * cols, "f" if header["descr"] == "<f4" else "d"), data[10 + header_len:])
    return [list(values[r * cols:(r + 1) * cols]) for r in range(rows)]


def npz_arrays(path):
    """The raw .npy bytes (header + data) of every array in an .npz file."""
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name) for name in z.namelist()}


class CliTest(unittest.TestCase):
    tmp = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="attn_cli_test_")
        cls.run_dir = cls.path("run")  # a trained checkpoint most tests use
        status, out, err = attn("train", *TINY, "--steps", "20", "--eval-every", "10", "--out", cls.run_dir)
        assert status == 0, err

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def path(cls, *parts):
        return os.path.join(cls.tmp, *parts)

    def ok(self, *args, cwd=None):
        """attn succeeds without a word on stderr; returns its stdout."""
        status, out, err = attn(*args, cwd=cwd)
        self.assertEqual(status, 0, f"attn {' '.join(args)} failed: {err}")
        return out

    def fails(self, *args, message):
        """attn fails with exactly one line of error containing `message`."""
        status, out, err = attn(*args)
        return common.check_failure(self, status, out, err, message, args)

    def copy_run(self, name):
        """A copy of the trained checkpoint, to break."""
        dst = self.path(name)
        shutil.copytree(self.run_dir, dst)
        return dst

    def check_svg(self, path):
        """The file is well-formed SVG; returns its root element."""
        self.assertTrue(os.path.isfile(path), path)
        root = ET.parse(path).getroot()  # raises on malformed XML
        self.assertEqual(root.tag, SVG + "svg")
        self.assertTrue(root.get("width"), "an SVG without a width")
        return root


class Help(CliTest):
    def test_help_on_every_command(self):
        self.assertIn("train", self.ok("--help"))
        for command in ("demo", "train", "eval", "translate", "heatmap", "graph", "corpus", "corpus gettext"):
            out = self.ok(*command.split(), "--help")
            self.assertIn("Usage:", out)
            self.assertIn("--help", out)


class Train(CliTest):
    def test_run_dir_files(self):
        self.assertEqual(sorted(os.listdir(self.run_dir)),
                         ["accuracy_by_length.svg", "checkpoint", "lock", "loss.svg", "lr.svg"])
        for plot in ("accuracy_by_length.svg", "loss.svg", "lr.svg"):  # the run's plots, as demo writes them
            self.check_svg(os.path.join(self.run_dir, plot))
        self.assertEqual(sorted(os.listdir(common.unit(self.run_dir))),
                         ["config.json", "manifest.json", "model.npz", "model.trainer.npz", "vocab.json"])
        import json
        manifest = json.loads(read_part(self.run_dir, "manifest.json"))
        for name, entry in manifest["files"].items():
            data = read_part(self.run_dir, name)
            self.assertEqual(entry, {"bytes": len(data), "fnv1a64": common.fnv1a64(data)})
        with open(os.path.join(common.unit(self.run_dir), "config.json")) as f:
            config = json.load(f)
        self.assertEqual(config["format"], "attn-checkpoint")
        self.assertEqual(config["model"]["model"], "bahdanau")
        self.assertEqual(config["model"]["decoder_dim"], 8)
        self.assertEqual(config["task"]["name"], "reverse")
        self.assertEqual(config["train"]["steps"], 20)
        self.assertEqual(config["seed"], 3)
        with open(os.path.join(common.unit(self.run_dir), "vocab.json")) as f:
            vocab = json.load(f)
        self.assertEqual(vocab["src"]["tokens"][:4], ["<pad>", "<bos>", "<eos>", "<unk>"])
        arrays = npz_arrays(os.path.join(common.unit(self.run_dir), "model.npz"))
        self.assertIn("src_embed.weight.npy", arrays)
        self.assertTrue(all(a.startswith(b"\x93NUMPY") for a in arrays.values()))

    def test_progress_and_evaluation_printed(self):
        out = self.ok("train", *TINY, "--steps", "10", "--eval-every", "5", "--out", self.path("printed"))
        self.assertIn("training bahdanau", out)
        self.assertIn("step 10/10", out)
        self.assertIn("eval at step 5", out)
        self.assertIn("exact match on the test set", out)

    def assert_resume_matches(self, model_args, name):
        """N steps in one go == N/2 steps, then --resume to N: the same weights, bit for bit."""
        whole, half = self.path(name + "_whole"), self.path(name + "_half")
        self.ok("train", *model_args, "--steps", "16", "--eval-every", "5", "--out", whole)
        self.ok("train", *model_args, "--steps", "8", "--eval-every", "5", "--out", half)
        self.assertNotEqual(npz_arrays(whole + "/checkpoint/model.npz"), npz_arrays(half + "/checkpoint/model.npz"))
        out = self.ok("train", "--resume", half, "--steps", "16")
        self.assertIn("resumed at step 8", out)
        a, b = npz_arrays(whole + "/checkpoint/model.npz"), npz_arrays(half + "/checkpoint/model.npz")
        self.assertEqual(sorted(a), sorted(b))
        for key in a:
            self.assertEqual(a[key], b[key], f"{name}: {key} differs after resuming")

    def test_resume_reaches_the_same_weights(self):
        self.assert_resume_matches(TINY, "bahdanau")

    def test_resume_with_dropout(self):  # the random state of dropout must be saved too
        self.assert_resume_matches(
            ["--model", "transformer", "--set", "d_model=8", "--set", "nhead=2", "--set", "dim_feedforward=16",
             "--set", "num_encoder_layers=1", "--set", "num_decoder_layers=1", "--set", "dropout=0.1",
             "--task", "copy", "--max-length", "6", "--n-train", "200", "--batch-size", "8"], "transformer")

    def test_every_model_trains(self):
        for model, sets in (("seq2seq", ["embed_dim=4", "hidden_dim=8"]),
                            ("luong", ["embed_dim=4", "hidden_dim=8", "attention_dim=8"]),
                            ("luong-local", ["embed_dim=4", "hidden_dim=8", "attention_dim=8", "window=2"]),
                            ("conv", ["embed_dim=4", "hidden_dim=8", "conv_channels=4"]),
                            ("conv-copy", ["embed_dim=4", "hidden_dim=8", "conv_channels=4"]),
                            ("copynet", ["embed_dim=4", "encoder_dim=4", "decoder_dim=8", "attention_dim=4"])):
            args = [a for s in sets for a in ("--set", s)]
            out = self.ok("train", "--model", model, *args, "--task", "sort", "--max-length", "6", "--n-train", "100",
                          "--steps", "3", "--batch-size", "4", "--out", self.path("every_" + model))
            self.assertIn("training " + model, out)

    def test_copynet_writes_words_its_vocabulary_lacks(self):
        # "open NAME" -> "ouvrir NAME" with every name seen once: --min-freq 2 leaves them all out of
        # both vocabularies, so only copying can write them (training, eval and translate all read the
        # extended vocabulary).
        tsv = self.path("names.tsv")
        with open(tsv, "w") as f:
            for i in range(400):
                verb, french = ("open", "ouvrir") if i % 2 else ("close", "fermer")
                f.write("%s n%d\t%s n%d\n" % (verb, i, french, i))
        run = self.path("copynet")
        out = self.ok("train", "--model", "copynet", "--set", "embed_dim=16", "--set", "encoder_dim=16",
                      "--set", "decoder_dim=32", "--set", "attention_dim=16", "--task", tsv, "--min-freq", "2",
                      "--steps", "300", "--lr", "0.01", "--batch-size", "16", "--out", run)
        self.assertIn("training copynet", out)
        self.assertIn("test sentences: exact match", self.ok("eval", "--checkpoint", run))
        for beam in ("1", "2"):
            out = self.ok("translate", "--checkpoint", run, "--beam", beam, "open zq7")
            self.assertIn("open zq7  ->  ouvrir zq7", out)
        self.ok("heatmap", "--checkpoint", run, "close zq7", "--out", self.path("copynet.svg"))
        with open(self.path("copynet.svg")) as f:
            self.assertIn("fermer", f.read())  # the output's rows
        self.fails("train", "--model", "copynet", "--task", tsv, "--label-smoothing", "0.1", "--steps", "2",
                   "--out", self.path("copynet_smoothed"), message="label smoothing is not defined over a copying model")

    def test_a_copying_run_records_its_objective(self):
        # A copying model trains over each batch's extended vocabulary, and its config says so: a conv-copy
        # run whose config does not say so (its steps trained over the target ids alone) is not resumed.
        run = self.path("conv_copy_objective")
        args = ["--model", "conv-copy", "--set", "embed_dim=4", "--set", "hidden_dim=8", "--set", "conv_channels=4",
                "--task", "sort", "--max-length", "6", "--n-train", "100", "--batch-size", "4"]
        self.ok("train", *args, "--steps", "3", "--out", run)
        self.assertEqual(json.loads(read_part(run, "config.json"))["train"]["copy_objective"], "extended")
        self.assertIn("resumed at step 3", self.ok("train", "--resume", run, "--steps", "5"))
        config = json.loads(read_part(run, "config.json"))
        self.assertEqual(config["train"]["copy_objective"], "extended")  # kept by the resumed run
        del config["train"]["copy_objective"]
        write_part(run, "config.json", json.dumps(config))
        before = common.folder_digest(run)
        self.fails("train", "--resume", run, "--steps", "7", message='has no "copy_objective"')
        self.assertEqual(common.folder_digest(run), before)  # refused before anything is written
        self.assertIn("test sentences: exact match", self.ok("eval", "--checkpoint", run))  # read as it is
        config["train"]["copy_objective"] = "targets"
        write_part(run, "config.json", json.dumps(config))
        self.fails("train", "--resume", run, "--steps", "7", message="must be one of")
        # CopyNet records it too; one without the key has trained over the extended vocabulary all along.
        copynet = self.path("copynet_objective")
        copynet_args = ["--model", "copynet", "--set", "embed_dim=4", "--set", "encoder_dim=4", "--set",
                        "decoder_dim=8", "--set", "attention_dim=4", "--task", "sort", "--max-length", "6",
                        "--n-train", "100", "--batch-size", "4"]
        self.ok("train", *copynet_args, "--steps", "3", "--out", copynet)
        config = json.loads(read_part(copynet, "config.json"))
        self.assertEqual(config["train"]["copy_objective"], "extended")
        del config["train"]["copy_objective"]
        write_part(copynet, "config.json", json.dumps(config))
        self.assertIn("resumed at step 3", self.ok("train", "--resume", copynet, "--steps", "5"))
        self.assertEqual(json.loads(read_part(copynet, "config.json"))["train"]["copy_objective"], "extended")
        # A model that does not copy (copynet with copy = false, bahdanau) has no such objective: not written,
        # and refused when present.
        for name, model_args in (("copynet_nocopy", [*copynet_args, "--set", "copy=false", "--set", "selective_read=false"]), ("plain", TINY)):
            plain = self.path(name + "_objective")
            self.ok("train", *model_args, "--steps", "2", "--out", plain)
            config = json.loads(read_part(plain, "config.json"))
            self.assertNotIn("copy_objective", config["train"])
            config["train"]["copy_objective"] = "extended"
            write_part(plain, "config.json", json.dumps(config))
            self.fails("train", "--resume", plain, "--steps", "4", message='"copy_objective" is only for a model that copies')

    def test_monotonic_trains_translates_evaluates_and_draws(self):
        run = self.path("monotonic")
        out = self.ok("train", "--model", "monotonic", "--set", "embed_dim=4", "--set", "encoder_dim=4",
                      "--set", "decoder_dim=8", "--set", "attention_dim=4", "--set", "noise_std=0.5", "--task", "copy",
                      "--max-length", "6", "--n-train", "100", "--steps", "3", "--batch-size", "4", "--out", run)
        self.assertIn("training monotonic", out)
        self.assertIn("test sentences: exact match", self.ok("eval", "--checkpoint", run))
        out = self.ok("translate", "--checkpoint", run, "--show-attention", "1 2 3 4 5")
        self.assertIn("1 2 3 4 5  ->  ", out)
        self.assertIn("1 2 3  ->  ", self.ok("translate", "--checkpoint", run, "--beam", "2", "1 2 3"))
        svg = self.path("monotonic.svg")
        self.assertIn("wrote", self.ok("heatmap", "--checkpoint", run, "1 2 3 4 5", "--out", svg))
        self.check_svg(svg)
        self.fails("train", "--model", "monotonic", "--set", "noise_std=-1", "--task", "copy", "--steps", "1",
                   "--out", self.path("monotonic_bad"), message="noise_std must be >= 0")

    def test_transformer_decodes_within_its_positions(self):
        # max_len 8 covers <bos> + 6 tokens + <eos>: the evaluation at the end must not decode past it.
        run = self.path("short_transformer")
        self.ok("train", "--model", "transformer", "--set", "d_model=8", "--set", "nhead=2", "--set", "max_len=8",
                "--set", "learned_positions=true", "--task", "reverse", "--max-length", "6", "--n-train", "50",
                "--steps", "2", "--batch-size", "4", "--out", run)
        self.assertIn("  ->  ", self.ok("translate", "--checkpoint", run, "--show-attention", "1 2 3 4 5"))
        self.fails("translate", "--checkpoint", run, "1 2 3 4 5 6 7 8 9", message="exceeds max_len 8")

    def test_dates_and_corpus(self):
        self.ok("train", "--task", "dates", "--n-train", "100", "--steps", "3", "--batch-size", "4", "--set",
                "embed_dim=4", "--set", "encoder_dim=4", "--set", "decoder_dim=4", "--set", "attention_dim=4",
                "--out", self.path("dates"))
        out = self.ok("translate", "--checkpoint", self.path("dates"), "3 March 2021")
        self.assertIn("3 March 2021  ->  ", out)
        corpus = self.path("corpus.tsv")
        with open(corpus, "w") as f:
            f.write("go .\tva !\nhi .\tsalut !\nrun !\tcours !\nwho ?\tqui ?\nwait !\tattends !\n" * 3)
        self.ok("train", "--task", "corpus.tsv", "--steps", "3", "--batch-size", "4", "--set", "embed_dim=4",
                "--set", "encoder_dim=4", "--set", "decoder_dim=4", "--set", "attention_dim=4",
                "--out", "corpus_run", cwd=self.tmp)
        self.check_svg(self.path("corpus_run", "bleu_by_length.svg"))  # corpus tasks: BLEU by length too
        # The corpus is found from any folder: its absolute path is in config.json.
        self.assertIn("test sentences", self.ok("eval", "--checkpoint", self.path("corpus_run")))


class Issue21(CliTest):
    """Coverage in the Bahdanau model, the warm-up schedule, the run's plots, heatmaps by layer and head."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.transformer = cls.path("transformer")  # 2 encoder and 2 decoder layers of 2 heads
        status, out, err = attn("train", "--model", "transformer", "--set", "d_model=8", "--set", "nhead=2",
                                "--set", "dim_feedforward=16", "--set", "num_encoder_layers=2",
                                "--set", "num_decoder_layers=2", "--task", "reverse", "--max-length", "6",
                                "--n-train", "50", "--steps", "2", "--batch-size", "4", "--out", cls.transformer)
        assert status == 0, err

    def config(self, run):
        with open(os.path.join(common.unit(run), "config.json")) as f:
            return json.load(f)

    def test_bahdanau_with_coverage(self):
        run = self.path("coverage")
        out = self.ok("train", *TINY, "--set", "coverage=true", "--steps", "6", "--out", run)
        self.assertIn("training bahdanau", out)
        self.assertIs(self.config(run)["model"]["coverage"], True)
        self.assertIn("coverage_weight.npy", npz_arrays(os.path.join(common.unit(run), "model.npz")))
        self.assertNotIn("coverage", self.config(self.run_dir)["model"])  # off by default: older configs unchanged
        self.assertIn("1 2 3  ->  ", self.ok("translate", "--checkpoint", run, "--beam", "2", "1 2 3"))
        self.fails("train", *TINY, "--set", "coverage=maybe", "--out", self.path("x"), message="'coverage'")

    def test_bahdanau_with_coverage_embeddings_and_markov(self):
        run = self.path("markov")
        self.ok("train", *TINY, "--set", "coverage_embedding=4", "--set", "markov=true", "--steps", "6", "--out", run)
        model = self.config(run)["model"]
        self.assertEqual(model["coverage_embedding"], 4)
        self.assertIs(model["markov"], True)
        arrays = npz_arrays(os.path.join(common.unit(run), "model.npz"))
        for name in ("markov_weight.npy", "coverage_embed.weight.npy", "coverage_key.weight.npy", "coverage_update.weight.npy"):
            self.assertIn(name, arrays)
        self.assertNotIn("markov", self.config(self.run_dir)["model"])  # off by default: older configs unchanged
        self.assertIn("1 2 3  ->  ", self.ok("translate", "--checkpoint", run, "--beam", "2", "1 2 3"))
        self.fails("train", *TINY, "--set", "markov=1", "--out", self.path("y"), message="'markov' has the wrong type")
        self.fails("train", *TINY, "--set", "coverage_embedding=-2", "--out", self.path("z"), message="'coverage_embedding'")

    def test_bahdanau_with_a_lexicon_bias(self):
        run = self.path("lexicon")
        out = self.ok("train", *TINY, "--set", "lexicon_bias=true", "--steps", "6", "--out", run)
        self.assertIn("lexicon: IBM model 1, 5 iterations over the", out)
        model = self.config(run)["model"]
        self.assertIs(model["lexicon_bias"], True)
        # The table is saved with the weights, as a buffer.
        arrays = npz_arrays(os.path.join(common.unit(run), "model.npz"))
        self.assertIn("lexicon.npy", arrays)
        # IBM model 1 on reversal: each digit's row is a distribution that peaks on the same digit,
        # and <eos>, which every target ends with, is learned as a word too.
        with open(os.path.join(common.unit(run), "vocab.json")) as f:
            vocab = json.load(f)
        src, tgt = vocab["src"]["tokens"], vocab["tgt"]["tokens"]
        table = npy_matrix(arrays["lexicon.npy"])
        self.assertEqual((len(table), len(table[0])), (len(src), len(tgt)))
        digits = [w for w in src if not w.startswith("<")]
        self.assertGreater(len(digits), 3)
        for word in digits:
            row = table[src.index(word)]
            self.assertAlmostEqual(sum(row), 1.0, places=5)  # saved in the run's float32
            self.assertEqual(tgt[row.index(max(row))], word, f"the row of {word} peaks elsewhere")
        self.assertGreater(min(table[src.index(w)][tgt.index("<eos>")] for w in digits), 0.0)
        self.assertNotIn("lexicon_bias", self.config(self.run_dir)["model"])  # off by default: older configs unchanged
        self.assertIn("1 2 3  ->  ", self.ok("translate", "--checkpoint", run, "--beam", "2", "1 2 3"))
        self.fails("train", *TINY, "--set", "lexicon_epsilon=0", "--set", "lexicon_bias=true", "--out", self.path("x"),
                   message="lexicon_epsilon must be positive")
        self.fails("train", *TINY, "--set", "lexicon_epsilon=0.01", "--out", self.path("y"),
                   message="'lexicon_epsilon' needs lexicon_bias = true")
        # A resumed run reads its table from the checkpoint: the same weights as one run, bit for bit.
        Train.assert_resume_matches(self, [*TINY, "--set", "lexicon_bias=true"], "lexicon")

    def test_warmup_is_recorded_and_resumed(self):
        args = [*TINY, "--set", "coverage=true", "--warmup", "6", "--lr", "0.01"]
        Train.assert_resume_matches(self, args, "warmup")  # bit for bit: the schedule resumes at its step
        self.assertEqual(self.config(self.path("warmup_whole"))["train"]["warmup"], 6)
        self.assertNotIn("warmup", self.config(self.run_dir)["train"])
        # The learning rate rises to --lr at step 6, then falls as 1/sqrt(step).
        run = self.path("warmup_plot")
        self.ok("train", *TINY, "--warmup", "30", "--lr", "0.01", "--steps", "80", "--out", run)
        points = [p for p in self.check_svg(os.path.join(run, "lr.svg")).iter(SVG + "polyline")][0].get("points")
        ys = [float(p.split(",")[1]) for p in points.split()]  # SVG's y grows downwards
        self.assertEqual(len(ys), 8)                           # one point per report, every 10 steps
        self.assertEqual(ys.index(min(ys)), 2)                 # the peak at step 30
        self.assertTrue(all(a > b for a, b in zip(ys[:3], ys[1:3])))
        self.assertTrue(all(a < b for a, b in zip(ys[2:], ys[3:])))
        self.fails("train", "--resume", run, "--warmup", "5", "--steps", "90", message="--warmup cannot change a run")
        self.fails("train", *TINY, "--warmup", "-3", "--out", self.path("x"), message="--warmup")
        self.fails("train", "--model", "grid", "--task", "grid", "--warmup", "5", "--out", self.path("x"),
                   message="--warmup does not apply to --model grid")

    def heatmap_cells(self, *args):
        svg = self.path("layer.svg")
        self.assertIn("wrote", self.ok("heatmap", "--checkpoint", self.transformer, *args, "--overwrite", "--out", svg))
        root = self.check_svg(svg)
        return root, [r for r in root.iter(SVG + "rect") if r.find(SVG + "title") is not None]

    def test_heatmap_by_layer_and_head(self):
        root, cells = self.heatmap_cells("--layer", "1", "--head", "0", "1 2 3")
        self.assertEqual(len(cells) % 3, 0)  # output steps x 3 source tokens
        self.assertIn("cross attention, layer 1, head 0", "".join(root.itertext()))
        root, cells = self.heatmap_cells("--attention", "encoder-self", "--layer", "0", "--head", "1", "1 2 3 4")
        self.assertEqual(len(cells), 16)  # source x source
        root, grid = self.heatmap_cells("--attention", "decoder-self", "--layer", "0", "1 2 3")
        self.assertEqual(len(root.findall(SVG + "svg")), 2)  # no --head: every head of the layer, as a grid
        steps = len(grid) // 2
        self.assertEqual(int(round(steps ** 0.5)) ** 2, steps)  # each head: outputs x decoder inputs, square
        root, grid = self.heatmap_cells("--attention", "encoder-self", "1 2 3")  # the last layer by default
        self.assertEqual(len(grid), 2 * 9)
        self.assertIn("head 1", "".join(root.itertext()))

    def test_heatmap_bad_layer_and_head(self):
        base = ("heatmap", "--checkpoint", self.transformer, "--out", self.path("x.svg"), "1 2 3")
        self.fails(*base, "--layer", "2", message=("--layer 2 is out of range", "2 decoder layers", "--layer 0..1"))
        self.fails(*base, "--attention", "encoder-self", "--layer", "7",
                   message=("--layer 7", "2 encoder layers", "--layer 0..1"))
        self.fails(*base, "--head", "2", message=("--head 2 is out of range", "2 heads", "--head 0..1"))
        self.fails(*base, "--layer", "-1", message="--layer")
        self.fails(*base, "--attention", "sideways", message="--attention")
        self.fails("heatmap", "--checkpoint", self.run_dir, "--out", self.path("x.svg"), "--layer", "0", "1 2",
                   message=("Transformer", "bahdanau"))
        self.assertFalse(os.path.exists(self.path("x.svg")))

    def test_terminal_heatmap_shows_whole_words(self):
        corpus = self.path("words.tsv")
        with open(corpus, "w") as f:
            f.write("permission denied\tautorisation refusée\nno such directory\taucun dossier\n" * 4)
        run = self.path("words")
        self.ok("train", "--task", corpus, "--steps", "2", "--batch-size", "4", "--set", "embed_dim=4",
                "--set", "encoder_dim=4", "--set", "decoder_dim=4", "--set", "attention_dim=4", "--out", run)
        out = self.ok("translate", "--checkpoint", run, "--show-attention", "permission denied")
        header = [line for line in out.split("\n") if "\u2502" in line][0]
        self.assertIn("permission denied", header)  # not "permi denie"


class Inspect(CliTest):
    def test_eval(self):
        out = self.ok("eval", "--checkpoint", self.run_dir)
        self.assertIn("500 test sentences: exact match", out)
        self.assertIn("source length", out)

    def test_translate(self):
        out = self.ok("translate", "--checkpoint", self.run_dir, "1 2 3 4 5", "5 4 3")
        self.assertIn("1 2 3 4 5  ->  ", out)
        self.assertIn("5 4 3  ->  ", out)

    def test_translate_beam_and_attention(self):
        out = self.ok("translate", "--checkpoint", self.run_dir, "--beam", "3", "--show-attention", "1 2 3 4 5")
        self.assertIn("1 2 3 4 5  ->  ", out)
        self.assertIn("\u2502", out)  # the terminal heatmap's frame
        self.assertIn("<eos>", out)   # its last row
        out = self.ok("translate", "--checkpoint", self.run_dir, "--beam", "3", "--length-penalty", "0.6",
                      "--coverage-penalty", "0.2", "1 2 3 4 5")
        self.assertIn("1 2 3 4 5  ->  ", out)
        self.fails("translate", "--checkpoint", self.run_dir, "--coverage-penalty", "0.2", "1 2",
                   message="add --beam 2 or more")
        self.fails("translate", "--checkpoint", self.run_dir, "--beam", "2", "--coverage-penalty", "-1", "1 2",
                   message="--coverage-penalty")

    def test_heatmap(self):
        svg = self.path("heatmap.svg")
        self.assertIn("wrote", self.ok("heatmap", "--checkpoint", self.run_dir, "1 2 3 4 5", "--out", svg))
        root = self.check_svg(svg)
        cells = [r for r in root.iter(SVG + "rect") if r.find(SVG + "title") is not None]
        self.assertEqual(len(cells) % 5, 0)  # rows x 5 source tokens
        self.assertGreaterEqual(len(cells), 5)

    def test_graph(self):
        self.assertTrue(self.ok("graph").startswith("digraph"))
        self.ok("graph", "--out", self.path("graph.dot"))
        with open(self.path("graph.dot")) as f:
            self.assertIn("digraph", f.read())
        if shutil.which("dot"):  # SVG through Graphviz, when installed
            self.ok("graph", "--out", self.path("graph.svg"))
            self.check_svg(self.path("graph.svg"))


class EvalBeam(CliTest):
    """attn eval --beam: the held-out outputs of beam search, scored as NLTK scores them."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.beam_run = cls.path("beam_run")  # trained far enough that beam and greedy outputs differ
        status, out, err = attn("train", *TINY, "--set", "decoder_dim=16", "--steps", "120", "--eval-every", "0",
                                "--out", cls.beam_run)
        assert status == 0, err
        cls.train_out = out

    def test_training_time_is_printed(self):
        self.assertRegex(self.train_out, r"training time: 120 steps in [0-9.]+ s \([0-9.]+ steps/s; evaluations "
                                         r"and checkpoints not counted\)")

    def test_beam_predictions_are_scored_like_nltk(self):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from nltk_bleu import nltk_bleu
        greedy = self.ok("eval", "--checkpoint", self.beam_run, "--predictions", self.path("greedy.tsv"))
        self.assertEqual(self.ok("eval", "--checkpoint", self.beam_run, "--beam", "1"),
                         self.ok("eval", "--checkpoint", self.beam_run))
        self.assertIn(greedy.split("\n")[0] + "\n", self.ok("eval", "--checkpoint", self.beam_run))
        beam = self.ok("eval", "--checkpoint", self.beam_run, "--beam", "4", "--length-penalty", "0.6",
                       "--predictions", self.path("beam.tsv"))
        self.assertIn("test sentences, beam search 4 (length penalty 0.6): exact match", beam)
        with open(self.path("greedy.tsv"), encoding="utf-8") as f:
            greedy_rows = f.read().splitlines()
        with open(self.path("beam.tsv"), encoding="utf-8") as f:
            beam_rows = f.read().splitlines()
        self.assertEqual(len(beam_rows), len(greedy_rows))
        self.assertTrue(beam_rows != greedy_rows, "the outputs written are greedy's, not beam search's")
        for out, path in ((greedy, "greedy.tsv"), (beam, "beam.tsv")):
            printed = float(out.split("BLEU ")[1].split(",")[0])
            self.assertAlmostEqual(printed, nltk_bleu(self.path(path)), delta=0.005)
        # Each written output is what `translate` gives its source with the same beam.
        source, _, output = beam_rows[0].split("\t")
        said = self.ok("translate", "--checkpoint", self.beam_run, "--beam", "4", "--length-penalty", "0.6", source)
        self.assertEqual(said.strip(), source + "  ->  " + output)

    def test_bad_uses(self):
        self.fails("eval", "--checkpoint", self.beam_run, "--length-penalty", "0.6",
                   message="--length-penalty ranks beam search's outputs: add --beam 2 or more")
        self.fails("eval", "--checkpoint", self.beam_run, "--beam", "0", message="--beam")


class Grid(CliTest):
    """Chapter 4's grid captioner: not a Seq2Seq, its own paths in the command line."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.grid = cls.path("grid")
        status, out, err = attn("train", "--model", "grid", "--task", "grid", "--steps", "20", "--n-train", "100",
                                "--batch-size", "8", "--set", "embed_dim=8", "--set", "decoder_dim=8",
                                "--set", "attention_dim=8", "--out", cls.grid)
        assert status == 0, err
        assert "training grid" in out, out

    def test_files_and_eval(self):
        self.assertEqual(sorted(os.listdir(common.unit(self.grid))),  # with its trainer state: it resumes
                         ["config.json", "manifest.json", "model.npz", "model.trainer.npz", "vocab.json"])
        out = self.ok("eval", "--checkpoint", self.grid)
        self.assertIn("200 test grids: exact match", out)
        self.assertIn("attention peak on the cell", out)

    def test_translate_a_scene(self):
        out = self.ok("translate", "--checkpoint", self.grid, "--show-attention", "red square top left, blue circle center")
        self.assertIn("red square top left, blue circle center  ->  ", out)
        self.assertIn("\u2502", out)  # the grids' frames (20 steps: the words themselves are still wrong)

    def test_heatmap_has_one_grid_per_word(self):
        svg = self.path("grid.svg")
        self.ok("heatmap", "--checkpoint", self.grid, "green triangle bottom right", "--out", svg)
        root = self.check_svg(svg)
        cells = [r for r in root.iter(SVG + "rect") if r.find(SVG + "title") is not None]
        self.assertGreater(len(cells), 0)
        self.assertEqual(len(cells) % 9, 0)

    def test_bad_uses(self):
        self.fails("translate", "--checkpoint", self.grid, "pink square top left", message="'pink' is not a colour")
        self.fails("translate", "--checkpoint", self.grid, "red square nowhere", message="'nowhere' is not a place")
        self.fails("translate", "--checkpoint", self.grid, "--beam", "3", "red square center", message="greedily")
        self.fails("train", "--resume", self.grid, "--epochs", "40", message="--epochs does not apply to this grid run")
        self.fails("train", "--model", "grid", "--task", "reverse", "--out", self.path("x"), message="--task grid only")
        self.fails("train", "--task", "grid", "--out", self.path("x"), message="goes with --model grid")
        self.fails("train", "--model", "grid", "--task", "grid", "--set", "attention=blurry", "--out", self.path("x"),
                   message="key 'attention' must be one of")


class BadInput(CliTest):
    def test_command_line(self):
        self.fails("frobnicate", message="unknown command 'frobnicate'")
        self.fails("train", "--bogus", message="--bogus")
        self.fails("train", "--steps", "abc", "--out", self.path("x"), message="--steps")
        self.fails("train", "--steps", "-1", "--out", self.path("x"), message="--steps: expected a whole number")
        self.fails("demo", "--steps", "-1", "--out", self.path("x"), message="--steps: expected a whole number")
        self.fails("train", "--dtype", "float16", "--out", self.path("x"), message="float16")
        self.fails("translate", "--checkpoint", self.run_dir, "--beam", "0", "1 2", message="--beam")
        self.fails("eval", message="--checkpoint is required")
        self.fails("train", "--steps", "5", message="--out DIR is required")

    def test_messages_list_every_model_and_task(self):
        """Every message and help text that lists the models or the tasks lists all of them (one registry,
        models/registry.hpp, makes them). (Before: 'unknown model' named 9 of the 15 models, 'unknown task'
        left out speech and FILE.jsonl.)"""
        line = self.fails("train", "--model", "gpt", "--out", self.path("x"), message="unknown model 'gpt'")
        self.assertEqual(re.search(r"\(models: ([^)]*)\)", line).group(1).split(", "), ALL_MODELS)
        line = self.fails("train", "--task", "foo", "--out", self.path("x"), message="unknown task 'foo'")
        self.assertEqual(re.search(r"\(tasks: ([^;)]*)", line).group(1).split(", "), ALL_TASKS)
        help = self.ok("train", "--help")
        model_help = re.search(r"^\s*--model TEXT=bahdanau\s+(.*)$", help, re.M).group(1)
        task_help = re.search(r"^\s*--task TEXT=reverse\s+(.*)$", help, re.M).group(1)
        for name in ALL_MODELS:
            self.assertRegex(model_help, r"(^|[ ,(])%s([ ,)]|$)" % re.escape(name))
        for name in ALL_TASKS:
            self.assertRegex(task_help, r"(^|[ ,(])%s([ ,;)]|$)" % re.escape(name))
        # A run whose config.json names a model attn does not know: eval's message lists them all too.
        run = self.path("unknown_model")
        shutil.copytree(self.run_dir, run)
        config = json.loads(read_part(run, "config.json"))
        config["model"]["model"] = "gpt"
        write_part(run, "config.json", json.dumps(config))
        line = self.fails("eval", "--checkpoint", run, message="unknown model 'gpt'")
        self.assertEqual(re.search(r"\(models: ([^)]*)\)", line).group(1).split(", "), ALL_MODELS)

    def test_bad_settings(self):
        self.fails("train", "--model", "nope", "--out", self.path("x"), message="unknown model 'nope'")
        self.fails("train", "--task", "nope", "--out", self.path("x"), message="unknown task 'nope'")
        self.fails("train", "--set", "hiden_dim=3", "--out", self.path("x"), message="unknown field 'hiden_dim'")
        self.fails("train", "--set", "embed_dim=abc", "--out", self.path("x"), message="'embed_dim'")
        self.fails("train", "--set", "embed_dim=-4", "--out", self.path("x"), message="whole number >= 0")
        self.fails("train", "--set", "novalue", "--out", self.path("x"), message="KEY=VALUE")
        self.fails("train", "--min-length", "9", "--max-length", "4", "--out", self.path("x"), message="min_length")
        self.fails("train", "--resume", self.run_dir, "--model", "luong", message="cannot change a run")

    def test_missing_checkpoint(self):
        self.fails("eval", "--checkpoint", self.path("nowhere"), message="no such checkpoint directory")
        self.fails("translate", "--checkpoint", self.path("nowhere"), "1 2", message="no such checkpoint directory")
        self.fails("train", "--resume", self.path("nowhere"), message="no such run folder")
        broken = self.copy_run("no_weights")
        os.remove(broken + "/checkpoint/model.npz")
        self.fails("eval", "--checkpoint", broken, message="model.npz: missing")

    def test_corrupted_checkpoint(self):
        truncated = self.copy_run("truncated")
        with open(truncated + "/checkpoint/model.npz", "r+b") as f:
            f.truncate(1000)
        self.fails("eval", "--checkpoint", truncated, message="model.npz: does not match manifest.json")
        write_part(truncated, "model.npz", read_part(truncated, "model.npz"))  # recorded: now the archive's own check
        self.fails("eval", "--checkpoint", truncated, message="model.npz")
        bad_json = self.copy_run("bad_json")
        write_part(bad_json, "config.json", '{"format": "attn-checkpoint", "model": ')
        self.fails("eval", "--checkpoint", bad_json, message="config.json: not valid JSON")
        not_config = self.copy_run("not_config")
        write_part(not_config, "config.json", "[1, 2]")
        self.fails("eval", "--checkpoint", not_config, message="config.json: expected a JSON object")
        bad_vocab = self.copy_run("bad_vocab")
        write_part(bad_vocab, "vocab.json", '{"src": 3, "tgt": 4}')
        self.fails("translate", "--checkpoint", bad_vocab, "1 2", message="vocab.json")
        bad_task = self.copy_run("bad_task")
        write_part(bad_task, "config.json", read_part(bad_task, "config.json").replace(b'"reverse"', b'"bogus"'))
        self.fails("eval", "--checkpoint", bad_task, message="config.json")
        no_trainer = self.copy_run("no_trainer")
        write_part(no_trainer, "model.trainer.npz", read_part(no_trainer, "model.trainer.npz")[:500])
        self.fails("train", "--resume", no_trainer, "--steps", "30", message="model.trainer.npz")

    def test_checkpoint_of_another_model(self):
        luong = self.path("luong")
        self.ok("train", "--model", "luong", "--set", "embed_dim=8", "--set", "hidden_dim=8", "--task", "reverse",
                "--max-length", "6", "--n-train", "100", "--steps", "2", "--batch-size", "4", "--out", luong)
        mixed = self.copy_run("mixed")  # bahdanau's weights, luong's description
        write_part(mixed, "config.json", read_part(luong, "config.json"))
        self.fails("eval", "--checkpoint", mixed, message="not those of the 'luong' model")
        bigger = self.copy_run("bigger")  # the same model, other sizes
        write_part(bigger, "config.json", read_part(bigger, "config.json").replace(b'"decoder_dim": 8', b'"decoder_dim": 9'))
        self.fails("translate", "--checkpoint", bigger, "1 2", message="shape mismatches")

    def test_no_attention_to_draw(self):
        plain = self.path("plain")
        self.ok("train", "--model", "seq2seq", "--set", "embed_dim=4", "--set", "hidden_dim=4", "--max-length", "6",
                "--n-train", "50", "--steps", "2", "--batch-size", "4", "--out", plain)
        self.fails("heatmap", "--checkpoint", plain, "1 2", "--out", self.path("plain.svg"), message="no attention")

    def test_unknown_tokens(self):
        # Read as <unk> with a note, as eval does: one unknown word does not fail the call.
        for args in (("translate", "1 2 x 4", "5 4"), ("heatmap", "1 2 x 4", "--out", self.path("x.svg"))):
            status, out, err = attn(args[0], "--checkpoint", self.run_dir, *args[1:])
            self.assertEqual(status, 0, err)
            self.assertEqual(err.strip(), "note: 'x' is not in the model's source vocabulary: read as <unk>")
        self.assertTrue(os.path.isfile(self.path("x.svg")))
        self.fails("translate", "--checkpoint", self.run_dir, "", message="empty")
        self.fails("heatmap", "--checkpoint", self.run_dir, "1 2", "--out", self.path("no", "dir", "x.svg"),
                   message="cannot write")

    def test_malformed_corpus(self):
        corpus = self.path("malformed.tsv")
        with open(corpus, "w") as f:
            f.write("go .\tva !\nhi .\tsalut !\nthis line has no tab\nrun !\tcours !\n")
        self.fails("train", "--task", corpus, "--steps", "2", "--out", self.path("x"), message=":3: no tab")
        out = self.ok("train", "--task", corpus, "--skip-malformed", "--steps", "2", "--batch-size", "2",
                      "--out", self.path("skipped"))
        self.assertIn("1 malformed lines skipped (the first: line 3)", out)
        self.fails("train", "--task", self.path("absent.tsv"), "--out", self.path("x"), message="cannot open")



def write_mo(path, entries):
    """A .mo file (GNU gettext's binary catalog) of (msgid, msgstr) pairs, little-endian."""
    import struct
    entries = [("", "Content-Type: text/plain; charset=UTF-8\n")] + entries
    n = len(entries)
    originals, translations = 28, 28 + 8 * n
    offset, tables, strings = translations + 8 * n, [b"", b""], b""
    for side in (0, 1):
        for entry in entries:
            data = entry[side].encode("utf-8")
            tables[side] += struct.pack("<II", len(data), offset)
            offset += len(data) + 1
            strings += data + b"\0"
    with open(path, "wb") as f:
        f.write(struct.pack("<7I", 0x950412de, 0, n, originals, translations, 0, 0) + tables[0] + tables[1] + strings)


class Corpus(CliTest):
    """attn corpus gettext, and training on real text with the corpus options."""

    def make_locale(self, name):
        folder = self.path(name, "fr", "LC_MESSAGES")
        os.makedirs(folder)
        write_mo(os.path.join(folder, "b.mo"), [("Cannot open the file.", "Impossible d'ouvrir le fichier."),
                                                ("Save the file as", "Enregistrer le fichier sous"),
                                                ("cannot open %s", "impossible d'ouvrir %s")])
        write_mo(os.path.join(folder, "a.mo"), [("_Open the file...", "_Ouvrir le fichier…"),
                                                ("Quit", "Quitter"),
                                                ("Close the window", "Fermer la fenêtre")])
        return self.path(name)

    def test_gettext(self):
        locale = self.make_locale("locale")
        out = self.ok("corpus", "gettext", "--locale-dir", locale, "--out", self.path("en-fr.tsv"))
        self.assertIn("read 2 catalogs, 6 messages", out)
        self.assertIn("kept 4 pairs; dropped: 1 format, 1 too short,", out)
        self.assertIn("wrote " + self.path("en-fr.tsv"), out)
        with open(self.path("en-fr.tsv"), encoding="utf-8") as f:
            first = f.read()
        self.assertEqual(sorted(first.splitlines()),
                         ["Cannot open the file.\tImpossible d'ouvrir le fichier.",
                          "Close the window\tFermer la fen\u00eatre",
                          "Open the file\tOuvrir le fichier",
                          "Save the file as\tEnregistrer le fichier sous"])
        self.ok("corpus", "gettext", "--locale-dir", locale, "--out", self.path("again.tsv"))
        with open(self.path("again.tsv"), encoding="utf-8") as f:
            self.assertEqual(f.read(), first)  # deterministic
        out = self.ok("corpus", "gettext", "--locale-dir", locale, "--min-words", "1", "--out", self.path("one.tsv"))
        self.assertIn("kept 5 pairs", out)
        self.fails("corpus", "gettext", "--locale-dir", self.path("nowhere"), "--out", self.path("x.tsv"),
                   message="no message catalogs (*.mo) in " + self.path("nowhere") + "/fr/LC_MESSAGES")
        self.fails("corpus", "gettext", "--locale-dir", locale, "--lang", "de", "--out", self.path("x.tsv"),
                   message="tools/setup.sh --with-corpus")
        self.fails("corpus", "gettext", "--locale-dir", locale, "--min-words", "5", "--max-words", "2",
                   "--out", self.path("x.tsv"), message="min_words (5) is above max_words (2)")
        self.fails("corpus", "gettext", "--locale-dir", locale, message="--out is required")

    def test_train_translate_eval_on_real_text(self):
        corpus = self.path("real.tsv")
        pairs = ["Cannot open the file.\tImpossible d'ouvrir le fichier.", "Close the window.\tFermer la fen\u00eatre.",
                 "Open the window.\tOuvrir la fen\u00eatre.", "Save the file.\tEnregistrer le fichier.",
                 "Cannot save the file.\tImpossible d'enregistrer le fichier."] * 4 + ["A rare word.\tUn mot rare."]
        with open(corpus, "w", encoding="utf-8") as f:
            f.write("\n".join(pairs) + "\n")
        tiny = ["--set", "embed_dim=4", "--set", "encoder_dim=4", "--set", "decoder_dim=4", "--set", "attention_dim=4",
                "--steps", "3", "--batch-size", "4", "--eval-every", "2"]
        run = self.path("real_run")
        out = self.ok("train", "--task", corpus, *tiny, "--min-freq", "2", "--max-vocab", "6",
                      "--valid-fraction", "0.2", "--out", run)
        self.assertIn("BLEU", out)
        import json
        with open(os.path.join(run, "checkpoint", "config.json")) as f:
            task = json.load(f)["task"]
        self.assertEqual((task["min_freq"], task["max_vocab"], task["test_fraction"]), (2, 6, 0.2))
        self.assertTrue(task["lowercase"] and task["split_punctuation"])
        self.assertEqual(len(task["checksum"]), 16)
        with open(os.path.join(run, "checkpoint", "vocab.json")) as f:
            vocab = json.load(f)
        self.assertEqual(len(vocab["src"]["tokens"]), 4 + 6)
        self.assertIn("file", vocab["src"]["tokens"])
        self.assertIn(".", vocab["src"]["tokens"])
        # Tokenized as the corpus was: "file." is "file" and ".", both known; "open" is
        # not among the 6 most frequent words, so it reads as <unk>.
        status, out, err = attn("translate", "--checkpoint", run, "Cannot open the file.")
        self.assertEqual((status, err), (0, "note: 'open' is not in the model's source vocabulary: read as <unk>\n"))
        self.assertIn("Cannot open the file.  ->  ", out)
        out = self.ok("eval", "--checkpoint", run, "--predictions", self.path("predictions.tsv"))
        self.assertIn("4 test sentences", out)  # 20% of 21
        self.assertIn("BLEU", out)
        with open(self.path("predictions.tsv"), encoding="utf-8") as f:
            rows = [line.split("\t") for line in f.read().splitlines()]
        self.assertEqual(len(rows), 4)
        self.assertTrue(all(len(r) == 3 for r in rows))
        # A changed corpus would give another held-out split: eval refuses it.
        with open(corpus, "a", encoding="utf-8") as f:
            f.write("One more.\tUn de plus.\n")
        self.fails("eval", "--checkpoint", run, message="has changed since the model was trained")
        # A separate test file; the case kept.
        test_file = self.path("real_test.tsv")
        with open(test_file, "w", encoding="utf-8") as f:
            f.write("Open the file.\tOuvrir le fichier.\n")
        out = self.ok("train", "--task", corpus, *tiny, "--test-file", test_file, "--no-lowercase",
                      "--out", self.path("real_test_run"))
        self.assertIn("22 train / 1 test examples", out)
        self.assertIn("1 test sentences", self.ok("eval", "--checkpoint", self.path("real_test_run")))
        self.fails("train", "--task", "reverse", "--min-freq", "2", "--out", self.path("x"),
                   message="--min-freq is for a FILE.tsv task only")
        self.fails("train", "--task", corpus, "--valid-fraction", "0", "--out", self.path("x"),
                   message="--valid-fraction: expected a finite number in (0, 1)")
        self.fails("train", "--resume", run, "--max-vocab", "3", message="--max-vocab cannot change a run")

    def fifo(self, name, data):
        """A named pipe at `name` that gives `data` to the first reader that opens it, then no one: a file that
        can be read once. A second open (a corpus read again) waits for a writer that never comes."""
        path = self.path(name)
        if os.path.lexists(path):
            os.remove(path)
        os.mkfifo(path)

        def write():
            try:
                with open(path, "wb") as f:  # waits for the reader
                    f.write(data)
            except OSError:
                pass
        threading.Thread(target=write, daemon=True).start()
        return path

    def test_a_corpus_is_read_once(self):
        # train and eval read a FILE.tsv (and a --test-file) once: its checksum, its encoding checks and its pairs
        # come from the same bytes. Named pipes, readable once, stand for files that change between two reads.
        pairs = ["the file is open\tle fichier est ouvert", "close the file\tfermez le fichier",
                 "open the window\touvrez la fen\u00eatre", "save the file\tenregistrez le fichier"] * 3
        corpus = ("\n".join(pairs) + "\n").encode("utf-8")
        held_out = "close the window\tfermez la fen\u00eatre\n".encode("utf-8")
        tiny = ["--set", "embed_dim=4", "--set", "encoder_dim=4", "--set", "decoder_dim=4", "--set", "attention_dim=4",
                "--steps", "2", "--batch-size", "4", "--eval-every", "2"]
        run = self.path("piped_run")
        try:
            status, out, err = attn("train", "--task", self.fifo("piped.tsv", corpus), *tiny,
                                    "--test-file", self.fifo("piped_test.tsv", held_out), "--out", run, timeout=60)
        except subprocess.TimeoutExpired:
            self.fail("train opened its corpus twice: the second read of a named pipe never ends")
        self.assertEqual(status, 0, err)
        self.assertIn("12 train / 1 test examples", out)
        with open(os.path.join(run, "checkpoint", "config.json")) as f:
            task = json.load(f)["task"]
        self.assertEqual((task["checksum"], task["test_checksum"]), (common.fnv1a64(corpus), common.fnv1a64(held_out)))
        self.fifo("piped.tsv", corpus)
        self.fifo("piped_test.tsv", held_out)
        try:
            status, piped, err = attn("eval", "--checkpoint", run, timeout=60)
        except subprocess.TimeoutExpired:
            self.fail("eval opened the run's corpus twice: the second read of a named pipe never ends")
        self.assertEqual(status, 0, err)
        self.assertIn("1 test sentences", piped)
        for name, data in (("piped.tsv", corpus), ("piped_test.tsv", held_out)):  # the same bytes in plain files
            os.remove(self.path(name))
            with open(self.path(name), "wb") as f:
                f.write(data)
        self.assertEqual(self.ok("eval", "--checkpoint", run), piped)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_cli.py PATH/TO/attn [unittest arguments]")
    common.ATTN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
