#!/usr/bin/python3
"""Show, Attend and Tell on rendered scenes from the command line (cli/scenes.hpp): train, resume, eval and
caption, and every bad input refused by name, nothing a user made overwritten.
    /usr/bin/python3 tests/cli/test_scenes.py build/cli/attn [-v] [TestName...]
Standard library only (PNG files are written with zlib). Tiny models on a few scenes: about a minute in all."""
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import unittest
import zlib

import common
from common import attn, read_part, write_part
import test_resume  # noqa: E402  (assert_same_run, interrupt_and_resume)

# A model of a few hundred weights on 48 scenes of 32 x 32: seconds a run.
TINY = ["--model", "show-attend-tell", "--task", "shapes", "--n-train", "48", "--batch-size", "16", "--seed", "3",
        "--set", "conv_channels=4", "--set", "conv_blocks=2", "--set", "embed_dim=8", "--set", "decoder_dim=16",
        "--set", "attention_dim=8"]

def png_bytes(pixels, width, height, colour_type=2):
    """A PNG of 8-bit RGB (colour_type 2) or grey (0) rows; `pixels` a flat list of channel values."""
    channels = 3 if colour_type == 2 else 1

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    rows = b""
    for y in range(height):
        rows += b"\x00" + bytes(pixels[y * width * channels:(y + 1) * width * channels])
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")


def square_picture(size=64):
    """A red square on grey, size x size, as RGB values."""
    values = []
    for y in range(size):
        for x in range(size):
            inside = size // 4 <= x < size // 2 and size // 4 <= y < size // 2
            values += [220, 30, 30] if inside else [120, 120, 120]
    return values


class ScenesTest(test_resume.ResumeTest):
    """One tiny run trained once for the class, in the temporary folder of test_resume.ResumeTest (its path,
    ok, fails and assert_same_run)."""
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.sat = os.path.join(cls.tmp, "run")
        status, cls.train_out, err = attn("train", *TINY, "--epochs", "2", "--out", cls.sat, timeout=600)
        assert status == 0, err
        cls.picture = os.path.join(cls.tmp, "square.png")
        with open(cls.picture, "wb") as f:
            f.write(png_bytes(square_picture(), 64, 64))

    @staticmethod
    def digest(path):
        if os.path.isdir(path):
            return common.folder_digest(path)
        with open(path, "rb") as f:
            return f.read()

    def refused(self, args, message, untouched=()):
        """attn refuses `args` with every part of `message` in one line of its error, and the files in
        `untouched` keep their bytes."""
        before = {p: self.digest(p) for p in untouched}
        status, out, err = attn(*args)
        common.check_failure(self, status, out, err, message, args)
        for p, digest in before.items():
            self.assertEqual(self.digest(p), digest,
                             f"{p} was changed by a refused command")


class Train(ScenesTest):
    def test_first_line_and_files(self):
        first = [l for l in self.train_out.splitlines() if l.startswith("training ")][0]
        self.assertRegex(first, r"^training show-attend-tell \(soft attention with the gate, \d+ parameters, float32\) on "
                                r"shapes: 48 train / 500 valid / 500 test scenes of 64x64 pixels, a grid of 16x16 cells, seed 3$")
        self.assertEqual(sorted(os.listdir(common.unit(self.sat))),
                         ["config.json", "manifest.json", "model.npz", "model.trainer.npz", "vocab.json"])
        config = json.loads(read_part(self.sat, "config.json"))
        self.assertEqual(config["model"]["model"], "show-attend-tell")
        self.assertEqual(config["model"]["conv_blocks"], 2)
        self.assertEqual(config["task"], {"name": "shapes", "n_train": 48, "n_valid": 500, "n_test": 500,
                                          "image_size": 64, "min_objects": 1, "max_objects": 4})
        self.assertEqual(config["train"]["epochs"], 2)
        self.assertTrue(os.path.isfile(os.path.join(self.sat, "loss.svg")))
        self.assertRegex(self.train_out, r"kept epoch [12] \(validation BLEU \d+\.\d\d\)")

    def test_eval_agrees_with_train(self):
        m = re.search(r"test scenes \(500, greedy\): exact match ([\d.]+)%, BLEU ([\d.]+);", self.train_out)
        self.assertIsNotNone(m, self.train_out)
        out = self.ok("eval", "--checkpoint", self.sat)
        self.assertIn(f"500 test scenes, greedy: exact match {m.group(1)}%, BLEU {m.group(2)}, ", out)
        for kind in ("size", "colour", "shape"):
            self.assertRegex(out, rf"  {kind} +words: ")

    def test_predictions(self):
        predictions = self.path("predictions.tsv")
        out = self.ok("eval", "--checkpoint", self.sat, "--predictions", predictions)
        self.assertIn("wrote " + predictions, out)
        with open(predictions, encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), 500)
        exact = sum(gold == caption for gold, caption in (line.split("\t") for line in lines))
        m = re.search(r"exact match ([\d.]+)%", out)
        self.assertEqual(f"{100 * exact / 500:.1f}", m.group(1))
        self.refused(["eval", "--checkpoint", self.sat, "--predictions", predictions], ("--predictions", "exists"),
                     untouched=[predictions])

    def test_same_seed_same_run(self):
        again = self.path("again")
        self.ok("train", *TINY, "--epochs", "2", "--out", again)
        self.assert_same_run(self.sat, again)


class Caption(ScenesTest):
    def test_picture_and_test_scene(self):
        out = self.ok("caption", "--checkpoint", self.sat, self.picture, "--test", "3")
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith(self.picture + "  ->  "), out)
        self.assertTrue(lines[1].startswith("test scene 3  ->  "), out)
        self.assertRegex(lines[2], r"^  gold: a (small|large) ")
        # the same picture gives the same caption, greedy or by a beam of 1
        self.assertEqual(self.ok("caption", "--checkpoint", self.sat, self.picture, "--beam", "1").splitlines()[0],
                         lines[0])

    def test_show_attention_and_overlays(self):
        out = self.ok("caption", "--checkpoint", self.sat, "--test", "0", "--show-attention")
        self.assertIn("\u2502", out)  # the grids' frames
        svg = self.path("maps.svg")
        out = self.ok("caption", "--checkpoint", self.sat, "--test", "0", "--out", svg)
        self.assertIn("wrote " + svg, out)
        with open(svg, encoding="utf-8") as f:
            text = f.read()
        self.assertTrue(text.startswith("<svg") or text.startswith("<?xml"), text[:80])
        self.assertIn("data:image/png;base64,", text)
        caption = out.splitlines()[0].split("  ->  ")[1].split()
        self.assertEqual(text.count("data:image/png;base64,"), 1 + len(caption))

    def test_bad_pictures(self):
        grey = self.path("grey.png")
        with open(grey, "wb") as f:
            f.write(png_bytes([100] * 64 * 64, 64, 64, colour_type=0))
        small = self.path("small.png")
        with open(small, "wb") as f:
            f.write(png_bytes(square_picture(32), 32, 32))
        damaged = self.path("damaged.png")
        with open(self.picture, "rb") as f:
            data = f.read()
        with open(damaged, "wb") as f:
            f.write(data[:len(data) // 2])
        text = self.path("text.png")
        with open(text, "w") as f:
            f.write("not a picture\n")
        run = ["caption", "--checkpoint", self.sat]
        self.refused([*run, self.path("missing.png")], ("missing.png",))
        self.refused([*run, grey], ("grey.png", "64x64"))
        self.refused([*run, small], ("small.png", "32x32", "64x64"))
        self.refused([*run, damaged], ("damaged.png",))
        self.refused([*run, text], ("text.png",))
        self.refused([*run, self.path("folder_that_is_not_there/")], ("folder_that_is_not_there",))

    def test_bad_flags(self):
        run = ["caption", "--checkpoint", self.sat]
        self.refused(run, ("give PNG files or --test K",))
        self.refused([*run, "--test", "500"], ("--test 500", "500 test scenes", "0 to 499"))
        self.refused([*run, "--test", "0", "--out", self.path("maps.png")], ("--out", "FILE.svg"))
        self.refused([*run, "--test", "0", "--test", "1", "--out", self.path("two.svg")], ("--out", "one picture"))
        # outputs onto inputs: the picture read, or the run itself
        self.refused([*run, self.picture, "--out", self.picture], ("--out",), untouched=[self.picture])
        existing = self.path("existing.svg")
        with open(existing, "w") as f:
            f.write("mine\n")
        self.refused([*run, "--test", "0", "--out", existing], ("--out", "exists"), untouched=[existing])
        self.ok(*run, "--test", "0", "--out", existing, "--overwrite")
        self.refused(["caption", "--checkpoint", self.path("no_run"), "--test", "0"], ("no_run",))

    def test_other_commands_point_to_caption(self):
        for args in (["translate", "--checkpoint", self.sat, "a small red square"],
                     ["heatmap", "--checkpoint", self.sat, "a small red square", "--out", self.path("h.svg")],
                     ["classify", "--checkpoint", self.sat, self.picture]):
            self.refused(args, (args[0] + ": ", "holds show-attend-tell", "attn caption"))

    def test_caption_refuses_another_model(self):
        grid = self.path("grid")
        self.ok("train", "--model", "grid", "--task", "grid", "--steps", "2", "--n-train", "20", "--batch-size", "4",
                "--set", "embed_dim=8", "--set", "decoder_dim=8", "--set", "attention_dim=8", "--out", grid)
        self.refused(["caption", "--checkpoint", grid, "--test", "0"], ("holds grid", "not show-attend-tell"))


class BadTraining(ScenesTest):
    def test_model_and_task_go_together(self):
        out = self.path("never")
        self.refused(["train", "--model", "show-attend-tell", "--task", "reverse", "--out", out], ("--task shapes",))
        self.refused(["train", "--model", "bahdanau", "--task", "shapes", "--out", out], ("--model show-attend-tell",))
        self.refused(["train", *TINY, "--steps", "3", "--out", out], ("--steps does not apply to --model show-attend-tell",))
        self.refused(["train", *TINY, "--set", "colour=3", "--out", out], ("unknown key 'colour'",))
        self.refused(["train", *TINY, "--set", "conv_blocks=7", "--out", out], ("conv_blocks",))
        self.refused(["train", *TINY, "--set", "attention=sharp", "--out", out], ("attention",))
        # More scenes than half of this machine's memory holds (each 64 x 64 x 7 bytes), or than a split may have.
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        n = memory // 2 // (64 * 64 * 7) + 1
        huge = [a if a != "48" else str(min(n, 1000001)) for a in TINY]
        self.refused(["train", *huge, "--out", out], ("n_train", "memory" if n <= 1000000 else "1000000"))
        self.assertFalse(os.path.exists(out))

    def test_damaged_run_files(self):
        for key, value, message in (("name", "grid", "task"), ("image_size", 8, "image_size"),
                                    ("max_objects", 9, "max_objects")):
            copy = self.path(f"damaged_{key}")
            shutil.copytree(self.sat, copy)
            config = json.loads(read_part(copy, "config.json"))
            config["task"][key] = value
            write_part(copy, "config.json", json.dumps(config, indent=2))
            self.refused(["eval", "--checkpoint", copy], (copy + "/checkpoint/config.json", message), untouched=[copy])
        copy = self.path("damaged_vocab")
        shutil.copytree(self.sat, copy)
        vocab = json.loads(read_part(copy, "vocab.json"))
        vocab["tgt"]["tokens"][-1] = "zebra"
        write_part(copy, "vocab.json", json.dumps(vocab))
        self.refused(["caption", "--checkpoint", copy, "--test", "0"], ("vocab.json", "shapes task"), untouched=[copy])

    def test_full_disk(self):
        with common.full_disk(self, self.path("full_disk")) as disk:
            out = os.path.join(disk, "maps.svg")
            self.refused(["caption", "--checkpoint", self.sat, "--test", "0", "--out", out],
                         ("maps.svg", "no space left"))
            self.assertEqual(os.listdir(disk), ["filler"])


class Resume(test_resume.ResumeTest):
    def test_epochs_then_resume(self):
        whole, part = self.path("sat_whole"), self.path("sat_part")
        self.ok("train", *TINY, "--epochs", "3", "--out", whole)
        self.ok("train", *TINY, "--epochs", "1", "--out", part)
        out = self.ok("train", "--resume", part, "--epochs", "3")
        self.assertIn("resumed after epoch 1", out)
        self.assert_same_run(whole, part)
        self.assertEqual(self.ok("eval", "--checkpoint", part), self.ok("eval", "--checkpoint", whole))
        self.fails("train", "--resume", part, "--epochs", "3", message="has trained 3 epochs")
        self.fails("train", "--resume", part, "--steps", "30", message="--steps does not apply to this show-attend-tell run")

    def test_hard_attention_ctrl_c_then_resume(self):
        # Hard attention draws its cells from the generator and keeps a REINFORCE baseline: both must resume too.
        args = ["train", *TINY, "--set", "attention=hard", "--epochs", "4"]
        whole = self.path("sat_hard_whole")
        began = time.monotonic()
        self.ok(*args, "--out", whole)
        run = self.interrupt_and_resume(args, whole, time.monotonic() - began)
        self.assertIsNotNone(run, "no attempt was interrupted before its end")
        self.assert_same_run(whole, run)

    def test_sigkill_leaves_a_whole_checkpoint(self):
        whole = self.path("sat_kill_whole")
        self.ok("train", *TINY, "--epochs", "3", "--out", whole)
        run = self.path("sat_kill")
        self.ok("train", *TINY, "--epochs", "1", "--out", run)
        p = subprocess.Popen([common.ATTN, "train", "--resume", run, "--epochs", "3"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        time.sleep(1.5)
        p.send_signal(signal.SIGKILL)
        p.communicate()
        self.assertTrue(self.ok("caption", "--checkpoint", run, "--test", "0"))  # the unit left loads
        status, out, err = attn("train", "--resume", run, "--epochs", "3")
        self.assertTrue(status == 0 or "has trained 3 epochs" in err, err)  # the kill may come after its end
        self.assert_same_run(whole, run)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_scenes.py ATTN [unittest args]")
    common.ATTN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
