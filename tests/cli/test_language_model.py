#!/usr/bin/python3
"""The language models of the command line (cli/language_model.hpp): chapter 20's pointer sentinel over words
and chapter 15's character Transformer, trained on a text file, scored by eval and score, sampled by generate.

- What they print is recomputed here from the text: the split train prints, the perplexity eval prints (the
  same as train's last line), eval --predictions (one line per held-out token, whose log-probabilities sum
  to the printed cross-entropy), score of the held-out lines (eval's perplexity again; --per-line adds up to
  the total), generate (the same text for a seed, another for another seed, the greedy text for any seed).
- A run interrupted (fewer --epochs, Ctrl-C at a random moment, SIGKILL) and resumed with `attn train
  --resume` ends with the arrays of one run straight through, bit for bit, for both models.
- Bad input of every kind is refused with one line naming the file, flag or key, and nothing is written.

    /usr/bin/python3 tests/cli/test_language_model.py build/cli/attn [-v] [TestName...]

Standard library only. The text is the GPL (/usr/share/common-licenses/GPL-3), or a made-up one where it is
missing; the models are a few thousand weights, trained for a few epochs.
"""
import collections
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import common
from common import attn, check_failure, folder_digest, read_part, unit, write_part

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_resume  # noqa: E402  (assert_same_run, interrupt_and_resume)

GPL = "/usr/share/common-licenses/GPL-3"
MODELS = {
    "pointer-sentinel": ["--model", "pointer-sentinel", "--set", "hidden_dim=16", "--set", "embed_dim=8"],
    "transformer-lm": ["--model", "transformer-lm", "--set", "d_model=16", "--set", "dim_feedforward=32"],
}
UNIT = {"pointer-sentinel": "words", "transformer-lm": "characters"}
SMALL_LINES = 120  # the text of most runs: its first lines (95 with a sentence in the GPL)

# "perplexity 57.64 (4.054 nats per word)" or "5.272 bits per character (3.655 nats; perplexity 38.65)"
SCORE = r"(perplexity (?P<wp>[0-9.]+) \((?P<wn>[0-9.]+) nats per word\)|" \
        r"(?P<cb>[0-9.]+) bits per character \((?P<cn>[0-9.]+) nats; perplexity (?P<cp>[0-9.]+)\))"


def text_lines():
    """The lines of the text the runs read: the GPL, or (without it) sentences drawn from a few hundred words."""
    if os.path.exists(GPL):
        with open(GPL, encoding="utf-8") as f:
            return f.read().split("\n")
    rng = random.Random(7)  # sentences of a small grammar, whose every word the training lines hold
    nouns, verbs = ["program", "licensee", "work", "source", "copy", "notice"], ["covers", "conveys", "modifies", "keeps"]
    return [("This " if rng.random() < 0.3 else "") + " ".join(
        f"the {rng.choice(nouns)} {rng.choice(verbs)} a {rng.choice(nouns)}" for _ in range(rng.randint(1, 3))) + "."
        if rng.random() < 0.9 else "" for _ in range(700)]


def write_text(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


def line_tokens(line, unit_name):
    """A line's tokens as data/text_corpus.hpp reads them: words between blanks, or code points."""
    if unit_name == "words":
        return [w for w in re.split(r"[ \t\v\f]+", line) if w]
    return list(line) if re.search(r"[^ \t\v\f]", line) else []


def with_text(lines):
    """The lines with a sentence (a line of blanks is none)."""
    return [line for line in lines if line_tokens(line, "words")]


def split(lines, valid_fraction=0.1, test_fraction=0.1):
    """(train, valid, test) lines with a sentence: the last test_fraction (rounded up) held out, the
    valid_fraction before them (rounded up) to choose the epoch, the rest train."""
    kept = with_text(lines)
    n_test, n_valid = math.ceil(test_fraction * len(kept)), math.ceil(valid_fraction * len(kept))
    return kept[:len(kept) - n_test - n_valid], kept[len(kept) - n_test - n_valid:len(kept) - n_test], \
        kept[len(kept) - n_test:]


def stream(lines, unit_name):
    """The tokens of lines, each line's ended by <eos>."""
    return [t for line in lines for t in line_tokens(line, unit_name) + ["<eos>"]]


def score(text):
    """(tokens, nats per token, perplexity, the score's text) of a line of eval, score or train:
    "649 words (38.2% <unk>), perplexity 109.55 (4.696 nats per word)"."""
    m = re.search(r"(?P<n>[0-9,]+) (?:words?|characters?) \((?P<unk>[0-9.]+)% <unk>\), (?P<score>" + SCORE + ")", text)
    assert m, text
    nats, perplexity = (m.group("wn"), m.group("wp")) if m.group("wn") else (m.group("cn"), m.group("cp"))
    return int(m.group("n").replace(",", "")), float(nats), float(perplexity), m.group("score")


def vocabulary_size(lines, unit_name):
    """The run's vocabulary: the 4 special tokens and the training lines' tokens seen min_freq times (3 for words,
    chapter 20's; 1 for characters)."""
    counts = collections.Counter(t for line in lines for t in line_tokens(line, unit_name))
    return 4 + sum(1 for c in counts.values() if c >= (3 if unit_name == "words" else 1))


def snapshot(path):
    if os.path.isdir(path):
        return folder_digest(path)
    if os.path.exists(path):
        with open(path, "rb") as f:
            return f.read()
    return None


class Runs(common.ScratchTest):
    """A scratch folder with the text (its first SMALL_LINES lines: small.txt; all of it: text.txt) and a run
    of each model on small.txt, trained for two epochs (cls.runs, and what train printed: cls.trained)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="attn_language_model_")
        cls.lines = text_lines()[:SMALL_LINES]
        cls.small = write_text(cls.path("small.txt"), cls.lines)
        cls.text = write_text(cls.path("text.txt"), text_lines())
        cls.runs, cls.trained = {}, {}
        for model, args in MODELS.items():
            run = cls.path(model)
            status, out, err = attn("train", *args, "--task", cls.small, "--epochs", "2", "--out", run)
            assert status == 0, err
            cls.runs[model], cls.trained[model] = run, out

    def refused(self, args, message, untouched=(), absent=()):
        """attn `args` fails cleanly naming `message`; every run and every path in `untouched` is unchanged,
        and no path in `absent` exists."""
        watched = [*self.runs.values(), self.small, *untouched]
        before = {p: snapshot(p) for p in watched}
        status, out, err = attn(*args)
        line = check_failure(self, status, out, err, message, args)
        for p in watched:
            self.assertEqual(snapshot(p), before[p], f"attn {' '.join(args)} changed {p}")
        for p in absent:
            self.assertFalse(os.path.lexists(p), f"attn {' '.join(args)} wrote {p}")
        return line

    def copy(self, model, name):
        run = self.path(name)
        shutil.rmtree(run, ignore_errors=True)
        shutil.copytree(self.runs[model], run)
        return run


class Success(Runs):
    def held_out_file(self):
        """The run's held-out lines as a file of their own."""
        return write_text(self.path("held_out.txt"), split(self.lines)[2])

    def test_train_prints_the_split_and_the_perplexity(self):
        train, valid, test = split(self.lines)
        for model, out in self.trained.items():
            u = UNIT[model]
            first = next(line for line in out.splitlines() if line.startswith("training "))
            expected = (f"training {model} (", f"on {self.small}: {len(train)} lines for training "
                        f"({len(stream(train, u)):,} {u} and line ends), {len(valid)} to choose the epoch "
                        f"({len(stream(valid, u)):,}), {len(test)} held out ({len(stream(test, u)):,}); "
                        f"{math.ceil((len(stream(train, u)) - 1) / (64 if u == 'words' else 32))} chunks of "
                        f"{64 if u == 'words' else 32}; a vocabulary of {vocabulary_size(train, u):,} ({u} seen "
                        f"{'3 times or more' if u == 'words' else 'once or more'} in training), seed 1")
            for part in expected:
                self.assertIn(part, first, model)
            validation = [float(v) for v in re.findall(r"^  epoch \d/2: loss [0-9.]+, validation perplexity ([0-9.]+)",
                                                       out, re.M)]
            self.assertEqual(len(validation), 2)
            self.assertLess(validation[1], validation[0], "the second epoch learned nothing")
            self.assertIn(f"kept epoch 2 (validation perplexity {validation[1]:.2f})", out)
            last = out.rstrip("\n").split("\n")[-1]
            self.assertTrue(last.startswith(f"held-out lines: {len(stream(test, u)) - 1:,} {u} ("), last)
            tokens, nats, perplexity, _ = score(last)
            self.assertEqual(tokens, len(stream(test, u)) - 1)  # the first token is read, not predicted
            self.assertAlmostEqual(math.log(perplexity), nats, delta=1e-3)
            self.assertGreater(perplexity, 1)
            self.assertTrue(os.path.exists(os.path.join(self.runs[model], "loss.svg")))

    def test_eval_prints_the_perplexity_of_train(self):
        for model, run in self.runs.items():
            out = self.ok("eval", "--checkpoint", run)
            self.assertEqual(out.count("\n"), 1, out)
            self.assertTrue(out.startswith("held-out lines: "), out)
            self.assertEqual(score(out), score(self.trained[model].rstrip("\n").split("\n")[-1]))

    def test_eval_predictions(self):
        for model, run in self.runs.items():
            u = UNIT[model]
            tsv = self.path(model + "_predictions.tsv")
            out = self.ok("eval", "--checkpoint", run, "--predictions", tsv)
            self.assertIn(f"wrote {tsv}", out)
            tokens, nats, perplexity, _ = score(out)
            with open(tsv, encoding="utf-8") as f:
                rows = [line.split("\t") for line in f.read().split("\n")[:-1]]
            self.assertEqual(len(rows), tokens)
            self.assertEqual([int(r[0]) for r in rows], list(range(1, tokens + 1)))
            # The tokens predicted: the held-out stream after its first token, a token the run lacks read as <unk>.
            vocab = json.loads(read_part(run, "vocab.json"))["src"]["tokens"]
            expected = [t if t in vocab else "<unk>" for t in stream(split(self.lines)[2], u)[1:]]
            self.assertEqual([r[1] for r in rows], expected, model)
            self.assertTrue(all(r[3] in vocab for r in rows))
            log_probs = [float(r[2]) for r in rows]
            self.assertTrue(all(lp <= 0 for lp in log_probs))
            self.assertAlmostEqual(sum(log_probs) / -(nats * tokens), 1, delta=1e-3)
            self.assertAlmostEqual(math.exp(-sum(log_probs) / tokens) / perplexity, 1, delta=1e-3)

    def test_generate(self):
        for model, run in self.runs.items():
            prompt = "This" if model == "transformer-lm" else "the"
            args = ["generate", "--checkpoint", run, "--prompt", prompt, "--tokens", "40"]

            def text(*more):
                status, out, err = attn(*args, *more)
                self.assertEqual(status, 0, err)
                self.assertTrue(out.startswith(prompt), out)
                self.assertRegex(err, r"^40 tokens written, mean log p -[0-9.]+ \(temperature ")
                return out

            self.assertEqual(text("--temperature", "0.7", "--seed", "2"), text("--temperature", "0.7", "--seed", "2"))
            self.assertNotEqual(text("--seed", "1"), text("--seed", "2"), model)  # temperature 1: drawn
            greedy = text("--temperature", "0", "--seed", "1")
            self.assertEqual(greedy, text("--temperature", "0", "--seed", "2"))
            self.assertEqual(greedy, text("--temperature", "0", "--seed", "3"))

    def test_longest_prompt(self):
        # 128 KiB less a byte: the longest argument Linux passes to a program (MAX_ARG_STRLEN).
        prompt = ("the work " * 20000)[:128 * 1024 - 1]
        for run in self.runs.values():
            status, out, err = attn("generate", "--checkpoint", run, "--prompt", prompt, "--tokens", "3")
            self.assertEqual(status, 0, err)
            self.assertTrue(out.startswith(prompt.rstrip()))
            self.assertIn("3 tokens written", err)

    def test_score_the_held_out_lines(self):
        held_out = self.held_out_file()
        for model, run in self.runs.items():
            u = UNIT[model]
            evaluated = score(self.ok("eval", "--checkpoint", run))
            status, out, err = attn("score", "--checkpoint", run, held_out)
            self.assertEqual(status, 0, err)
            self.assertTrue(out.startswith(f"{held_out}: {evaluated[0]:,} {u} ("), out)
            self.assertEqual(score(out), evaluated)
            status, out, err = attn("score", "--checkpoint", run, "--per-line", held_out)
            self.assertEqual(status, 0, err)
            lines = out.split("\n")
            self.assertEqual(lines[:2], [held_out, "line\ttokens\tnats_per_token\ttext"])
            rows = [line.split("\t") for line in lines[2:-2]]
            test = split(self.lines)[2]
            self.assertEqual([r[3] for r in rows], test)
            self.assertEqual([int(r[1]) for r in rows],
                             [len(line_tokens(line, u)) + 1 - (i == 0) for i, line in enumerate(test)])
            self.assertEqual(sum(int(r[1]) for r in rows), evaluated[0])
            self.assertAlmostEqual(sum(int(r[1]) * float(r[2]) for r in rows) / evaluated[0], evaluated[1], delta=2e-3)
            self.assertEqual(score(lines[-2]), evaluated)

    def test_score_a_pipe(self):
        # A file that is a pipe (attn score RUN <(zcat book.gz)) scores as the same lines in a regular file do.
        held_out = self.held_out_file()
        with open(held_out, "rb") as f:
            text = f.read()
        for model, run in self.runs.items():
            status, out, err = attn("score", "--checkpoint", run, held_out)
            self.assertEqual(status, 0, err)
            read, write = os.pipe()
            p = subprocess.Popen([common.ATTN, "score", "--checkpoint", run, f"/dev/fd/{read}"], pass_fds=(read,),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
            os.close(read)
            with os.fdopen(write, "wb") as w:
                w.write(text)
            piped, piped_err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, piped_err)
            self.assertEqual(score(piped), score(out))

    def test_score_counts_unknown_tokens(self):
        # One pass over a file's chunks counts what score reports of its unknown tokens: the note counts the file's
        # tokens outside the vocabulary (a written <unk> is none), the share counts the targets read as <unk> (every
        # token but the first: a written <unk> too).
        lines = ["zzqx " + self.lines[5], "", "an <unk> word qqzz and qqzz", self.lines[6]]
        path = write_text(self.path("unknown.txt"), lines)
        for model, run in self.runs.items():
            u = UNIT[model]
            with open(os.path.join(run, "checkpoint", "vocab.json"), encoding="utf-8") as f:
                vocab = set(json.load(f)["src"]["tokens"])
            tokens = stream(with_text(lines), u)
            unknown = sum(t not in vocab and t != "<unk>" for t in tokens)
            share = sum(t not in vocab or t == "<unk>" for t in tokens[1:]) / (len(tokens) - 1)
            if u == "words":
                self.assertGreater(unknown, 0)
            for flags in ([], ["--per-line"]):
                status, out, err = attn("score", "--checkpoint", run, *flags, path)
                self.assertEqual(status, 0, err)
                note = f"note: {path}: {unknown:,} of its {len(tokens):,} tokens {'is' if unknown == 1 else 'are'} not " \
                       "in the model's vocabulary and read as <unk>\n"
                self.assertEqual(err, note if unknown else "")
                self.assertIn(f"{path}: {len(tokens) - 1:,} {u} ({100 * share:.1f}% <unk>), ", out)

    def test_score_counts_blank_lines_out(self):
        # Blank lines are no sentences: the same lines with blank ones between them score the same.
        held_out = split(self.lines)[2]
        spaced = write_text(self.path("spaced.txt"), [""] + [x for line in held_out for x in (line, "  ", "\t")])
        for run in self.runs.values():
            status, out, err = attn("score", "--checkpoint", run, spaced)
            self.assertEqual(status, 0, err)
            evaluated = score(self.ok("eval", "--checkpoint", run))
            self.assertEqual(score(out), evaluated)
            # Line by line too: a line of blanks gets no row (for characters too, whose blanks are tokens of a
            # line with text), and the rows are the held-out lines' own.
            status, out, err = attn("score", "--checkpoint", run, "--per-line", spaced)
            self.assertEqual(status, 0, err)
            lines = out.split("\n")
            rows = [line.split("\t") for line in lines[2:-2]]
            self.assertEqual([r[3] for r in rows], held_out)
            self.assertEqual(sum(int(r[1]) for r in rows), evaluated[0])
            self.assertEqual(score(lines[-2]), evaluated)

    def test_max_vocab_counts_words(self):
        # --max-vocab N keeps N words: <eos>, a special token in the stream, takes none of the N places.
        run = self.path("max_vocab")
        out = self.ok("train", *MODELS["pointer-sentinel"], "--task", self.small, "--max-vocab", "10", "--epochs", "1",
                      "--out", run)
        counts = collections.Counter(t for line in split(self.lines)[0] for t in line_tokens(line, "words"))
        most = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
        self.assertEqual(json.loads(read_part(run, "vocab.json"))["src"]["tokens"],
                         ["<pad>", "<bos>", "<eos>", "<unk>"] + [w for w, _ in most])
        self.assertIn("a vocabulary of 14 (", out)


class Resume(test_resume.ResumeTest):
    """For both models: fewer --epochs, then --resume; Ctrl-C at a random moment, then --resume; the end is
    the run straight through, bit for bit."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.small = write_text(os.path.join(cls.tmp, "small.txt"), text_lines()[:SMALL_LINES])
        cls.text = write_text(os.path.join(cls.tmp, "text.txt"), text_lines())

    def epochs_then_resume(self, model, epochs, first):
        args = [*MODELS[model], "--task", self.small, "--seed", "4"]
        whole, part = self.path(model + "_whole"), self.path(model + "_part")
        self.ok("train", *args, "--epochs", str(epochs), "--out", whole)
        self.ok("train", *args, "--epochs", str(first), "--out", part)
        out = self.ok("train", "--resume", part, "--epochs", str(epochs))
        self.assertRegex(out, r"seed 4, resumed after epoch %d \(step \d+\)\n" % first)
        self.assertEqual(len(re.findall(r"^  epoch \d+/%d: " % epochs, out, re.M)), epochs - first)
        self.assert_same_run(whole, part)
        self.assertEqual(self.ok("eval", "--checkpoint", part), self.ok("eval", "--checkpoint", whole))
        self.fails("train", "--resume", part, "--epochs", str(epochs),
                   message=f"has trained {epochs} epochs; to train it further, give --epochs more than {epochs}")
        self.fails("train", "--resume", part, "--epochs", str(epochs + 1), "--steps", "5",
                   message=f"--steps does not apply to this {model} run")

    def test_pointer_sentinel_epochs_then_resume(self):
        self.epochs_then_resume("pointer-sentinel", 4, 2)

    def test_transformer_lm_epochs_then_resume(self):
        self.epochs_then_resume("transformer-lm", 3, 1)

    def ctrl_c_then_resume(self, model, epochs):
        whole = self.path(model + "_sigint_whole")
        args = [*MODELS[model], "--task", self.text, "--epochs", str(epochs)]
        began = time.monotonic()
        self.ok("train", *args, "--out", whole)
        run = self.interrupt_and_resume(["train", *args], whole, time.monotonic() - began)
        self.assertIsNotNone(run, "no attempt was interrupted before its end")
        self.assert_same_run(whole, run)
        self.assertEqual(self.ok("eval", "--checkpoint", run), self.ok("eval", "--checkpoint", whole))

    def test_pointer_sentinel_ctrl_c_then_resume(self):
        self.ctrl_c_then_resume("pointer-sentinel", 8)

    def test_transformer_lm_ctrl_c_then_resume(self):
        self.ctrl_c_then_resume("transformer-lm", 4)

    def test_kills_then_resume(self):
        """SIGKILL at random moments of a resumed run (a checkpoint is committed after each epoch): the run
        loads after each, and resumed to its end it holds the run straight through."""
        kills = int(os.environ.get("ATTN_KILL_COUNT", "4"))
        rng = random.Random(int(os.environ.get("ATTN_KILL_SEED", "1")))
        args = [*MODELS["transformer-lm"], "--task", self.text]
        whole, base, run = self.path("kill_whole"), self.path("kill_base"), self.path("kill_run")
        self.ok("train", *args, "--epochs", "3", "--out", whole)
        self.ok("train", *args, "--epochs", "1", "--out", base)
        shutil.copytree(base, run)
        began = time.monotonic()
        self.ok("train", "--resume", run, "--epochs", "3")
        duration = time.monotonic() - began
        self.assert_same_run(whole, run)
        shutil.rmtree(run)
        shutil.copytree(base, run)
        survived = 0
        for _ in range(4 * kills):
            if survived == kills:
                break
            p = subprocess.Popen([common.ATTN, "train", "--resume", run, "--epochs", "3"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
            time.sleep(rng.uniform(0, duration))
            p.send_signal(signal.SIGKILL)
            _, err = p.communicate()
            if p.returncode != -signal.SIGKILL:  # it ended before its kill: the whole run, or refused as done
                self.assertTrue(p.returncode == 0 or b"has trained 3 epochs" in err, err.decode(errors="replace"))
                self.assert_same_run(whole, run)
                shutil.rmtree(run)
                shutil.copytree(base, run)
                continue
            survived += 1
            self.assertIn("held-out lines: ", self.ok("eval", "--checkpoint", run))  # it loads
        self.assertEqual(survived, kills, "the runs ended before their kills")
        status, out, err = attn("train", "--resume", run, "--epochs", "3")
        self.assertTrue(status == 0 or "has trained 3 epochs" in err, err)
        self.assert_same_run(whole, run)
        self.assertEqual(sorted(n for n in os.listdir(run) if n not in ("checkpoint", "lock", "loss.svg")), [])


class BadInputs(Runs):
    def bad_text(self, name, data):
        path = self.path(name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def with_line(self, name, number, tail):
        """small.txt with `tail` appended to its line `number` (counted from 1)."""
        lines = [line.encode("utf-8") for line in self.lines]
        lines[number - 1] += tail
        return self.bad_text(name, b"\n".join(lines) + b"\n")

    def refused_everywhere(self, path, message, models=tuple(MODELS)):
        """A text train refuses for each model (nothing written) and score refuses for each run."""
        for model in models:
            out = self.path("never_" + model)
            self.refused(["train", *MODELS[model], "--task", path, "--epochs", "1", "--out", out], message, absent=[out])
            self.refused(["score", "--checkpoint", self.runs[model], path], message)

    def test_predictions_onto_inputs(self):
        for model, run in self.runs.items():
            for extra in ([], ["--overwrite"]):
                self.refused(["eval", "--checkpoint", run, "--predictions", self.small, *extra],
                             ("--predictions " + self.small, "the run's corpus", "even --overwrite"))
                for part in (os.path.join(unit(run), "model.npz"), os.path.join(unit(run), "vocab.json"),
                             os.path.join(run, "loss.svg")):
                    self.refused(["eval", "--checkpoint", run, "--predictions", part, *extra],
                                 ("--predictions " + part, "a file of the run " + run))
            mine = self.bad_text("mine.tsv", b"my notes\n")
            self.refused(["eval", "--checkpoint", run, "--predictions", mine], ("--predictions " + mine, "exists"),
                         untouched=[mine])

    def test_control_characters(self):
        for name, tail, cause in [("escape.txt", b"\x1b[31m red", "ESC"), ("nul.txt", b"\x00", "NUL"),
                                  ("bell.txt", b" \x07", "0x07")]:
            self.refused_everywhere(self.with_line(name, 41, tail), (name + ":41: ", cause, "control characters"))

    def test_encodings(self):
        self.refused_everywhere(self.with_line("latin1.txt", 7, b" caf\xe9"), ("latin1.txt:7: ", "not valid UTF-8"))
        utf16 = self.bad_text("utf16.txt", "\n".join(self.lines).encode("utf-16"))
        self.refused_everywhere(utf16, (utf16, "UTF-16", "iconv"))
        old_mac = self.bad_text("old_mac.txt", "\r".join(self.lines).encode("utf-8"))
        self.refused_everywhere(old_mac, (old_mac, "CR alone"))

    def test_marks_of_attn_in_the_text(self):
        # <pad>, <bos> and <eos> are attn's own ids, no words: a text holding one is refused, naming the line.
        for mark in ("<pad>", "<bos>", "<eos>"):
            path = self.with_line("mark.txt", 12, b" the " + mark.encode() + b" here")
            self.refused_everywhere(path, ("mark.txt:12: ", "holds the word " + mark), models=["pointer-sentinel"])
        # <unk> stays: text already cut to a vocabulary writes it for the words it dropped.
        path = self.with_line("unk.txt", 12, b" an <unk> word")
        self.assertEqual(attn("score", "--checkpoint", self.runs["pointer-sentinel"], path)[0], 0)

    def test_huge_word(self):
        path = self.with_line("huge_word.txt", 30, b" " + b"x" * 5000)
        self.refused_everywhere(path, ("huge_word.txt:30: ", "a word of over 4096 bytes"), models=["pointer-sentinel"])

    def test_too_short(self):
        path = self.bad_text("short.txt", b"one line\n\n   \ntwo lines\n")
        out = self.path("never_short")
        for model in MODELS:
            self.refused(["train", *MODELS[model], "--task", path, "--out", out],
                         (path, "2 lines with text are too few", "3 lines at the very least"), absent=[out])
        for name, data in [("empty.txt", b""), ("blank.txt", b"\n  \n\t\n")]:
            path = self.bad_text(name, data)
            self.refused(["score", "--checkpoint", self.runs["pointer-sentinel"], path], (path, "no text to score"))
        missing = self.path("missing.txt")
        self.refused(["train", *MODELS["transformer-lm"], "--task", missing, "--out", out], missing, absent=[out])
        self.refused(["score", "--checkpoint", self.runs["transformer-lm"], missing], missing)
        self.refused(["score", "--checkpoint", self.runs["transformer-lm"], self.tmp], (self.tmp, "folder"))

    def test_generate_flags(self):
        run = self.runs["transformer-lm"]
        for tokens in ("0", "100001", "-1", "2.5", "x", ""):
            self.refused(["generate", "--checkpoint", run, "--tokens", tokens], ("--tokens", "[1, 100000]"))
        for temperature in ("-1", "nan", "inf", "x"):
            self.refused(["generate", "--checkpoint", run, "--temperature", temperature], "--temperature")
        self.refused(["generate", "--checkpoint", run, "--temperature", "0", "--top-k", "3"], ("--top-k", "--temperature 0"))
        for prompt, cause in [("red \x1b[31mtext", "ESC"), ("two\nlines", "a newline"), ("nul\x01", "0x01")]:
            self.refused(["generate", "--checkpoint", run, "--prompt", prompt], ("--prompt", cause))
        self.refused(["generate", "--checkpoint", run, "--prompt", "caf\udce9"], ("--prompt", "not valid UTF-8"))

    def test_prompt_over_the_limit(self):
        prompt = "a" * (1024 * 1024 + 1)
        try:
            status, out, err = attn("generate", "--checkpoint", self.runs["transformer-lm"], "--prompt", prompt)
        except OSError as e:  # E2BIG: Linux passes no argument over 128 KiB (test_longest_prompt tries that one)
            self.skipTest(f"the system passes no argument of 1 MiB: {e}")
        check_failure(self, status, out, err, ("--prompt", "1048577 bytes"))

    def test_model_too_large(self):
        for model, setting in [("pointer-sentinel", "hidden_dim=100000"), ("pointer-sentinel", "embed_dim=100000"),
                               ("transformer-lm", "dim_feedforward=100000")]:
            out = self.path("never_large")
            began = time.monotonic()
            self.refused(["train", "--model", model, "--set", setting, "--task", self.small, "--out", out],
                         ("the model's settings (--model, --set)", setting), absent=[out])
            self.assertLess(time.monotonic() - began, 10, "refused only after building the model")
        out = self.path("never_window")
        self.refused(["train", *MODELS["pointer-sentinel"], "--set", "window=0", "--task", self.small, "--out", out],
                     "window 0", absent=[out])
        self.refused(["train", *MODELS["transformer-lm"], "--max-length", "2000", "--task", self.small, "--out", out],
                     ("max_len 1024", "2000"), absent=[out])
        self.refused(["train", *MODELS["transformer-lm"], "--valid-fraction", "0.95", "--task", self.small, "--out", out],
                     "valid_fraction + test_fraction must be below 1", absent=[out])

    def test_d_model_too_large(self):
        # The memory estimate's largest term is the attention projections (4 d_model^2 a layer): it blames d_model,
        # not the number of layers.
        out = self.path("never_large")
        self.refused(["train", "--model", "transformer-lm", "--set", "d_model=100000", "--task", self.small, "--out", out],
                     ("the model's settings (--model, --set)", "d_model=100000"), absent=[out])

    def test_flags_and_tasks_that_do_not_go_together(self):
        out = self.path("never_mixed")
        for args, message in [
                (["--steps", "5"], "--steps does not apply to a language model"),
                (["--eval-every", "5"], "--eval-every does not apply to a language model"),
                (["--bpe", "100"], "--bpe does not apply to a language model")]:
            self.refused(["train", *MODELS["pointer-sentinel"], "--task", self.small, *args, "--out", out], message,
                         absent=[out])
        self.refused(["train", *MODELS["transformer-lm"], "--task", "reverse", "--out", out],
                     ("--model transformer-lm is a language model", "FILE.txt"), absent=[out])
        self.refused(["train", "--model", "bahdanau", "--task", self.small, "--out", out],
                     ("is a text to model", "pointer-sentinel or transformer-lm"), absent=[out])

    def edited(self, model, name, edit):
        """A copy of the run with its config.json edited (and signed in manifest.json)."""
        run = self.copy(model, name)
        config = json.loads(read_part(run, "config.json"))
        edit(config)
        write_part(run, "config.json", json.dumps(config, indent=2))
        return run

    def refused_by_all(self, run, message, resume_message=None):
        """eval, --resume, generate and score all refuse the run, naming `message`, and leave it as it is."""
        held = write_text(self.path("held.txt"), split(self.lines)[2])
        for args in (["eval", "--checkpoint", run], ["train", "--resume", run, "--epochs", "5"],
                     ["generate", "--checkpoint", run, "--tokens", "3"], ["score", "--checkpoint", run, held]):
            self.refused(args, resume_message if resume_message and args[0] == "train" else message, untouched=[run])

    def test_damaged_runs(self):
        for model in MODELS:
            def set_task(key, value):
                return lambda c: c["task"].update({key: value})
            run = self.edited(model, "bytes", set_task("unit", "bytes"))
            self.refused_by_all(run, ("config.json: task: key 'unit'", '"bytes"'))
            for length in (0, 5000, -1, 2.5):
                run = self.edited(model, "length", set_task("length", length))
                self.refused_by_all(run, ("config.json: task: key 'length'", str(length)))
            vocab = json.loads(read_part(self.runs[model], "vocab.json"))
            vocab["tgt"]["tokens"] += ["extra", "tokens"]
            run = self.copy(model, "tgt")
            write_part(run, "vocab.json", json.dumps(vocab, indent=2))
            self.refused_by_all(run, ("vocab.json", "\"tgt\" holds the special tokens only"), resume_message="vocab.json")
            other = self.path("other_size_" + model)
            if not os.path.exists(other):
                self.ok("train", *MODELS[model], "--set", ("hidden_dim=8" if model == "pointer-sentinel" else "d_model=8"),
                        "--task", self.small, "--epochs", "1", "--out", other)
            run = self.copy(model, "other_size")
            write_part(run, "model.npz", read_part(other, "model.npz"))
            for args in (["eval", "--checkpoint", run], ["generate", "--checkpoint", run]):
                self.refused(args, ("model.npz", "not those of the '" + model + "' model", "shape mismatches"),
                             untouched=[run])
            other_model = [m for m in MODELS if m != model][0]
            write_part(run, "model.npz", read_part(self.runs[other_model], "model.npz"))
            self.refused(["eval", "--checkpoint", run], ("model.npz", "missing keys"), untouched=[run])

    def test_unit_of_another_model(self):
        # The unit is the model's (models::language_model_unit): config.json's task "unit" edited to the other
        # model's is refused by eval, --resume, generate and score, naming the key, not read in the wrong unit.
        for model in MODELS:
            other = "characters" if UNIT[model] == "words" else "words"
            run = self.edited(model, "other_unit", lambda c: c["task"].update(unit=other))
            self.refused_by_all(run, ("config.json", "'unit'", other))

    def test_text_changed_after_training(self):
        changing = write_text(self.path("changing.txt"), self.lines)
        run = self.path("changing_run")
        shutil.rmtree(run, ignore_errors=True)
        self.ok("train", *MODELS["pointer-sentinel"], "--task", changing, "--epochs", "1", "--out", run)
        evaluated = self.ok("eval", "--checkpoint", run)
        write_text(changing, self.lines + ["a line more"])
        message = (changing, "has changed since the model was trained", "would not be those of the run")
        self.refused(["eval", "--checkpoint", run], message, untouched=[run])
        self.refused(["train", "--resume", run, "--epochs", "3"], message, untouched=[run])
        write_text(changing, self.lines)
        self.assertEqual(self.ok("eval", "--checkpoint", run), evaluated)

    def test_commands_for_other_models(self):
        for model, run in self.runs.items():
            for command in ("translate", "heatmap"):
                self.refused([command, "--checkpoint", run, "the work", *(["--out", self.path("h.svg")]
                                                                          if command == "heatmap" else [])],
                             (f"{command}: {run} holds a language model ({model})", "attn generate --checkpoint",
                              "attn score --checkpoint"), absent=[self.path("h.svg")])
            self.refused(["eval", "--checkpoint", run, "--beam", "2"], ("eval", "no --beam"))
            self.refused(["classify", "--checkpoint", run, self.small],
                         (f"classify: {run} holds a language model ({model})", "attn generate"))
            self.refused(["batches", "--checkpoint", run, "--steps", "2", "--out", self.path("b.npz")],
                         ("batches:", f"a run of {model}", "trains in epochs"), absent=[self.path("b.npz")])
            self.refused(["train", "--resume", run, "--steps", "9"], f"--steps does not apply to this {model} run")
        seq = self.path("bahdanau")
        if not os.path.exists(seq):
            self.ok("train", "--model", "bahdanau", "--task", "reverse", "--steps", "2", *common.TINY[:8],
                    "--out", seq)
        for command in (["generate", "--checkpoint", seq], ["score", "--checkpoint", seq, self.small]):
            self.refused(command, (f"{command[0]}: {seq} holds a bahdanau model, not a language model"),
                         untouched=[seq])

    def test_full_disk(self):
        """No space left for eval --predictions: the message says so, and no temporary file is left."""
        with common.full_disk(self, self.path("full_disk")) as disk:
            for run in self.runs.values():
                out = os.path.join(disk, "predictions.tsv")
                self.refused(["eval", "--checkpoint", run, "--predictions", out],
                             ("--predictions " + out, "no space left on the device"))
                self.assertEqual(os.listdir(disk), ["filler"])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_language_model.py PATH/TO/attn [unittest arguments]")
    common.ATTN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
