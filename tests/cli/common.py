"""What the command-line tests share: running attn, checking its failures, and
reading or editing a run folder's checkpoint (cli/run_dir.hpp) as a user could.
Standard library only."""
import atexit
import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

ATTN = None  # the executable, set by each test file from its command line

# The runs a test makes are listed in the user's run list (cli/output.hpp): a scratch one per test process,
# removed at its end, so that no test reads or writes the list of whoever runs the tests.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="attn_state_")
atexit.register(shutil.rmtree, os.environ["XDG_STATE_HOME"], True)

# A Bahdanau model with 8 units everywhere learns nothing in 20 steps, but it
# exercises every file and code path in a fraction of a second.
TINY = ["--set", "embed_dim=8", "--set", "encoder_dim=8", "--set", "decoder_dim=8", "--set", "attention_dim=8",
        "--task", "reverse", "--max-length", "6", "--n-train", "200", "--batch-size", "8", "--seed", "3"]


def attn(*args, cwd=None, timeout=120):
    """Runs attn; returns (exit status, stdout, stderr)."""
    p = subprocess.run([ATTN, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, errors="replace", timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def interrupted(args, delay, ready="training ", timeout=600):
    """Runs attn, waits until a line of its standard output holds `ready` (training has begun: the data
    and the model are made), then `delay` seconds more, and sends it SIGINT, as Ctrl-C does; returns
    (exit status, stdout, stderr) once it has ended."""
    p = subprocess.Popen([ATTN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                         errors="replace")
    lines = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        lines.append(line)
        if not line or ready in line:
            break
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=timeout)
    return p.returncode, "".join(lines) + out, err


def unit(run):
    """The checkpoint folder of a run folder."""
    return os.path.join(run, "checkpoint")


def fnv1a64(data):
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def write_part(run, name, data, sign=True):
    """Replaces a file of the run's checkpoint; with `sign`, records it in manifest.json
    as attn would, so that the check that follows is the content's, not the manifest's."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(unit(run), name), "wb") as f:
        f.write(data)
    if sign:
        path = os.path.join(unit(run), "manifest.json")
        with open(path) as f:
            manifest = json.load(f)
        manifest["files"][name] = {"bytes": len(data), "fnv1a64": fnv1a64(data)}
        with open(path, "w") as f:
            json.dump(manifest, f, indent=2)


def read_part(run, name):
    with open(os.path.join(unit(run), name), "rb") as f:
        return f.read()


def folder_digest(path, skip=("lock",)):
    """{relative path: sha256} of every file under `path` (the lock file aside: it is not part of the run)."""
    digest = {}
    for root, dirs, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, path)
            if rel in skip:
                continue
            with open(full, "rb") as f:
                digest[rel] = hashlib.sha256(f.read()).hexdigest()
        for name in dirs:
            digest[os.path.relpath(os.path.join(root, name), path) + "/"] = "dir"
    return digest


def check_quiet_success(test, *args):
    """attn succeeds without a word on stderr; returns its stdout."""
    status, out, err = attn(*args)
    test.assertEqual(status, 0, f"attn {' '.join(args)} failed: {err}")
    test.assertEqual(err, "", f"attn {' '.join(args)}")
    return out


def check_failure(test, status, out, err, message, args=()):
    """attn failed cleanly: a non-zero status (not a signal), exactly one line of error naming
    `message` (a string, or a tuple of strings that must all appear)."""
    shown = " ".join(args)
    test.assertNotEqual(status, 0, f"attn {shown} succeeded:\n{out}")
    test.assertGreater(status, 0, f"attn {shown} was killed by signal {-status}: {err}")
    test.assertLess(status, 128, f"attn {shown} crashed: {err}")
    for bad in ("terminate called", "Aborted", "Segmentation", "what():", "Traceback", "json.exception",
                "std::bad_alloc", "basic_string"):
        test.assertNotIn(bad, err, f"attn {shown}: raw library error")
    lines = err.strip().split("\n")
    test.assertEqual(len(lines), 1, f"attn {shown}: expected one line of error, got:\n{err}")
    test.assertTrue(lines[0].startswith("attn: error: "), lines[0])
    for part in (message,) if isinstance(message, str) else message:
        test.assertIn(part, lines[0], f"attn {shown}")
    return lines[0]


class ScratchTest(unittest.TestCase):
    """A test class whose runs live in a scratch folder cls.tmp (made by its setUpClass), removed
    after its last test; ok() and fails() as check_quiet_success and check_failure say."""
    tmp = None

    @classmethod
    def tearDownClass(cls):
        if cls.tmp:
            shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def path(cls, *parts):
        return os.path.join(cls.tmp, *parts)

    def ok(self, *args):
        return check_quiet_success(self, *args)

    def fails(self, *args, message):
        status, out, err = attn(*args)
        return check_failure(self, status, out, err, message, args)


@contextlib.contextmanager
def full_disk(test, folder):
    """A 16 kB tmpfs mounted on `folder` and filled to its last byte by a file "filler": a disk with no space
    left, for the duration of the `with`. The test is skipped where it cannot be mounted (not root)."""
    os.makedirs(folder, exist_ok=True)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", folder],
                      stderr=subprocess.DEVNULL).returncode != 0:
        test.skipTest("cannot mount a small tmpfs (not root?)")
    try:
        try:
            with open(os.path.join(folder, "filler"), "wb") as f:
                for _ in range(64):
                    f.write(b"x" * 1024)
                    f.flush()
        except OSError:
            pass
        yield folder
    finally:
        subprocess.run(["umount", folder])
