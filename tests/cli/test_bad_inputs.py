#!/usr/bin/python3
"""Bad inputs against the `attn` command line: every one must be refused before
anything is written, with one line of error naming the culprit (the flag, the
file, the key), and must leave a good run byte-identical and loadable.

    /usr/bin/python3 tests/cli/test_bad_inputs.py build/cli/attn [-v] [TestName...]

Standard library only. Prints how many bad inputs it tried.
"""
import fcntl
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import warnings
import zipfile

import common
from common import TINY, attn, folder_digest, read_part, unit, write_part

TRIED = {"inputs": 0, "crashes": 0, "damaged": 0}


def with_flag(args, flag, value):
    """TINY with `flag` set to `value` (replaced if TINY has it, which CLI11 would refuse as given twice)."""
    out, i = [], 0
    while i < len(args):
        if args[i] == flag and flag != "--set":
            i += 2
            continue
        out.append(args[i])
        i += 1
    return out + [flag, value]


def npz_replace(data, member, new_bytes=None, drop=False):
    """An .npz (zip) with one member replaced or dropped."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as dst:
        for name in src.namelist():
            if name == member:
                if not drop:
                    dst.writestr(name, new_bytes)
            else:
                dst.writestr(name, src.read(name))
    return buf.getvalue()


def npy_values(npy, values):
    """An .npy float64 array member with its values replaced (same count)."""
    header_len = struct.unpack("<H", npy[8:10])[0]
    head = npy[:10 + header_len]
    assert b"'<f8'" in head
    return head + struct.pack("<%dd" % len(values), *values)


class BadInputs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="attn_bad_inputs_")
        cls.good = os.path.join(cls.tmp, "good")
        status, out, err = attn("train", *TINY, "--steps", "4", "--checkpoint-every", "2", "--eval-every", "0",
                                "--out", cls.good)
        assert status == 0, err
        cls.digest = folder_digest(cls.good)

    @classmethod
    def tearDownClass(cls):
        # The good run still loads, and still continues.
        status, out, err = attn("eval", "--checkpoint", cls.good)
        assert status == 0, err
        copy = os.path.join(cls.tmp, "good_continued")
        shutil.copytree(cls.good, copy)
        status, out, err = attn("train", "--resume", copy, "--steps", "6")
        assert status == 0 and "resumed at step 4" in out, err
        shutil.rmtree(cls.tmp, ignore_errors=True)
        print(f"\nbad inputs tried: {TRIED['inputs']}, crashes: {TRIED['crashes']}, runs damaged: {TRIED['damaged']}",
              file=sys.stderr)

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def refused(self, args, message, untouched=()):
        """attn `args` fails cleanly naming `message`; the good run and every folder in `untouched` are unchanged."""
        folders = [self.good, *untouched]
        before = {f: folder_digest(f) for f in folders}
        status, out, err = attn(*args)
        TRIED["inputs"] += 1
        if status < 0 or status >= 128:
            TRIED["crashes"] += 1
        if os.environ.get("ATTN_TEST_SHOW"):  # prints each refusal's message, to compare two builds
            print(f"\n[{' '.join(args)}]\n  {err.strip()}", file=sys.stderr)
        with self.subTest(args=args):
            common.check_failure(self, status, out, err, message, args)
        for f in folders:
            after = folder_digest(f)
            if after != before[f]:
                TRIED["damaged"] += 1
            self.assertEqual(after, before[f], f"attn {' '.join(args)} changed {f}")
        self.assertEqual(folder_digest(self.good), self.digest)

    def refused_new(self, args, message):
        """Refused both into the good run's folder and into a new one, which must not be created."""
        self.refused([*args, "--out", self.good], message)
        new = self.path("never_written")
        self.refused([*args, "--out", new], message)
        self.assertFalse(os.path.exists(new), f"attn {' '.join(args)} created {new}")

    def broken_copy(self, name):
        dst = self.path(name)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(self.good, dst)
        return dst

    # ---- flags ----

    def test_number_flags(self):
        bad = {
            "--steps": ["", " -5", "-5", "0", "abc", "5x", "1e3", "+5", "5.0", "0x10", " 5", "5 ",
                        "99999999999999999999", "18446744073709551616", "1000000001"],
            "--batch-size": ["0", "-1", "65537", "", "x", "8.5"],
            "--lr": ["inf", "-inf", "nan", "NaN", "0", "-0.1", "1e999", "", "abc", "0x1p3", " 0.1", "1e-3x", "infinity"],
            "--clip": ["nan", "-1", "inf", "", "1,0"],
            "--label-smoothing": ["1", "1.5", "-0.1", "nan"],
            "--eval-every": ["-1", "x", "1e3", "2.5"],
            "--checkpoint-every": ["-1", "", "2.5"],
            "--seed": ["-1", "18446744073709551616", "1.5", "", "abc", "+1"],
            "--n-train": ["0", "-1", "10000001", "2.5"],
            "--min-length": ["0", "-1"],
            "--max-length": ["0", "10001"],
        }
        for flag, values in bad.items():
            for value in values:
                self.refused_new(["train", *with_flag(TINY, flag, value)], flag)

    def test_word_flags(self):
        self.refused_new(["train", *with_flag(TINY, "--dtype", "float16")], "--dtype")
        self.refused_new(["train", *with_flag(TINY, "--dtype", "")], "--dtype")
        self.refused_new(["train", "--model", "nope"], "unknown model 'nope'")
        self.refused_new(["train", "--model", ""], "unknown model ''")
        self.refused_new(["train", "--task", "nope"], "unknown task 'nope'")
        self.refused_new(["train", "--task", ""], "unknown task ''")
        self.refused_new(["train", "--bogus", "1"], "--bogus")
        self.refused_new(["train", *TINY, "--steps", "3", "--steps", "4"], "--steps")
        self.refused(["frobnicate"], "unknown command 'frobnicate'")
        self.refused(["train", "--steps", "5"], "--out DIR is required")

    def test_model_settings(self):
        for setting, message in [("novalue", "KEY=VALUE"), ("=3", "KEY=VALUE"), ("embed_dim=-4", "'embed_dim'"),
                                 ("embed_dim=2.5", "'embed_dim'"), ("embed_dim=abc", "'embed_dim'"),
                                 ("embed_dim=", "'embed_dim'"), ("hidden_dim=3", "unknown field 'hidden_dim'"),
                                 ("embed_dim=1000000000", "embed_dim=1000000000 needs at least"),
                                 ("decoder_dim=99999999999", "decoder_dim=99999999999 needs at least"),
                                 ("embed_dim=99999999999999999999", "'embed_dim'"),
                                 ("embed_dim=\udcff", "not valid UTF-8"), ("\udcff=1", "not valid UTF-8")]:
            self.refused_new(["train", *TINY, "--set", setting], message)
        transformer = ["--model", "transformer", "--set", "d_model=8", "--set", "nhead=2"]
        self.refused_new(["train", *transformer, "--set", "max_len=100000000000"], "max_len=100000000000 needs")
        self.refused_new(["train", *transformer, "--set", "num_encoder_layers=1000000000"],
                         "num_encoder_layers=1000000000 needs")
        self.refused_new(["train", *transformer, "--set", "dropout=2"], "(--model, --set): Dropout: probability")
        self.refused_new(["train", *transformer, "--set", "nhead=3"], "(--model, --set): MultiheadAttention")

    def test_flags_that_do_not_apply(self):
        self.refused_new(["train", "--task", "dates", "--min-length", "3"], "--min-length does not apply")
        self.refused_new(["train", "--task", "dates", "--max-length", "3"], "--max-length does not apply")
        self.refused_new(["train", "--task", "reverse", "--skip-malformed"], "--skip-malformed does not apply")
        self.refused_new(["train", *TINY, "--min-length", "7"], "min_length 7 is more than max_length 6")
        self.refused_new(["train", "--model", "grid", "--task", "grid", "--label-smoothing", "0.1"],
                         "--label-smoothing does not apply")
        self.refused_new(["train", "--model", "grid", "--task", "grid", "--set", "embed_dim=1000000000"], "embed_dim")
        self.refused_new(["train", "--model", "grid", "--task", "reverse"], "--task grid only")
        self.refused_new(["train", "--model", "grid", "--task", "grid", "--set", "attention=blurry"], "'attention'")

    def test_inspect_flags(self):
        for beam in ("0", "65", "-1", "x", "", "2.5"):
            self.refused(["translate", "--checkpoint", self.good, "--beam", beam, "1 2"], "--beam")
        self.refused(["translate", "--checkpoint", self.good, ""], "empty")
        self.refused(["heatmap", "--checkpoint", self.good, "1 2", "--out", self.path("no", "dir", "x.svg")],
                     "cannot write")
        self.refused(["eval"], "--checkpoint is required")
        self.refused(["demo", "--steps", "0"], "--steps")
        self.refused(["demo", "--seed", "-1"], "--seed")

    # ---- run folders ----

    def test_out_folders(self):
        self.refused(["train", *TINY, "--out", self.good], "holds another run")
        self.refused(["train", *TINY, "--batch-size", "0", "--out", self.good], "--batch-size")
        a_file = self.path("a_file")
        with open(a_file, "w") as f:
            f.write("x")
        self.refused(["train", *TINY, "--out", a_file], "is a file")
        stray = self.path("stray")
        os.makedirs(stray, exist_ok=True)
        with open(os.path.join(stray, "notes.txt"), "w") as f:
            f.write("mine")
        self.refused(["train", *TINY, "--out", stray], "not empty", untouched=[stray])
        self.refused(["train", *TINY, "--out", self.good, "--resume", self.good], "cannot change a run")

    def test_resume_flags(self):
        for steps in ("4", "2", "1"):
            self.refused(["train", "--resume", self.good, "--steps", steps], "already at step 4")
        self.refused(["train", "--resume", self.good], "already at step 4")
        for flag, value in [("--lr", "0.1"), ("--batch-size", "4"), ("--seed", "9"), ("--model", "luong"),
                            ("--set", "embed_dim=4"), ("--dtype", "float64"), ("--eval-every", "1")]:
            self.refused(["train", "--resume", self.good, flag, value, "--steps", "8"], flag)
        self.refused(["train", "--resume", self.good, "--overwrite", "--steps", "8"], "--overwrite")
        self.refused(["train", "--resume", self.good, "--steps", "abc"], "--steps")
        self.refused(["train", "--resume", "", "--steps", "8"], "--resume")
        self.refused(["train", "--resume", self.path("nowhere"), "--steps", "8"], "no such run folder")
        empty = self.path("empty_dir")
        os.makedirs(empty, exist_ok=True)
        self.refused(["train", "--resume", empty, "--steps", "8"], "holds no run")
        self.refused(["eval", "--checkpoint", empty], "holds no checkpoint")
        self.refused(["eval", "--checkpoint", self.path("nowhere")], "no such checkpoint directory")

    def test_locked_run(self):
        """A run folder another process writes is refused, naming that process."""
        lock_path = os.path.join(self.good, "lock")
        with open(lock_path, "r+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            saved = f.read()
            f.seek(0)
            f.truncate()
            f.write("424242\n")
            f.flush()
            try:
                self.refused(["train", "--resume", self.good, "--steps", "8"], "in use by another attn process (pid 424242")
                self.refused(["train", *TINY, "--overwrite", "--out", self.good], "pid 424242")
            finally:
                f.seek(0)
                f.truncate()
                f.write(saved)
                fcntl.flock(f, fcntl.LOCK_UN)

    # ---- damaged or edited checkpoints ----

    def check_broken(self, name, file, data, message, sign=True, resume_only=False):
        """A copy of the good run with `file` replaced: eval and --resume both refuse it, naming `message`."""
        run = self.broken_copy(name)
        if data is None:
            os.remove(os.path.join(unit(run), file))
        else:
            write_part(run, file, data, sign=sign)
        if not resume_only:
            self.refused(["eval", "--checkpoint", run], message, untouched=[run])
        self.refused(["train", "--resume", run, "--steps", "8"], message, untouched=[run])
        shutil.rmtree(run)

    def edited_config(self, edit):
        config = json.loads(read_part(self.good, "config.json"))
        edit(config)
        return json.dumps(config, indent=2)

    def test_bad_config(self):
        def set_key(section, key, value):
            def edit(c):
                (c[section] if section else c)[key] = value
            return edit

        def drop_key(section, key):
            def edit(c):
                del (c[section] if section else c)[key]
            return edit

        cases = [
            (set_key("train", "steps", "abc"), "key 'steps'"), (set_key("train", "steps", -1), "key 'steps'"),
            (set_key("train", "steps", 2.5), "key 'steps'"), (drop_key("train", "steps"), "key 'steps'"),
            (set_key("train", "steps", 0), "key 'steps'"), (set_key("train", "lr", "nan"), "key 'lr'"),
            (set_key("train", "lr", 0), "key 'lr'"), (set_key("train", "lr", -1), "key 'lr'"),
            (set_key("train", "clip_norm", -1), "key 'clip_norm'"),
            (set_key("train", "label_smoothing", 1.5), "key 'label_smoothing'"),
            (set_key("train", "batch_size", 0), "key 'batch_size'"),
            (set_key("train", "stepz", 3), "unknown key 'stepz'"),
            (set_key(None, "seed", -1), "key 'seed'"), (set_key(None, "seed", 1.5), "key 'seed'"),
            (set_key(None, "seed", "1"), "key 'seed'"), (set_key(None, "dtype", "float16"), "key 'dtype'"),
            (set_key(None, "format", "other"), "key 'format'"), (set_key(None, "extra", 1), "unknown key 'extra'"),
            (drop_key(None, "train"), "key 'train'"), (drop_key(None, "model"), "key 'model'"),
            (set_key(None, "task", [1]), "key 'task'"),
            (set_key("task", "n_test", 2.5), "key 'n_test'"), (set_key("task", "n_test", 0), "key 'n_test'"),
            (set_key("task", "n_train", "many"), "key 'n_train'"), (set_key("task", "name", "bogus"), "key 'name'"),
            (set_key("task", "vocab_size", 0), "key 'vocab_size'"), (set_key("task", "extra", 1), "unknown key 'extra'"),
            (set_key("task", "min_length", 9), "min_length 9 is more than max_length 6"),
            (set_key("model", "embed_dim", 1000000000), "embed_dim=1000000000 needs at least"),
            (set_key("model", "embed_dim", -4), "'embed_dim'"), (set_key("model", "model", 3), "key 'model'"),
            (set_key("model", "model", "nope"), "unknown model 'nope'"),
            (set_key("model", "decoder_dim", 9), "npz"),  # eval: model.npz; --resume: model.trainer.npz, read first
        ]
        for i, (edit, message) in enumerate(cases):
            self.check_broken(f"config_{i}", "config.json", self.edited_config(edit), message)
        for i, text in enumerate(['{"format": ', "[1, 2]", "", "\xff", '{"train": 1e999}']):
            self.check_broken(f"config_text_{i}", "config.json", text.encode("latin-1"), "config.json")

    def test_bad_vocab(self):
        for i, text in enumerate(["{", '{"src": 3, "tgt": 4}', '{"src": {"tokens": [1, 2]}, "tgt": {"tokens": []}}',
                                  '{"tgt": {"tokens": ["a"]}}', "[]"]):
            self.check_broken(f"vocab_{i}", "vocab.json", text, "vocab.json")

    def test_bad_weights(self):
        weights = read_part(self.good, "model.npz")
        self.check_broken("weights_truncated", "model.npz", weights[:1000], "model.npz")
        self.check_broken("weights_empty", "model.npz", b"", "model.npz")
        self.check_broken("weights_noise", "model.npz", os.urandom(4000), "model.npz")
        self.check_broken("weights_missing", "model.npz", None, "model.npz: missing")
        first = zipfile.ZipFile(io.BytesIO(weights)).namelist()[0]
        self.check_broken("weights_member", "model.npz", npz_replace(weights, first, drop=True), "model.npz")

    def test_bad_trainer_state(self):
        trainer = read_part(self.good, "model.trainer.npz")
        members = zipfile.ZipFile(io.BytesIO(trainer))

        def with_value(member, values):
            return npz_replace(trainer, member, npy_values(members.read(member), values))

        n_words = (len(members.read("trainer_generator.npy")) - 128) // 8
        cases = [
            (with_value("step.npy", [float("nan")]), "'step'"), (with_value("step.npy", [1e30]), "'step'"),
            (with_value("step.npy", [-1]), "'step'"), (with_value("step.npy", [2.5]), "'step'"),
            (with_value("step.npy", [float("inf")]), "'step'"),
            (with_value("lr.npy", [float("nan")]), "'lr'"), (with_value("lr.npy", [-0.5]), "'lr'"),
            (with_value("epoch_position.npy", [1e9]), "'epoch_position'"),
            (with_value("trainer_generator.npy", [2.0 ** 40] * n_words), "'trainer_generator'"),
            (npz_replace(trainer, "step.npy", drop=True), "no 'step'"),
            (npz_replace(trainer, "optimizer.exp_avg.0.npy", drop=True), "optimizer"),
            (trainer[:500], "model.trainer.npz"), (b"", "model.trainer.npz"),
        ]
        for i, (data, message) in enumerate(cases):
            self.check_broken(f"trainer_{i}", "model.trainer.npz", data, ("model.trainer.npz", message), resume_only=True)
        self.check_broken("trainer_missing", "model.trainer.npz", None, "model.trainer.npz", resume_only=True)

    def test_bad_manifest(self):
        config = read_part(self.good, "config.json")
        self.check_broken("unsigned_config", "config.json", config.replace(b'"steps": 4', b'"steps": 5'),
                          "config.json: does not match manifest.json", sign=False)
        self.check_broken("unsigned_weights", "model.npz", read_part(self.good, "model.npz")[:-1],
                          "model.npz: does not match manifest.json", sign=False)
        manifest = json.loads(read_part(self.good, "manifest.json"))
        for i, (edit, message) in enumerate([
                (lambda m: m["files"]["model.npz"].update(bytes=1), "model.npz: does not match manifest.json"),
                (lambda m: m["files"].pop("model.npz"), "files.model.npz"),
                (lambda m: m["files"].update({"../x": {"bytes": 0, "fnv1a64": "0"}}), "not a file name"),
                (lambda m: m["files"].update({"extra.bin": {"bytes": 0, "fnv1a64": "0"}}), "extra.bin: missing"),
                (lambda m: m.update(format="zip"), "key 'format'"),
                (lambda m: m["files"]["vocab.json"].update(bytes=-1), "key 'bytes'")]):
            m = json.loads(json.dumps(manifest))
            edit(m)
            self.check_broken(f"manifest_{i}", "manifest.json", json.dumps(m), message, sign=False)
        self.check_broken("manifest_text", "manifest.json", "{", "manifest.json: not valid JSON", sign=False)
        self.check_broken("manifest_missing", "manifest.json", None, "manifest.json: missing", sign=False)
        run = self.broken_copy("no_checkpoint")
        shutil.rmtree(unit(run))
        self.refused(["eval", "--checkpoint", run], "holds no checkpoint", untouched=[run])
        self.refused(["train", "--resume", run, "--steps", "8"], "holds no run", untouched=[run])

    # ---- corpora ----

    def test_bad_corpora(self):
        small = ["--steps", "2", "--batch-size", "2", "--set", "embed_dim=4", "--set", "encoder_dim=4",
                 "--set", "decoder_dim=4", "--set", "attention_dim=4"]

        def corpus(name, data):
            path = self.path(name)
            with open(path, "wb") as f:
                f.write(data)
            return path

        good_lines = b"go .\tva !\nhi .\tsalut !\nrun !\tcours !\nwho ?\tqui ?\n"
        self.refused_new(["train", "--task", self.path("absent.tsv"), *small], "absent.tsv")
        self.refused_new(["train", "--task", corpus("empty.tsv", b""), *small], "empty.tsv")
        self.refused_new(["train", "--task", corpus("long.tsv", good_lines), "--max-length", "1", *small],
                         "dropped as longer than max_length 1")
        self.refused_new(["train", "--task", corpus("malformed.tsv", good_lines + b"no tab here\n"), *small],
                         "malformed.tsv:5")
        self.refused_new(["train", "--task", corpus("latin1.tsv", good_lines + b"caf\xe9 .\tcaf\xe9 !\n"), *small],
                         "not valid UTF-8")
        self.refused_new(["train", "--task", corpus("ok.tsv", good_lines), "--n-train", "10", *small],
                         "--n-train does not apply")
        odd_name = os.fsdecode(os.path.join(os.fsencode(self.tmp), b"caf\xe9.tsv"))
        with open(odd_name, "wb") as f:
            f.write(good_lines)
        self.refused_new(["train", "--task", odd_name, *small], "not valid UTF-8")
        os.makedirs(self.path("folder.tsv"), exist_ok=True)
        self.refused_new(["train", "--task", self.path("folder.tsv"), *small], "folder.tsv")

    # ---- outputs: never an input, never a file of a run, never through a link ----

    def write(self, name, data=b"mine\n"):
        path = self.path(name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def unchanged(self, path, data):
        with open(path, "rb") as f:
            self.assertEqual(f.read(), data, f"{path} was changed")

    def test_output_is_an_input(self):
        """An output that is a file the command reads, or a file of a run, is refused (even with --overwrite)."""
        weights = os.path.join(unit(self.good), "model.npz")
        for extra in ([], ["--overwrite"]):
            self.refused(["eval", "--checkpoint", self.good, "--predictions", weights, *extra],
                         ("--predictions " + weights, "a file of the run " + self.good))
            self.refused(["heatmap", "--checkpoint", self.good, "1 2", *extra, "--out",
                          os.path.join(unit(self.good), "config.json")], ("--out", "config.json", "a file of the run"))
            self.refused(["heatmap", "--checkpoint", self.good, "1 2", *extra, "--out",
                          os.path.join(self.good, "loss.svg")], ("--out", "loss.svg", "a file of the run"))
        # another name of the same file (a hard link) is found by its device and inode
        other_name = self.path("weights_link.npz")
        if not os.path.exists(other_name):
            os.link(weights, other_name)
        self.refused(["eval", "--checkpoint", self.good, "--predictions", other_name, "--overwrite"],
                     ("--predictions " + other_name, "is " + weights))
        # a new file inside the checkpoint would vanish at the next commit
        self.refused(["eval", "--checkpoint", self.good, "--predictions", os.path.join(unit(self.good), "p.tsv")],
                     ("--predictions", "inside the checkpoint folder"))
        # corpus gettext: the output may not be one of the catalogs it reads
        locale = self.path("locale_in")
        catalog = os.path.join(locale, "fr", "LC_MESSAGES", "a.mo")
        mo = write_mo_bytes([("Cannot open the file.", "Impossible d'ouvrir le fichier.")])
        self.write(os.path.relpath(catalog, self.tmp), mo)
        self.refused(["corpus", "gettext", "--locale-dir", locale, "--out", catalog, "--overwrite"],
                     ("--out " + catalog, "one of the catalogs it reads"), untouched=[locale])

    def test_output_exists(self):
        """A file the command did not make is replaced only with --overwrite."""
        mine = self.path("mine.tsv")
        data = b"my own notes\n"
        self.write("mine.tsv", data)
        self.refused(["eval", "--checkpoint", self.good, "--predictions", mine], ("--predictions " + mine, "exists", "--overwrite"))
        self.unchanged(mine, data)
        self.refused(["heatmap", "--checkpoint", self.good, "1 2", "--out", mine], ("--out " + mine, "exists"))
        self.refused(["graph", "--out", mine], ("--out " + mine, "exists"))
        self.unchanged(mine, data)
        status, out, err = attn("eval", "--checkpoint", self.good, "--predictions", mine, "--overwrite")
        self.assertEqual(status, 0, err)
        with open(mine, "rb") as f:
            self.assertEqual(f.read().count(b"\t"), 2 * 500)  # 500 held-out lines, 3 columns

    def test_links(self):
        """The lock file, the checkpoint's files and every output are never written through a symbolic link."""
        victim = self.path("victim.txt")
        data = b"not attn's\n"
        self.write("victim.txt", data)
        run = self.broken_copy("linked_lock")
        os.remove(os.path.join(run, "lock"))
        os.symlink(victim, os.path.join(run, "lock"))
        self.refused(["train", "--resume", run, "--steps", "6"], (run + "/lock", "symbolic link"), untouched=[run])
        self.refused(["train", *TINY, "--overwrite", "--out", run], (run + "/lock", "symbolic link"), untouched=[run])
        self.unchanged(victim, data)
        link = self.path("link.tsv")
        if not os.path.lexists(link):
            os.symlink(victim, link)
        for extra in ([], ["--overwrite"]):
            self.refused(["eval", "--checkpoint", self.good, "--predictions", link, *extra],
                         ("--predictions " + link, "symbolic link"))
            self.refused(["graph", "--out", link, *extra], ("--out " + link, "symbolic link"))
        self.unchanged(victim, data)
        dangling = self.path("dangling.svg")
        if not os.path.lexists(dangling):
            os.symlink(self.path("nowhere", "x.svg"), dangling)
        self.refused(["heatmap", "--checkpoint", self.good, "1 2", "--out", dangling], ("--out " + dangling, "symbolic link"))
        self.assertFalse(os.path.exists(self.path("nowhere")))

    # ---- control bytes in text files ----

    def test_control_bytes(self):
        small = ["--steps", "2", "--batch-size", "2", "--set", "embed_dim=4", "--set", "encoder_dim=4",
                 "--set", "decoder_dim=4", "--set", "attention_dim=4"]
        good_lines = b"go .\tva !\nhi .\tsalut !\nrun !\tcours !\nwho ?\tqui ?\n"
        for name, bad_line, cause in [("nul.tsv", b"wait\x00 .\tattends !\n", "NUL"),
                                      ("escape.tsv", b"wait .\tatt\x1b[31mends !\n", "0x1b"),
                                      ("bell.tsv", b"wait .\tattends !\x07\n", "0x07"),
                                      ("cr.tsv", b"wait .\rx\tattends !\n", "0x0d"),
                                      ("del.tsv", b"wait .\tattends\x7f !\n", "0x7f")]:
            first_two = b"".join(good_lines.splitlines(keepends=True)[:2])
            path = self.write(name, first_two + bad_line + good_lines[len(first_two):])
            self.refused_new(["train", "--task", path, *small], (name + ":3", cause))
        # with --skip-malformed, such a line is skipped and counted like any malformed line
        status, out, err = attn("train", "--task", path, "--skip-malformed", *small, "--out", self.path("skipped_run"))
        self.assertEqual(status, 0, err)
        self.assertIn("1 malformed lines skipped (the first: line 3)", out)
        # a Windows line end is no control byte
        crlf = self.write("crlf.tsv", good_lines.replace(b"\n", b"\r\n") * 2)
        status, out, err = attn("train", "--task", crlf, *small, "--out", self.path("crlf_run"))
        self.assertEqual(status, 0, err)
        # vocab.json and config.json of a checkpoint: file:line and the character
        vocab = read_part(self.good, "vocab.json").decode()
        lines = vocab.split("\n")
        at = next(i for i, line in enumerate(lines) if '"3"' in line)
        lines[at] = lines[at].replace('"3"', '"3\\u0000"')
        self.check_broken("vocab_nul", "vocab.json", "\n".join(lines), (f"vocab.json:{at + 1}", "NUL"))
        config = read_part(self.good, "config.json").decode()
        lines = config.split("\n")
        at = next(i for i, line in enumerate(lines) if '"reverse"' in line)
        lines[at] = lines[at].replace('"reverse"', '"rev\\u001berse"')
        self.check_broken("config_escape", "config.json", "\n".join(lines), (f"config.json:{at + 1}", "0x1b"))
        lines[at] = lines[at].replace('"rev\\u001berse"', '"reverse\\n"')
        self.check_broken("config_newline", "config.json", "\n".join(lines), (f"config.json:{at + 1}", "0x0a"))

    # ---- refusals that name their cause ----

    def test_damaged_catalogs(self):
        """A damaged .mo catalog is named with what is wrong; skipped with a warning when others are usable."""
        good = write_mo_bytes([("Cannot open the file.", "Impossible d'ouvrir le fichier."),
                               ("Save the file as", "Enregistrer le fichier sous")])
        huge = good[:8] + struct.pack("<I", 0x7FFFFFFF) + good[12:]
        past = good[:12] + struct.pack("<I", 0x10000000) + good[16:]
        damaged = {"truncated.mo": (good[:len(good) // 2], "runs past the end of the file"),
                   "short.mo": (good[:12], "too short for a .mo header"),
                   "garbage.mo": (bytes(range(7, 207)), "not a .mo file"),
                   "huge.mo": (huge, "2147483647 strings cannot fit"),
                   "offsets.mo": (past, "past the end of the file")}
        for name, (data, how) in damaged.items():
            locale = self.path("locale_" + name)
            path = self.write(os.path.join("locale_" + name, "fr", "LC_MESSAGES", name), data)
            out = self.path(name + ".tsv")
            self.refused(["corpus", "gettext", "--locale-dir", locale, "--out", out],
                         ("corpus gettext", "no usable catalog", path, "damaged", how), untouched=[locale])
            self.assertFalse(os.path.exists(out))
        mixed = self.path("locale_mixed")
        folder = os.path.join("locale_mixed", "fr", "LC_MESSAGES")
        self.write(os.path.join(folder, "good.mo"), good)
        for name, (data, how) in damaged.items():
            self.write(os.path.join(folder, name), data)
        out = self.path("mixed.tsv")
        status, stdout, err = attn("corpus", "gettext", "--locale-dir", mixed, "--min-words", "1", "--out", out)
        self.assertEqual(status, 0, err)
        for name, (data, how) in damaged.items():
            self.assertIn(f"warning: skipped the damaged catalog {mixed}/fr/LC_MESSAGES/{name}: ", err)
            self.assertIn(how, err)
        with open(out, "rb") as f:
            self.assertEqual(f.read().count(b"\n"), 2)

    def test_named_causes(self):
        locale = self.path("locale_lang")
        self.write(os.path.join("locale_lang", "fr", "LC_MESSAGES", "a.mo"),
                   write_mo_bytes([("Cannot open the file.", "Impossible d'ouvrir le fichier.")]))
        self.refused(["corpus", "gettext", "--locale-dir", locale, "--lang", "", "--out", self.path("x.tsv")],
                     ("--lang", "empty"))
        self.refused(["corpus", "gettext", "--locale-dir", locale, "--lang", "../fr", "--out", self.path("x.tsv")],
                     ("--lang '../fr'", "not a language name"))
        self.refused_new(["train", "--model", "conv", "--set", "kernel1=0"], ("--set kernel1=0", "kernel"))
        self.refused_new(["train", "--model", "conv", "--set", "kernel1=3", "--set", "kernel2=0"],
                         ("--set kernel2=0", "kernel"))
        self.refused_new(["train", *TINY, "--set", "model=luong"],
                         ("--set model=luong", "'model' cannot be set with --set", "--model luong"))
        weights = read_part(self.good, "model.npz")
        first = zipfile.ZipFile(io.BytesIO(weights)).namelist()[0]
        twice = io.BytesIO()
        with zipfile.ZipFile(twice, "w", zipfile.ZIP_STORED) as dst:
            src = zipfile.ZipFile(io.BytesIO(weights))
            for name in src.namelist():
                dst.writestr(name, src.read(name))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # zipfile warns of the duplicate name: that is the point
                dst.writestr(first, src.read(first))
        self.check_broken("weights_twice", "model.npz", twice.getvalue(),
                          ("model.npz", f"two members named '{first}'"))
        os.makedirs(self.path("folder2.tsv"), exist_ok=True)
        self.refused_new(["train", "--task", self.path("folder2.tsv"), "--steps", "2"],
                         (self.path("folder2.tsv"), "is a directory"))

    def test_grid_key_source(self):
        run = self.path("grid_run")
        shutil.rmtree(run, ignore_errors=True)
        status, out, err = attn("train", "--model", "grid", "--task", "grid", "--steps", "2", "--n-train", "20",
                                "--set", "embed_dim=4", "--set", "decoder_dim=4", "--set", "attention_dim=4",
                                "--out", run)
        self.assertEqual(status, 0, err)
        config = json.loads(read_part(run, "config.json"))
        for key, value in (("n_test", 0), ("feature_dim", 0), ("noise", -1)):
            copy = self.path("grid_" + key)
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(run, copy)
            edited = json.loads(json.dumps(config))
            edited["task"][key] = value
            write_part(copy, "config.json", json.dumps(edited, indent=2))
            self.refused(["eval", "--checkpoint", copy], (copy + "/checkpoint/config.json: task", f"key '{key}'"),
                         untouched=[copy])

    def test_full_disk(self):
        """No space left: the message says so, and no temporary file is left behind."""
        with common.full_disk(self, self.path("full_disk")) as disk:
            out = os.path.join(disk, "predictions.tsv")
            self.refused(["eval", "--checkpoint", self.good, "--predictions", out],
                         ("--predictions " + out, "no space left on the device"))
            self.assertEqual(os.listdir(disk), ["filler"])
            self.refused(["graph", "--out", os.path.join(disk, "graph.dot")], ("graph.dot", "no space left"))
            self.assertEqual(os.listdir(disk), ["filler"])


def write_mo_bytes(entries):
    """A .mo catalog (GNU gettext's format, little-endian) of (msgid, msgstr) pairs, with a UTF-8 header."""
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
    return struct.pack("<7I", 0x950412de, 0, n, originals, translations, 0, 0) + tables[0] + tables[1] + strings


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_bad_inputs.py PATH/TO/attn [unittest arguments]")
    common.ATTN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
