#!/usr/bin/python3
"""Chapter 16's Listen, Attend and Spell on the command line (cli/speech.hpp): attn train
--model las --task speech, eval, translate (--voice) and heatmap, on digits spoken by espeak-ng.

    /usr/bin/python3 tests/cli/test_speech.py build/cli/attn [-v] [TestName...]

Standard library only; skipped (exit status 77) without espeak-ng. Every run of the task speaks
its 200 validation and 200 test utterances (10-30 s of espeak-ng), so one tiny model is trained
once (64 utterances, one epoch) and every read-only check reuses it; a second run with the same
flags checks that the same seed gives the same weights. Every value is checked against what the
run itself wrote or printed: the split sizes, the config, the parameter count against the arrays
of model.npz, the CER and WER train prints against eval's on the same checkpoint and against the
ones recomputed here from eval --predictions, the voices of the test split against the held-out
variants of data/speech.cpp. Every failure must be ONE line on standard error starting
"attn: error:".
"""
import ast
import json
import math
import os
import re
import shutil
import struct
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET
import zipfile

import common
from common import TINY, attn, read_part, write_part

SVG = "{http://www.w3.org/2000/svg}"
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIGITS = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}

# The tiny model: what each --set gives is checked in config.json and in the arrays' shapes.
SETS = {"listener_dim": 8, "speller_dim": 16, "attention_dim": 8, "embed_dim": 8, "pyramid_layers": 1}
N_TRAIN, BATCH, SEED = 64, 16, 5
LAS = ["--model", "las", "--task", "speech", "--n-train", str(N_TRAIN), "--epochs", "1",
       "--batch-size", str(BATCH), "--lr", "0.002", "--clip", "0.5", "--seed", str(SEED), "--dtype", "float32",
       *[a for key, value in SETS.items() for a in ("--set", "%s=%d" % (key, value))]]

TRAIN_COUNTS = re.compile(r"^training las \((\d+) parameters, (float32|float64)\) on speech: (\d+) train / (\d+) valid / "
                          r"(\d+) test utterances \(the test spoken by (\d+) voices never heard in training\), "
                          r"spoken in [0-9.]+ s, seed (\d+)$", re.M)
# Each epoch's line ends with the time so far and the time left, e.g. "  [0:04, left 0:00]".
EPOCH = re.compile(r"^  epoch (\d+)/(\d+): loss ([0-9.]+), validation CER ([0-9.]+)% \(greedy\)  "
                   r"\[(\d+:\d\d), left (\d+:\d\d)\]$", re.M)
SPEAKING = re.compile(r"^speaking (\d+) utterances with espeak-ng \(about (\d+:\d\d)\)\.\.\.$(?:.|\n)*?"
                      r"^speaking \1 utterances with espeak-ng: done in (\d+:\d\d)$", re.M)
TRAIN_HELD_OUT = re.compile(r"^held-out voices \((\d+) utterances, greedy\): CER ([0-9.]+)%, WER ([0-9.]+)%  "
                            r"\(checkpoint: (.*); plot: (.*)/loss\.svg\)$", re.M)
EVAL_RATES = re.compile(r"^(\d+) test utterances, spoken by (\d+) voices never heard in training; (greedy|beam search \d+): "
                        r"CER ([0-9.]+)%, WER ([0-9.]+)%$", re.M)
EVAL_WORDS = re.compile(r"^words: (\d+) substitutions, (\d+) deletions, (\d+) insertions of (\d+)$", re.M)
# The transcript is whatever the model wrote, spaces included: the line is never stripped.
TRANSLATED = re.compile(r"^(.*) \(([^ ,()]+), (\d+) frames\)  ->  (.*)$")


def source_list(function):
    """The strings of a `static const std::vector<std::string> variants{...}` in data/speech.cpp's `function`."""
    with open(os.path.join(SOURCE, "data", "speech.cpp"), encoding="utf-8") as f:
        text = f.read()
    body = re.search(r"& %s\(\) \{.*?\{(.*?)\};" % function, text, re.S)
    assert body, "data/speech.cpp: no %s() found" % function
    return re.findall(r'"([^"]*)"', body.group(1))


def edit_distance(a, b):
    """Levenshtein distance, each substitution, insertion and deletion costing 1."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def npz_arrays(path):
    """The raw .npy bytes (header + data) of every array in an .npz file."""
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name) for name in z.namelist()}


def npz_shapes(path):
    """{array name: (shape, dtype descr)} of an .npz file, read from each .npy header."""
    shapes = {}
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            data = z.read(name)
            assert data.startswith(b"\x93NUMPY"), name
            major = data[6]
            size, start = (struct.unpack("<H", data[8:10])[0], 10) if major == 1 else (struct.unpack("<I", data[8:12])[0], 12)
            header = ast.literal_eval(data[start:start + size].decode("latin1"))
            shapes[name[:-len(".npy")]] = (tuple(header["shape"]), header["descr"])
    return shapes


class Shared:
    """The tiny run every test reads: trained and evaluated once, in setUpModule."""
    tmp = run_dir = predictions = train_out = eval_out = None


def setUpModule():
    Shared.tmp = tempfile.mkdtemp(prefix="attn_speech_test_")
    Shared.run_dir = os.path.join(Shared.tmp, "las")
    status, Shared.train_out, err = attn("train", *LAS, "--out", Shared.run_dir, timeout=300)
    assert status == 0 and err == "", err
    Shared.predictions = os.path.join(Shared.tmp, "predictions.tsv")
    status, Shared.eval_out, err = attn("eval", "--checkpoint", Shared.run_dir, "--predictions", Shared.predictions,
                                        timeout=300)
    assert status == 0 and err == "", err


def tearDownModule():
    if Shared.tmp:
        shutil.rmtree(Shared.tmp, ignore_errors=True)


class SpeechTest(unittest.TestCase):
    """Reads the shared run (Shared); breaks only copies of it."""

    @classmethod
    def setUpClass(cls):
        cls.tmp, cls.run_dir, cls.predictions = Shared.tmp, Shared.run_dir, Shared.predictions
        cls.train_out, cls.eval_out = Shared.train_out, Shared.eval_out

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def ok(self, *args):
        """attn succeeds without a word on stderr; returns its stdout."""
        status, out, err = attn(*args, timeout=300)
        self.assertEqual(status, 0, f"attn {' '.join(args)} failed: {err}")
        self.assertEqual(err, "", f"attn {' '.join(args)}")
        return out

    def fails(self, *args, message):
        """attn fails with exactly one line of error containing `message`."""
        status, out, err = attn(*args, timeout=300)
        return common.check_failure(self, status, out, err, message, args)

    def config(self, run):
        return json.loads(read_part(run, "config.json"))

    def match(self, pattern, text):
        m = pattern.search(text)
        self.assertIsNotNone(m, f"{pattern.pattern!r} not in:\n{text}")
        return m


class Train(SpeechTest):
    def test_counts_and_config(self):
        m = self.match(TRAIN_COUNTS, self.train_out)
        self.assertEqual([int(m.group(i)) for i in (3, 4, 5, 6, 7)], [N_TRAIN, 200, 200, 6, SEED])
        self.assertEqual(m.group(2), "float32")
        config = self.config(self.run_dir)
        self.assertEqual(config["format"], "attn-checkpoint")
        self.assertEqual(config["model"]["model"], "las")
        for key, value in SETS.items():
            self.assertEqual(config["model"][key], value, key)
        self.assertEqual(config["model"]["speller_layers"], 1)  # the defaults are written too
        self.assertEqual(config["model"]["sampling_probability"], 0.1)
        self.assertEqual(config["task"], {"name": "speech", "n_train": N_TRAIN, "n_valid": 200, "n_test": 200,
                                          "min_words": 1, "max_words": 5})
        self.assertEqual(config["train"], {"epochs": 1, "batch_size": BATCH, "lr": 0.002, "clip_norm": 0.5})
        self.assertEqual((config["seed"], config["dtype"]), (SEED, "float32"))

    def test_files(self):
        self.assertEqual(sorted(os.listdir(self.run_dir)), ["checkpoint", "lock", "loss.svg"])
        self.assertEqual(sorted(os.listdir(common.unit(self.run_dir))),  # with the trainer state: --resume
                         ["config.json", "manifest.json", "model.npz", "model.trainer.npz", "vocab.json"])
        manifest = json.loads(read_part(self.run_dir, "manifest.json"))
        self.assertEqual(sorted(manifest["files"]), ["config.json", "model.npz", "model.trainer.npz", "vocab.json"])
        for name, entry in manifest["files"].items():
            data = read_part(self.run_dir, name)
            self.assertEqual(entry, {"bytes": len(data), "fnv1a64": common.fnv1a64(data)}, name)
        vocab = json.loads(read_part(self.run_dir, "vocab.json"))
        self.assertEqual(vocab["src"]["tokens"], ["<pad>", "<bos>", "<eos>", "<unk>"])  # speech has no source words
        # The characters of the ten digit words and the space between them.
        self.assertEqual(vocab["tgt"]["tokens"], ["<pad>", "<bos>", "<eos>", "<unk>"] + sorted(set(" ".join(DIGITS))))
        root = ET.parse(os.path.join(self.run_dir, "loss.svg")).getroot()
        self.assertEqual(root.tag, SVG + "svg")
        text = "".join(root.itertext())
        for part in ("training loss and validation CER per epoch", "training loss (nats per character)",
                     "validation CER (greedy)"):
            self.assertIn(part, text)

    def test_weights_follow_the_settings(self):
        shapes = npz_shapes(os.path.join(common.unit(self.run_dir), "model.npz"))
        self.assertEqual({d for _, d in shapes.values()}, {"<f4"})  # --dtype float32
        # The printed parameter count is the arrays' sizes summed.
        printed = int(self.match(TRAIN_COUNTS, self.train_out).group(1))
        self.assertEqual(printed, sum(math.prod(s) for s, _ in shapes.values()))
        L, S, A, E = SETS["listener_dim"], SETS["speller_dim"], SETS["attention_dim"], SETS["embed_dim"]
        self.assertEqual(shapes["listener.weight_hh_l0"][0], (4 * L, L))
        self.assertEqual(shapes["listener.weight_ih_l0"][0], (4 * L, 40))  # 40 mel bands
        self.assertEqual(shapes["pyramid.0.lstm.weight_ih_l0"][0], (4 * L, 2 * 2 * L))  # two steps of both directions
        self.assertFalse(any(k.startswith("pyramid.1.") for k in shapes), "pyramid_layers=1 made a second layer")
        self.assertEqual(shapes["embed.weight"][0], (20, E))
        self.assertEqual(shapes["speller.0.weight_hh"][0], (4 * S, S))
        self.assertEqual(shapes["speller.0.weight_ih"][0], (4 * S, E + 2 * L))  # the character and the context
        self.assertEqual(shapes["phi.layers.1.weight"][0], (A, A))
        self.assertEqual(shapes["distribution.layers.1.weight"][0], (20, S))

    def test_progress(self):
        steps = (N_TRAIN + BATCH - 1) // BATCH
        self.assertIn("step %d/%d" % (steps, steps), self.train_out)
        epoch = self.match(EPOCH, self.train_out)
        self.assertEqual((epoch.group(1), epoch.group(2)), ("1", "1"))
        # One epoch of a tiny model barely moves it: about ln 20 nats per character, 20 characters.
        self.assertLess(abs(float(epoch.group(3)) - math.log(20)), 0.5, epoch.group(0))
        self.assertEqual(len(EPOCH.findall(self.train_out)), 1)
        held = self.match(TRAIN_HELD_OUT, self.train_out)
        self.assertEqual((held.group(1), held.group(4), held.group(5)), ("200", self.run_dir, self.run_dir))
        self.assertEqual(epoch.group(6), "0:00")  # the last epoch: nothing left

    def test_speaking_says_how_long_it_takes(self):
        """Speaking the data takes seconds to minutes: a line says so first, with an estimate from a few
        utterances timed, and another when it is done (train: every split; eval: the test split)."""
        for out, n in ((self.train_out, N_TRAIN + 400), (self.eval_out, 202)):
            m = self.match(SPEAKING, out)
            self.assertEqual(int(m.group(1)), n)
            minutes, seconds = (int(x) for x in m.group(3).split(":"))
            estimate = [int(x) for x in m.group(2).split(":")]
            # Within a factor of 4 of the time taken (or both a few seconds): an estimate, not a number to trust.
            took, guess = 60 * minutes + seconds, 60 * estimate[0] + estimate[1]
            self.assertLessEqual(guess, max(4 * took, 4), m.group(0))
            self.assertLessEqual(took, max(4 * guess, 4), m.group(0))

    def test_ctrl_c_commits_the_step_reached(self):
        """Ctrl-C (SIGINT) at a random moment of las training: the step under way finishes and a checkpoint the
        run resumes from is committed at it; attn says the step, the epoch and the command that resumes the run
        (test_resume.py resumes such runs). (Before: a checkpoint that could not resume.)"""
        import random
        rng = random.Random(int(os.environ.get("ATTN_SIGINT_SEED", "1")))
        epochs, per_epoch = 50, -(-N_TRAIN // BATCH)
        run = self.path("sigint")
        args = list(LAS)
        args[args.index("--epochs") + 1] = str(epochs)
        status, out, err = common.interrupted(["train", *args, "--out", run], rng.uniform(0, 4))
        self.assertEqual(status, 130, err)
        m = re.search(r"^attn: stopped by Ctrl-C at step (\d+) of %d \(epoch (\d+) of %d(, after batch (\d+) of %d|, at "
                      r"its end)\); the checkpoint in (.+) holds step \1\. Resume it with:$"
                      % (epochs * per_epoch, epochs, per_epoch), err, re.M)
        self.assertIsNotNone(m, err)
        step, epoch = int(m.group(1)), int(m.group(2))
        done = len(EPOCH.findall(out))  # the epochs that ended, each with its validation
        if m.group(4):
            self.assertEqual((step, done), ((epoch - 1) * per_epoch + int(m.group(4)), epoch - 1))
        else:
            self.assertEqual((step, done), (epoch * per_epoch, epoch))
        self.assertEqual(m.group(5), run)
        self.assertEqual(err.strip().split("\n")[-1].strip(), f"{common.ATTN} train --resume {run}")
        config = self.config(run)
        self.assertNotIn("stopped_at_step", config["train"])  # the trainer state says where it is
        self.assertEqual(config["train"]["epochs"], epochs)
        self.match(EVAL_RATES, self.ok("eval", "--checkpoint", run))


class Eval(SpeechTest):
    def read_predictions(self):
        with open(self.predictions, encoding="utf-8") as f:
            text = f.read()
        self.assertTrue(text.endswith("\n"))
        return [line.split("\t") for line in text[:-1].split("\n")]

    def test_train_and_eval_agree(self):
        held = self.match(TRAIN_HELD_OUT, self.train_out)
        rates = self.match(EVAL_RATES, self.eval_out)
        self.assertEqual(rates.group(1, 2, 3), ("200", "6", "greedy"))
        self.assertEqual((held.group(2), held.group(3)), (rates.group(4), rates.group(5)))
        self.assertIn("wrote " + self.predictions, self.eval_out)

    def test_predictions_give_the_printed_rates(self):
        rows = self.read_predictions()
        self.assertEqual(len(rows), 200)
        self.assertTrue(all(len(r) == 3 for r in rows), [r for r in rows if len(r) != 3][:3])
        for reference, _, _ in rows:
            words = reference.split(" ")
            self.assertTrue(1 <= len(words) <= 5 and set(words) <= DIGITS, reference)
        char_errors = sum(edit_distance(hyp, ref) for ref, _, hyp in rows)
        chars = sum(len(ref) for ref, _, _ in rows)
        word_errors = sum(edit_distance(hyp.split(), ref.split()) for ref, _, hyp in rows)
        words = sum(len(ref.split()) for ref, _, _ in rows)
        rates = self.match(EVAL_RATES, self.eval_out)
        self.assertEqual(rates.group(4), "%.1f" % (100 * (char_errors / chars)))
        self.assertEqual(rates.group(5), "%.1f" % (100 * (word_errors / words)))
        s, d, i, n = (int(x) for x in self.match(EVAL_WORDS, self.eval_out).groups())
        self.assertEqual(n, words)
        self.assertEqual(s + d + i, word_errors)

    def test_test_voices_are_held_out(self):
        held_out, training = source_list("held_out_variants"), source_list("training_variants")
        self.assertEqual(len(held_out), 6)
        self.assertGreater(len(training), 6)
        self.assertFalse(set(held_out) & set(training), "a held-out variant also trains")
        languages = source_list("speech_languages")
        variants = set()
        for _, voice, _ in self.read_predictions():
            language, plus, variant = voice.partition("+")
            self.assertEqual(plus, "+", voice)
            self.assertIn(language, languages, voice)
            self.assertIn(variant, held_out, voice)
            self.assertNotIn(variant, training, voice)
            variants.add(variant)
        self.assertEqual(variants, set(held_out))  # 200 utterances: each of the six speaks

    def test_same_seed_same_run(self):
        again = self.path("again")
        out = self.ok("train", *LAS, "--out", again)
        # The arrays bit for bit (the archives' bytes differ: each entry carries the time it was written).
        a, b = (npz_arrays(os.path.join(common.unit(run), "model.npz")) for run in (again, self.run_dir))
        self.assertEqual(sorted(a), sorted(b))
        for key in a:
            self.assertEqual(a[key], b[key], f"{key} differs between two runs of the same seed")
        self.assertEqual(read_part(again, "config.json"), read_part(self.run_dir, "config.json"))
        self.assertEqual(self.match(EPOCH, out).group(1, 2, 3, 4), self.match(EPOCH, self.train_out).group(1, 2, 3, 4))
        self.assertEqual(self.match(TRAIN_HELD_OUT, out).group(1, 2, 3),
                         self.match(TRAIN_HELD_OUT, self.train_out).group(1, 2, 3))


# A transcript that reached its limit without an end is cut, and said so (the tiny model of these tests never ends one).
UNFINISHED = re.compile(r'^note: the transcript of "(.*)" stopped unfinished at the (\d+) characters it may have '
                        r"\(twice the text's length and 10, at most 200\)$")


class Translate(SpeechTest):
    def ok(self, *args):
        """attn succeeds; on standard error, notes of unfinished transcripts only. Returns its stdout."""
        status, out, err = attn(*args, timeout=300)
        self.assertEqual(status, 0, f"attn {' '.join(args)} failed: {err}")
        for line in err.splitlines():
            self.assertRegex(line, UNFINISHED, f"attn {' '.join(args)}")
        return out

    def translated(self, line, text, voice):
        m = TRANSLATED.match(line)
        self.assertIsNotNone(m, line)
        self.assertEqual(m.group(1, 2), (text, voice))
        self.assertGreater(int(m.group(3)), 0)
        self.assertTrue(set(m.group(4)) <= set(" ".join(DIGITS)), repr(m.group(4)))  # only the speller's characters
        return int(m.group(3)), m.group(4)

    def test_default_voice_is_held_out(self):
        voice = "en-us+" + source_list("held_out_variants")[0]
        lines = self.ok("translate", "--checkpoint", self.run_dir, "nine one one", "four two").split("\n")
        self.assertEqual(len(lines), 3)
        self.assertEqual(lines[2], "")
        first = self.translated(lines[0], "nine one one", voice)
        second = self.translated(lines[1], "four two", voice)
        # The same text, the same voice: the same sound and the same transcript.
        again = self.ok("translate", "--checkpoint", self.run_dir, "four two").split("\n")[0]
        self.assertEqual(self.translated(again, "four two", voice), second)
        self.assertGreater(first[0], second[0])  # three words take longer to say than two
        self.assertIn(voice, self.ok("translate", "--help"))  # the help names the default

    def test_voice(self):
        line = self.ok("translate", "--checkpoint", self.run_dir, "--voice", "en-gb-scotland+f2", "four two")
        self.translated(line.split("\n")[0], "four two", "en-gb-scotland+f2")
        line = self.ok("translate", "--checkpoint", self.run_dir, "--voice", "en-us", "--beam", "2", "four")
        self.translated(line.split("\n")[0], "four", "en-us")

    def test_show_attention(self):
        out = self.ok("translate", "--checkpoint", self.run_dir, "--show-attention", "four two")
        lines = out.split("\n")
        frames, transcript = self.translated(lines[0], "four two", "en-us+" + source_list("held_out_variants")[0])
        rule = [i for i, line in enumerate(lines) if "\u253c" in line]  # the header's "┼"
        self.assertEqual(len(rule), 1, out)
        header = lines[rule[0] - 1].split("\u2502", 1)[1].split()
        states = -(-frames // 2 ** SETS["pyramid_layers"])  # ceil(T / 2^layers) listener states
        self.assertEqual(header, [str(u) for u in range(states)])
        rows = lines[rule[0] + 1:lines.index("", rule[0])]
        # One row per character written (<eos> too, when written within the limit of 2 * 8 + 10).
        self.assertGreaterEqual(len(rows), len(transcript))
        self.assertLessEqual(len(rows), 2 * len("four two") + 10)
        self.assertTrue(all("\u2502" in row for row in rows), rows)

    def test_heatmap(self):
        svg = self.path("four_two.svg")
        self.assertEqual(self.ok("heatmap", "--checkpoint", self.run_dir, "four two", "--out", svg), "wrote %s\n" % svg)
        root = ET.parse(svg).getroot()  # raises on malformed XML
        self.assertEqual(root.tag, SVG + "svg")
        voice = "en-us+" + source_list("held_out_variants")[0]
        _, transcript = self.translated(
            self.ok("translate", "--checkpoint", self.run_dir, "four two").split("\n")[0], "four two", voice)
        titles = [t.text for t in root.iter(SVG + "text")]
        self.assertIn('"four two" (%s)  ->  %s' % (voice, transcript), titles)
        self.assertGreater(len(list(root.iter(SVG + "rect"))), 10)  # the spectrogram and the weights


class Errors(SpeechTest):
    def test_model_and_task(self):
        x = self.path("x")
        self.fails("train", "--model", "las", "--task", "reverse", "--out", x,
                   message=("--model las transcribes speech", "--task speech"))
        self.fails("train", "--model", "bahdanau", "--task", "speech", "--out", x,
                   message="--task speech goes with --model las")
        self.fails("train", *LAS, "--steps", "5", "--out", x, message=("--steps", "does not apply to --model las"))
        self.fails("train", *LAS, "--max-sentences", "5", "--out", x,
                   message=("--max-sentences", "does not apply to --model las"))
        started = time.monotonic()
        self.fails("train", *LAS, "--set", "listner_dim=3", "--out", x, message=("unknown key 'listner_dim'", "listener_dim"))
        self.assertLess(time.monotonic() - started, 10, "a bad --set must fail before speaking")
        self.fails("train", *LAS, "--set", "sampling_probability=2", "--out", x,
                   message=("'sampling_probability'", "[0, 1]"))
        self.assertFalse(os.path.exists(x), "a refused train made its --out folder")

    def test_run_of_las(self):
        self.fails("train", "--resume", self.run_dir, message=("train --resume", "has trained 1 epoch;",
                                                               "give --epochs more than 1"))
        self.fails("train", "--resume", self.run_dir, "--steps", "9", message="--steps does not apply to this las run")
        self.fails("eval", "--checkpoint", self.run_dir, "--length-penalty", "0.6", "--beam", "2",
                   message=("--length-penalty", "does not apply to las"))
        self.fails("translate", "--checkpoint", self.run_dir, "--voice", "+f2", "four",
                   message=("--voice '+f2'", "LANGUAGE+VARIANT"))
        # a voice espeak-ng does not know would be spoken in its default voice under the name asked for
        self.fails("translate", "--checkpoint", self.run_dir, "--voice", "en+nosuchvariant", "four",
                   message=("--voice 'en+nosuchvariant'", "no variant 'nosuchvariant'", "--voices=variant"))
        self.fails("translate", "--checkpoint", self.run_dir, "--voice", "xx-nowhere", "four",
                   message=("--voice 'xx-nowhere'", "no language 'xx-nowhere'"))
        self.fails("translate", "--checkpoint", self.run_dir, "--voice", "", "four",
                   message=("--voice", "got an empty value"))
        self.fails("translate", "--checkpoint", self.run_dir, "--voice", "en+", "four", message="LANGUAGE+VARIANT")
        # a long text would take minutes to speak and come back cut at the transcript's limit
        self.fails("translate", "--checkpoint", self.run_dir, "four " * 50,
                   message=("las transcribes at most 200 characters", "this text has 250", "shorter parts"))

    def test_speech_limits_stated_and_enforced(self):
        """Speech grows with its input: the limits are in --help and enforced by name, before any speaking.
        (Before: --help stated none; --n-train 1000000 was accepted, hours of espeak-ng and about 80 GB.)"""
        self.assertIn("at most 200 characters", " ".join(self.ok("translate", "--help").split()))
        self.assertIn("at most 200 characters", " ".join(self.ok("heatmap", "--help").split()))
        help_text = " ".join(self.ok("train", "--help").split())
        self.assertIn("speech: utterances to speak, at most 100,000 and no more than half of this machine's memory "
                      "holds", help_text)
        x = self.path("huge")
        started = time.monotonic()
        args = list(LAS)
        args[args.index("--n-train") + 1] = "1000000"
        self.fails("train", *args, "--out", x, message=("--n-train", "n_train", "100000"))
        self.assertLess(time.monotonic() - started, 10, "refused only after speaking")
        self.assertFalse(os.path.exists(x))

    def test_unfinished_transcript_is_noted(self):
        """A transcript that stops at its limit without an end is cut: a note on standard error says so,
        with the limit (before: printed as if whole)."""
        status, out, err = attn("translate", "--checkpoint", self.run_dir, "four two", timeout=300)
        self.assertEqual(status, 0, err)
        transcript = TRANSLATED.match(out.split("\n")[0]).group(4)
        if err:  # cut at 2 * 8 + 10 characters
            self.assertEqual(UNFINISHED.match(err.strip()).group(1, 2), ("four two", "26"))
            self.assertLessEqual(len(transcript), 26)
        else:  # the speller ended it within the limit
            self.assertLess(len(transcript), 26)

    def test_voice_on_another_model(self):
        run = self.path("bahdanau")
        self.ok("train", *TINY, "--steps", "5", "--out", run)
        self.fails("translate", "--checkpoint", run, "--voice", "en-us+f2", "1 2 3",
                   message=("--voice is for a run of las", "bahdanau"))

    def test_task_of_another_name(self):
        """A las config whose task is not "speech" is another run's: eval refuses it by its key."""
        run = self.path("speeches")
        shutil.copytree(self.run_dir, run)
        config = json.loads(read_part(run, "config.json"))
        config["task"]["name"] = "speeches"
        write_part(run, "config.json", json.dumps(config, indent=2))
        self.fails("eval", "--checkpoint", run, message=("config.json", "'name'", '"speech"', '"speeches"'))

    def test_tampered_vocab(self):
        for name, sign, message in (("unsigned", False, ("vocab.json", "manifest.json")),
                                    ("signed", True, ("vocab.json", "speech"))):
            run = self.path("tampered_" + name)
            shutil.copytree(self.run_dir, run)
            vocab = json.loads(read_part(run, "vocab.json"))
            tokens = vocab["tgt"]["tokens"]
            tokens[tokens.index("e")] = "E"
            write_part(run, "vocab.json", json.dumps(vocab, indent=2), sign=sign)
            self.fails("eval", "--checkpoint", run, message=message)
            self.fails("translate", "--checkpoint", run, "four", message=message)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_speech.py PATH/TO/attn [unittest arguments]")
    if shutil.which("espeak-ng") is None:
        # 77: meson's "skipped", with the reason in the log.
        print("skipped: espeak-ng is not installed (apt-get install espeak-ng; tools/setup.sh installs it): "
              "the speech task speaks its utterances with it")
        sys.exit(77)
    common.ATTN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
