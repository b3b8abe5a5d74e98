#!/usr/bin/python3
"""A run survives being killed: SIGKILL at random moments of a short training that
commits a checkpoint at every step, many times over; after each kill the run must
load, and resuming it must reach exactly the weights of an uninterrupted run.
Also: a second process cannot write a run folder in use, and a run started with
--overwrite over an old one keeps the old checkpoint until its own first one.

    ATTN_KILL_COUNT=40 /usr/bin/python3 tests/cli/test_kill.py build/cli/attn

ATTN_KILL_COUNT (default 30) is the number of kills. Standard library only.
"""
import io
import json
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
import zipfile

import common
from common import TINY, attn, folder_digest, read_part

STEPS = 12  # the full run; every kill resumes towards it
ARGS = [*TINY, "--checkpoint-every", "1", "--eval-every", "0"]


def arrays(run):
    """The weights of a run, array by array (the .npz's own bytes hold file times)."""
    with zipfile.ZipFile(io.BytesIO(read_part(run, "model.npz"))) as z:
        return {name: z.read(name) for name in z.namelist()}


def start(*args):
    return subprocess.Popen([common.ATTN, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def stop(p):
    p.kill()
    p.communicate()


class Kill(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="attn_kill_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def ok(self, *args):
        status, out, err = attn(*args)
        self.assertEqual(status, 0, f"attn {' '.join(args)}: {err}")
        return out

    def test_kills_at_random_moments(self):
        kills = int(os.environ.get("ATTN_KILL_COUNT", "30"))
        rng = random.Random(int(os.environ.get("ATTN_KILL_SEED", "1")))
        whole = self.path("whole")
        self.ok("train", *ARGS, "--steps", str(STEPS), "--out", whole)
        reference = arrays(whole)
        base = self.path("base")  # two steps in: every attempt resumes from a real checkpoint
        self.ok("train", *ARGS, "--steps", "2", "--out", base)

        run = self.path("run")
        shutil.copytree(base, run)
        began = time.monotonic()
        self.ok("train", "--resume", run, "--steps", str(STEPS))
        duration = time.monotonic() - began  # of a whole resume, start to end
        self.assertEqual(arrays(run), reference)

        survived = finished = mid_commit = 0
        shutil.rmtree(run)
        shutil.copytree(base, run)
        while survived < kills:
            p = start("train", "--resume", run, "--steps", str(STEPS))
            time.sleep(rng.uniform(0, duration))
            p.send_signal(signal.SIGKILL)
            _, err = p.communicate()
            complete = p.returncode == 1 and b"already at step" in err  # the last kill came after the last commit
            if p.returncode != 0 and not complete:
                self.assertEqual(p.returncode, -signal.SIGKILL, err.decode(errors="replace"))
                survived += 1
                mid_commit += any(n.startswith("checkpoint.tmp.") for n in os.listdir(run))  # caught writing a unit
                # The run loads: its checkpoint is whole, the previous one or the new one.
                self.assertIn("  ->  ", self.ok("translate", "--checkpoint", run, "1 2 3"))
                if rng.random() < 0.6:
                    continue  # kill it again, from wherever it stands
                status, out, err = attn("train", "--resume", run, "--steps", str(STEPS))
                self.assertTrue(status == 0 or "already at step" in err, err)
            else:
                finished += 1  # it ended before its kill
            self.assertEqual(arrays(run), reference, "a resumed run differs from the uninterrupted one")
            shutil.rmtree(run)
            shutil.copytree(base, run)
        # The last killed run completes, and its writer's leftover temporary folders are gone.
        status, out, err = attn("train", "--resume", run, "--steps", str(STEPS))
        self.assertTrue(status == 0 or "already at step" in err, err)
        self.assertEqual(arrays(run), reference)
        plots = ("loss.svg", "lr.svg", "accuracy_by_length.svg")  # written by train at its end (temp + rename)
        leftovers = [n for n in os.listdir(run) if n not in ("checkpoint", "lock") + plots]
        print(f"\nkills survived: {survived}, {mid_commit} of them while a checkpoint was being written "
              f"({finished} runs ended before their kill)", file=sys.stderr)
        self.assertEqual(survived, kills)
        self.assertEqual(leftovers, [])

    def test_ctrl_c_commits_the_step_reached(self):
        """Ctrl-C (SIGINT) at random moments: the run commits a checkpoint at the step it reached, says
        which and the command that resumes it; resumed, it reaches the uninterrupted run's weights."""
        whole = self.path("sigint_whole")
        steps = 300  # long enough to be interrupted in its middle
        args = [*TINY, "--checkpoint-every", "0", "--eval-every", "0"]  # only Ctrl-C commits before the end
        began = time.monotonic()
        self.ok("train", *args, "--steps", str(steps), "--out", whole)
        duration = time.monotonic() - began
        reference = arrays(whole)
        rng = random.Random(int(os.environ.get("ATTN_KILL_SEED", "1")))
        stopped = 0
        for attempt in range(int(os.environ.get("ATTN_SIGINT_COUNT", "6"))):
            run = self.path(f"sigint_{attempt}")
            p = subprocess.Popen([common.ATTN, "train", *args, "--steps", str(steps), "--out", run],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
            # wait until training has begun (the data and model are made), then interrupt at a random moment
            deadline = time.monotonic() + 60
            line = ""
            while "training " not in line and time.monotonic() < deadline:
                line = p.stdout.readline()
            time.sleep(rng.uniform(0, duration / 2))
            p.send_signal(signal.SIGINT)
            out, err = p.communicate()
            if p.returncode == 0:
                continue  # it finished before the signal
            stopped += 1
            self.assertEqual(p.returncode, 130, err)
            m = re.search(r"stopped by Ctrl-C at step (\d+) of %d; the checkpoint in (\S+) holds step \1" % steps, err)
            self.assertIsNotNone(m, err)
            self.assertEqual(m.group(2), run)
            command = err.strip().split("\n")[-1].strip()
            self.assertEqual(command, f"{common.ATTN} train --resume {run}")
            self.assertIn("  ->  ", self.ok("translate", "--checkpoint", run, "1 2 3"))
            status, out, err = attn(*command.split(" ")[1:])
            self.assertEqual(status, 0, err)
            self.assertIn(f"resumed at step {m.group(1)}", out)
            self.assertEqual(arrays(run), reference, "a run resumed after Ctrl-C differs from the uninterrupted one")
        self.assertGreater(stopped, 0, "no attempt was interrupted before its end")

    def test_ctrl_c_grid_commits_the_step_reached(self):
        """Ctrl-C (SIGINT) at random moments of the grid captioner's training: the step under way finishes and
        a checkpoint the run resumes from is committed at it; attn says the step and the command that resumes
        the run (test_resume.py resumes such runs). (Before: killed by the signal with nothing committed, the
        first Ctrl-C seen up to 10 steps late; then a checkpoint that could not resume.)"""
        rng = random.Random(int(os.environ.get("ATTN_KILL_SEED", "1")))
        steps = 100000  # never reached: every attempt is interrupted
        for attempt in range(3):
            run = self.path(f"grid_sigint_{attempt}")
            status, out, err = common.interrupted(
                ["train", "--model", "grid", "--task", "grid", "--steps", str(steps), "--n-train", "100",
                 "--batch-size", "8", "--set", "embed_dim=8", "--set", "decoder_dim=8", "--set", "attention_dim=8",
                 "--seed", "3", "--out", run], rng.uniform(0, 2))
            self.assertEqual(status, 130, err)
            m = re.search(r"^attn: stopped by Ctrl-C at step (\d+) of %d; the checkpoint in (.+) holds step \1\. "
                          r"Resume it with:$" % steps, err, re.M)
            self.assertIsNotNone(m, err)
            self.assertEqual(m.group(2), run)
            self.assertEqual(err.strip().split("\n")[-1].strip(), f"{common.ATTN} train --resume {run}")
            config = json.loads(read_part(run, "config.json"))
            self.assertNotIn("stopped_at_step", config["train"])  # the trainer state says where it is
            self.assertIn("test grids: exact match", self.ok("eval", "--checkpoint", run))
            self.assertIn("  ->  ", self.ok("translate", "--checkpoint", run, "red square top left"))
            self.assertEqual(sorted(os.listdir(run)), ["checkpoint", "lock"])

    def test_a_killed_writers_plot_temporaries_are_removed(self):
        # A kill between writing a plot's temporary file and renaming it leaves ".loss.svg.tmp.PID.N";
        # the next writer of the run removes it (and only such files), as it removes checkpoint.tmp.*.
        run = self.path("plots")
        self.ok("train", *ARGS, "--steps", "2", "--out", run)
        left = [".loss.svg.tmp.999999.0", ".accuracy_by_length.svg.tmp.999999.3", "checkpoint.tmp.999999.1"]
        for name in left:
            with open(os.path.join(run, name), "w") as f:
                f.write("half a file")
        mine = os.path.join(run, ".notes.tmp.1.0")  # not attn's: kept
        with open(mine, "w") as f:
            f.write("a user's file")
        self.ok("train", "--resume", run, "--steps", "3")
        names = os.listdir(run)
        self.assertEqual([n for n in left if n in names], [])
        self.assertIn(".notes.tmp.1.0", names)

    def test_second_writer_is_refused(self):
        run = self.path("busy")
        p = start("train", *ARGS, "--steps", "100000", "--out", run)
        try:
            deadline = time.monotonic() + 60
            while not os.path.exists(os.path.join(run, "checkpoint")) and time.monotonic() < deadline:
                time.sleep(0.05)
            for args in (["train", *ARGS, "--steps", "5", "--overwrite", "--out", run],
                         ["train", "--resume", run, "--steps", "200000"]):
                status, out, err = attn(*args)
                common.check_failure(self, status, out, err, f"in use by another attn process (pid {p.pid}", args)
            self.assertIn("  ->  ", self.ok("translate", "--checkpoint", run, "1 2 3"))  # readers are welcome
        finally:
            stop(p)
        self.assertIn("  ->  ", self.ok("translate", "--checkpoint", run, "1 2 3"))

    def test_overwrite_keeps_the_old_run_until_the_first_checkpoint(self):
        run = self.path("old")
        self.ok("train", *ARGS, "--steps", "3", "--out", run)
        before = folder_digest(run)
        p = start("train", *TINY, "--checkpoint-every", "0", "--eval-every", "0", "--steps", "100000",
                  "--overwrite", "--out", run)
        time.sleep(0.5)
        stop(p)
        self.assertEqual(folder_digest(run, skip=("lock",)), before)
        self.assertIn("  ->  ", self.ok("translate", "--checkpoint", run, "1 2 3"))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_kill.py PATH/TO/attn [unittest arguments]")
    common.ATTN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
