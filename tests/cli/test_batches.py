#!/usr/bin/python3
"""`attn batches`: a run's training data and the batch order of its steps 1..N, for another
framework to train on (tools/reference/torch_bahdanau_budget.py; its --self-test, meson test
torch_bahdanau, proves with PyTorch that the order is the one attn's Trainer used).

    /usr/bin/python3 tests/cli/test_batches.py build/cli/attn [-v] [TestName...]

Standard library only (the .npz is read with zipfile). Tiny models, few steps: seconds in all.
"""
import ast
import os
import shutil
import struct
import sys
import tempfile
import unittest
import zipfile
from collections import Counter

import common
from common import attn, check_failure

TINY = ["--model", "bahdanau", "--set", "embed_dim=8", "--set", "encoder_dim=8", "--set", "decoder_dim=8",
        "--set", "attention_dim=8", "--batch-size", "4", "--eval-every", "0", "--valid-fraction", "0.2"]

WORDS = "red green blue small large cat dog bird sees eats the a".split()
MOTS = "rouge vert bleu petit grand chat chien oiseau voit mange le un".split()


def fixture_pairs():
    """60 pairs of 1 to 7 words (lengths vary, so batches sort), each written once."""
    pairs = []
    for i in range(60):
        n = 1 + (i * 5) % 7
        idx = [(i * 7 + 3 * j) % len(WORDS) for j in range(n)] + [i % len(WORDS)]
        pairs.append((" ".join(WORDS[k] for k in idx), " ".join(MOTS[k] for k in reversed(idx))))
    return pairs


def read_npz(path):
    """{name: list of floats} of an .npz of 1-D float64 arrays (all attn batches writes)."""
    arrays = {}
    with zipfile.ZipFile(path) as z:
        for member in z.namelist():
            data = z.read(member)
            assert data[:6] == b"\x93NUMPY", member
            header_len = struct.unpack("<H", data[8:10])[0]
            header = ast.literal_eval(data[10:10 + header_len].decode("latin1"))
            assert header["descr"] == "<f8" and len(header["shape"]) == 1, (member, header)
            n = header["shape"][0]
            arrays[member[:-len(".npy")]] = list(struct.unpack("<%dd" % n, data[10 + header_len:10 + header_len + 8 * n]))
    return arrays


def ints(values):
    out = [int(v) for v in values]
    assert all(v == o for v, o in zip(values, out)), "not whole numbers"
    return out


def examples(z, prefix=""):
    src, so, tgt, to = (ints(z[prefix + k]) for k in ("src_ids", "src_offsets", "tgt_ids", "tgt_offsets"))
    return [(src[so[i]:so[i + 1]], tgt[to[i]:to[i + 1]]) for i in range(len(so) - 1)]


def steps(z):
    order, sizes = ints(z["order"]), ints(z["batch_sizes"])
    out, first = [], 0
    for n in sizes:
        out.append(order[first:first + n])
        first += n
    assert first == len(order)
    return out


def pad_batch(train, indices, pad, bos, eos):
    """data/batch.hpp: src padded; tgt_in = <bos> + tgt, tgt_out = tgt + <eos>, padded to the longest target + 1."""
    S = max(len(train[i][0]) for i in indices)
    T = max(len(train[i][1]) for i in indices) + 1
    src = [train[i][0] + [pad] * (S - len(train[i][0])) for i in indices]
    tgt_in = [[bos] + train[i][1] + [pad] * (T - 1 - len(train[i][1])) for i in indices]
    tgt_out = [train[i][1] + [eos] + [pad] * (T - 1 - len(train[i][1])) for i in indices]
    return src, tgt_in, tgt_out


class Batches(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="attn_batches_")
        cls.tsv = os.path.join(cls.tmp, "pairs.tsv")
        with open(cls.tsv, "w") as f:
            f.writelines("%s\t%s\n" % p for p in fixture_pairs())
        cls.train_out = {}
        for seed in ("3", "4"):
            status, out, err = attn("train", *TINY, "--task", cls.tsv, "--steps", "3", "--seed", seed, "--out",
                                    "run" + seed, cwd=cls.tmp)
            assert status == 0, err
            cls.train_out[seed] = out
        status, out, err = attn("batches", "--checkpoint", "run3", "--steps", "40", "--out", "b.npz",
                                "--initial-weights", "init.npz", cwd=cls.tmp)
        assert status == 0, err
        cls.out = out
        cls.z = read_npz(os.path.join(cls.tmp, "b.npz"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def vocab(self):
        import json
        with open(os.path.join(self.tmp, "run3", "checkpoint", "vocab.json")) as f:
            v = json.load(f)
        return v["src"]["tokens"], v["tgt"]["tokens"]

    def test_examples_are_the_corpus_pairs_as_ids(self):
        src_tokens, tgt_tokens = self.vocab()
        z = self.z
        self.assertEqual(int(z["src_vocab_size"][0]), len(src_tokens))
        self.assertEqual(int(z["tgt_vocab_size"][0]), len(tgt_tokens))
        self.assertEqual([int(z[k][0]) for k in ("pad_id", "bos_id", "eos_id", "unk_id")], [0, 1, 2, 3])
        self.assertEqual((int(z["seed"][0]), int(z["batch_size"][0])), (3, 4))
        train, test = examples(z), examples(z, "test_")
        # attn train's own count: "... on tsv: 48 train / 12 test examples"
        self.assertIn("%d train / %d test examples" % (len(train), len(test)), self.train_out["3"])
        decoded = [(" ".join(src_tokens[i] for i in s), " ".join(tgt_tokens[i] for i in t)) for s, t in train + test]
        self.assertEqual(Counter(decoded), Counter(fixture_pairs()))  # every pair once, train and test disjoint

    def test_order_is_epochs_of_sorted_batches(self):
        train = examples(self.z)
        batches = steps(self.z)
        self.assertEqual(len(batches), 40)
        self.assertIn("40 steps", self.out)
        epoch, seen = [], 0
        for b in batches:
            # make_batches sorts by source length within buckets of 8 batches: rows in that order
            lengths = [len(train[i][0]) for i in b]
            self.assertEqual(lengths, sorted(lengths), f"batch {b}: rows not in make_batches' order")
            epoch += b
            if len(epoch) == len(train):
                self.assertEqual(sorted(epoch), list(range(len(train))), "an epoch is not every example once")
                epoch, seen = [], seen + 1
            self.assertLess(len(epoch), len(train))
            self.assertTrue(len(b) == 4 or not epoch, f"a short batch ({len(b)}) inside an epoch")
        self.assertGreaterEqual(seen, 2)
        # a second epoch is drawn anew, not the first again
        per_epoch = -(-len(train) // 4)
        self.assertNotEqual(batches[:per_epoch], batches[per_epoch:2 * per_epoch])

    def test_same_run_same_batches_other_seed_other_order(self):
        status, _, err = attn("batches", "--checkpoint", "run3", "--steps", "10", "--out", "again.npz", cwd=self.tmp)
        self.assertEqual(status, 0, err)
        again = read_npz(os.path.join(self.tmp, "again.npz"))
        self.assertEqual(steps(again), steps(self.z)[:10])
        for k in ("src_ids", "src_offsets", "tgt_ids", "tgt_offsets", "test_src_ids", "test_tgt_ids"):
            self.assertEqual(again[k], self.z[k], k)
        status, _, err = attn("batches", "--checkpoint", "run4", "--steps", "10", "--out", "seed4.npz", cwd=self.tmp)
        self.assertEqual(status, 0, err)
        other = read_npz(os.path.join(self.tmp, "seed4.npz"))
        self.assertNotEqual(steps(other), steps(self.z)[:10])

    def test_padding_and_shift(self):
        z = self.z
        train = examples(z)
        b = steps(z)[0]
        src, tgt_in, tgt_out = pad_batch(train, b, 0, 1, 2)
        for row, i in enumerate(b):
            s, t = train[i]
            self.assertEqual(src[row][:len(s)], s)
            self.assertTrue(all(v == 0 for v in src[row][len(s):]))
            self.assertEqual(tgt_in[row][0], 1)
            self.assertEqual(tgt_in[row][1:len(t) + 1], t)
            self.assertEqual(tgt_out[row][:len(t) + 1], t + [2])
            self.assertEqual(tgt_in[row][1:len(t) + 1], tgt_out[row][:len(t)])  # tgt_out shifted right by one
            self.assertTrue(all(v == 0 for v in tgt_in[row][len(t) + 1:] + tgt_out[row][len(t) + 1:]))
        self.assertEqual(max(len(r) for r in tgt_in), max(len(train[i][1]) for i in b) + 1)
        # The PyTorch script pads the same way (it needs numpy, not torch, for this).
        try:
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "reference"))
            import torch_bahdanau_budget as script
        except ImportError as e:
            self.skipTest("the PyTorch script's padding: %s" % e)
        if script.torch is None:
            self.skipTest("the PyTorch script's padding needs torch tensors: PyTorch is not installed")
        for n, b in enumerate(steps(z)):
            ours = pad_batch(train, b, 0, 1, 2)
            s_src, s_lengths, s_in, s_out = script.pad_batch(train, b, 0, 1, 2)
            self.assertEqual((s_src.tolist(), s_in.tolist(), s_out.tolist()), ours, f"step {n + 1}")
            self.assertEqual(s_lengths.tolist(), [len(train[i][0]) for i in b])

    def test_initial_weights_are_a_model_npz(self):
        z = zipfile.ZipFile(os.path.join(self.tmp, "init.npz"))
        names = z.namelist()
        with zipfile.ZipFile(os.path.join(self.tmp, "run3", "checkpoint", "model.npz")) as trained:
            self.assertEqual(names, trained.namelist())
            # 3 Adam steps move every weight that has a gradient: the initial ones differ
            self.assertNotEqual(z.read("out.weight.npy"), trained.read("out.weight.npy"))
        self.assertIn("the initial weights", self.out)

    def test_help(self):
        status, out, err = attn("batches", "--help")
        self.assertEqual(status, 0, err)
        for flag in ("--checkpoint", "--steps", "--out", "--initial-weights", "--overwrite"):
            self.assertIn(flag, out)

    def test_refusals(self):
        cases = [
            (["--checkpoint", "nowhere", "--steps", "3", "--out", "x.npz"], "no such run folder"),
            (["--checkpoint", "run3", "--steps", "0", "--out", "x.npz"], "--steps"),
            (["--checkpoint", "run3", "--steps", "3", "--out", "b.npz"], ("--out", "b.npz", "--overwrite")),
            (["--checkpoint", "run3", "--steps", "3", "--out", "x.npz", "--initial-weights", "x.npz"], "same file"),
            (["--checkpoint", "run3", "--steps", "3", "--out", "run3/checkpoint/model.npz"], "--out"),
            (["--checkpoint", "run3", "--steps", "3", "--out", "nofolder/x.npz"], "--out"),
            (["--checkpoint", "run3", "--steps", "999999999", "--out", "x.npz"], "write fewer steps"),
        ]
        for args, message in cases:
            status, out, err = attn("batches", *args, cwd=self.tmp)
            check_failure(self, status, out, err, message, args)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "x.npz")))
        status, _, err = attn("batches", "--checkpoint", "run3", "--steps", "2", "--out", "b2.npz", cwd=self.tmp)
        self.assertEqual(status, 0, err)
        status, _, err = attn("batches", "--checkpoint", "run3", "--steps", "5", "--out", "b2.npz", "--overwrite",
                              cwd=self.tmp)
        self.assertEqual(status, 0, err)
        self.assertEqual(len(steps(read_npz(os.path.join(self.tmp, "b2.npz")))), 5)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_batches.py PATH/TO/attn [unittest arguments]")
    common.ATTN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
