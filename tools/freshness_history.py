#!/usr/bin/python3
"""Checks the freshness rule (tools/freshness.py) against the course's own history.

    tools/freshness_history.py [--since REV]          the re-runs since REV (default: quotes landed)
    tools/freshness_history.py --commits REV...       what each commit would make stale, old rule and new

For every committed notebook, each pair of consecutive versions in git whose outputs were
re-made (their `attn.source_hash` differs) is one re-run. For each, the library each version's
outputs were made with is found (the commit whose sources give its source_hash), and the
deterministic values it publishes (quotes that are not timings) are compared. A re-run whose
values moved must be one the new rule calls stale between those two libraries: its code cells
changed, or a file it uses (its `attn.uses` today) changed as the compiler sees it. A re-run
whose values moved while the rule calls it fresh is a miss of the rule, listed with its values.
Values that moved with the very same library and cells moved because the machine changed.
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import freshness  # noqa: E402
import quotes  # noqa: E402

ROOT = freshness.ROOT
QUOTES_LANDED = "3f5cc6a"  # tools/quotes.py and the first published values
# Quotes of times and of what follows from times: they move with the machine's load.
TIMING = re.compile(r"(^|[._])(ms|us|s|sec|seconds|minutes|min_s|time|times|speed|speedup|faster|slower|"
                    r"tokens_per_s|per_s|per_second|throughput|wall|elapsed|budget_s)([._]|$)|"
                    r"(_s|_ms|_us|_seconds|_minutes|_time|time_ratio|time_growth|_per_s|_speedup|_faster)$|"
                    r"(^|[._])(timing|time|timeit|bench)")


def git(*args, text=True):
    return subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True, text=text, check=True).stdout


class Blobs:
    """Reads files at revisions through one `git cat-file --batch`."""

    def __init__(self):
        self.proc = subprocess.Popen(["git", "-C", ROOT, "cat-file", "--batch"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)
        self.cache = {}

    def read(self, rev, path):
        key = (rev, path)
        if key not in self.cache:
            self.proc.stdin.write(("%s:%s\n" % (rev, path)).encode())
            self.proc.stdin.flush()
            header = self.proc.stdout.readline().decode().split()
            if len(header) < 3 or header[1] == "missing":
                self.cache[key] = None
            else:
                size = int(header[2])
                data = self.proc.stdout.read(size)
                self.proc.stdout.read(1)
                self.cache[key] = data
        return self.cache[key]


def library_files_at(rev):
    names = git("ls-tree", "-r", "--name-only", rev).splitlines()
    return sorted(n for n in names if freshness.is_library_source(n))


def strict_library_hash(blobs, rev):
    """tools/execute_notebooks.py's library_hash at a revision."""
    h = hashlib.sha256()
    for f in library_files_at(rev):
        h.update(f.encode() + b"\0")
        h.update(blobs.read(rev, f) or b"")
        h.update(b"\0")
    return h.hexdigest()


def strict_notebook_hash(lib_hash, cells):
    h = hashlib.sha256(lib_hash.encode())
    for source in cells:
        h.update(source.encode() + b"\0")
    return h.hexdigest()[:16]


def code_cells(nb):
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in nb["cells"] if c["cell_type"] == "code"]


# A cell that reads a clock: what it publishes (a time, a ratio of times, a growth of times) moves
# with the machine's load, whatever its name.
CLOCK = re.compile(r"steady_clock|high_resolution_clock|system_clock|chrono::|\bseconds_of\b|\bms_since\b|"
                   r"\w+_ms\b|\bms\b|\w*_seconds\b|\bseconds\b|ms_per_\w+|\btime_\w+\(|\btime\(|timeit|best_of")
# Re-runs the course made on a new machine say so in their commit message: every value that
# depends on the CPU's rounding moved there, used files or not (docs/quotes.md).
NEW_MACHINE = re.compile(r"re-run on this machine|re-ran on this machine|on this machine")


DEFINES = re.compile(r"\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*(?:const\s*)?\{")


def clock_cells(nb):
    """The code cells that read a clock, or call a function a clock cell defined (a timing helper)."""
    sources = {i: "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
               for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"}
    timed = {i for i, src in sources.items() if CLOCK.search(src)}
    while True:
        helpers = {name for i in timed for name in DEFINES.findall(sources[i])
                   if name not in ("if", "for", "while", "switch", "catch", "main")}
        more = {i for i, src in sources.items() if i not in timed and
                any(re.search(r"\b%s\s*\(" % re.escape(h), src) for h in helpers)}
        if not more:
            return timed
        timed |= more


def deterministic_values(path, nb):
    clock = clock_cells(nb)
    return {name: text for name, (text, cell) in quotes.published(path, nb).items()
            if not TIMING.search(name) and cell not in clock}


def history(since):
    blobs = Blobs()
    commits = git("rev-list", "--reverse", "--first-parent", "%s~60..HEAD" % since).split()
    # A version's library is looked for among the commits before it (re-runs follow their change).
    lib_hashes = {c: strict_library_hash(blobs, c) for c in commits}
    order = {c: i for i, c in enumerate(commits)}
    in_range = set(git("rev-list", "%s..HEAD" % since).split())
    paths = sorted(p for p in git("ls-files", "notebooks").splitlines()
                   if re.match(r"notebooks/(solutions/)?\d\d_.*\.ipynb$", p))
    totals = {"reruns": 0, "moved": 0, "moved_stale": 0, "misses": 0, "machine": 0, "unknown_library": 0}
    for path in paths:
        with open(os.path.join(ROOT, path)) as f:
            uses = json.load(f)["metadata"].get("attn", {}).get("uses")
        if uses is None:
            print("%s: records no usage; skipped" % path)
            continue
        revs = [c for c in git("rev-list", "--reverse", "--first-parent", "%s^..HEAD" % since, "--", path).split()]
        versions = []
        for c in revs:
            data = blobs.read(c, path)
            if data is None:
                continue
            nb = json.loads(data)
            h = nb["metadata"].get("attn", {}).get("source_hash")
            if versions and versions[-1][2] == h:
                continue
            versions.append((c, nb, h))
        for (ca, a, ha), (cb, b, hb) in zip(versions, versions[1:]):
            if cb not in in_range:
                continue
            totals["reruns"] += 1
            made = []
            for c, nb, h in ((ca, a, ha), (cb, b, hb)):
                cells = code_cells(nb)
                start = order.get(c, len(commits) - 1)
                found = next((m for m in reversed(commits[:start + 1])
                              if strict_notebook_hash(lib_hashes[m], cells) == h), None)
                made.append(found)
            va, vb = deterministic_values(path, a), deterministic_values(path, b)
            moved = sorted(n for n in va.keys() & vb.keys() if va[n] != vb[n])
            if not moved:
                continue
            totals["moved"] += 1
            if None in made:
                totals["unknown_library"] += 1
                print("%s %s..%s: outputs made at a library not found in history; %d values moved"
                      % (path, ca[:7], cb[:7], len(moved)))
                continue
            ma, mb = made
            cells_changed = code_cells(a) != code_cells(b)
            files = [rel for rel in uses
                     if freshness.file_hash(rel, lambda r: blobs.read(ma, r)) !=
                     freshness.file_hash(rel, lambda r: blobs.read(mb, r))]
            if cells_changed or files:
                totals["moved_stale"] += 1
                continue
            machine = [c for c in git("rev-list", "%s..%s" % (ma, cb)).split()
                       if NEW_MACHINE.search(git("log", "-1", "--format=%B", c))]
            if lib_hashes[ma] == lib_hashes[mb] or machine:
                totals["machine"] += 1
                why = ("at the same library and cells" if lib_hashes[ma] == lib_hashes[mb] else
                       "in a re-run on a new machine (%s), no used file changed" % machine[0][:7])
                print("%s %s..%s: %d values moved %s: %s"
                      % (path, ca[:7], cb[:7], len(moved), why, ", ".join(moved[:6])))
                continue
            totals["misses"] += 1
            print("MISS %s re-run %s..%s (library %s..%s): the rule calls it fresh, %d values moved: %s"
                  % (path, ca[:7], cb[:7], ma[:7], mb[:7], len(moved),
                     ", ".join("%s %s -> %s" % (n, va[n], vb[n]) for n in moved[:8])))
    print("re-runs since %s: %d; with deterministic values moved: %d, of which the new rule calls stale: %d, "
          "moved at the same library or across a new machine: %d, library not found: %d; misses of the rule: %d"
          % (since, totals["reruns"], totals["moved"], totals["moved_stale"], totals["machine"],
             totals["unknown_library"], totals["misses"]))
    return totals["misses"]


def commit_costs(revs):
    """For each commit: notebooks it makes stale under the old rule and the new, and their re-run time."""
    blobs = Blobs()
    paths = sorted(p for p in git("ls-files", "notebooks").splitlines()
                   if re.match(r"notebooks/(solutions/)?\d\d_.*\.ipynb$", p))
    nbs = {}
    for p in paths:
        with open(os.path.join(ROOT, p)) as f:
            nbs[p] = json.load(f)["metadata"].get("attn", {})
    for rev in revs:
        parent = rev + "^"
        lib_changed = [f for f in sorted(set(library_files_at(rev)) | set(library_files_at(parent)))
                       if blobs.read(rev, f) != blobs.read(parent, f)]
        code_changed = [f for f in lib_changed if freshness.file_hash(f, lambda x: blobs.read(rev, x)) !=
                        freshness.file_hash(f, lambda x: blobs.read(parent, x))]
        old = paths if lib_changed else []
        new = [p for p in paths if nbs[p].get("uses") is not None and any(
            freshness.file_hash(r, lambda x: blobs.read(rev, x)) != freshness.file_hash(r, lambda x: blobs.read(parent, x))
            for r in nbs[p]["uses"])]
        seconds = lambda ps: sum(nbs[p].get("run_seconds", 0) for p in ps)  # noqa: E731
        subject = git("log", "-1", "--format=%h %s", rev).strip()
        print("%s\n    library files changed: %s; in code: %s\n    old rule: %d stale, %.0f min to re-run; new rule: %d stale, "
              "%.0f min: %s" % (subject[:140], ", ".join(lib_changed) or "none", ", ".join(code_changed) or "none",
                                len(old), seconds(old) / 60,
                                len(new), seconds(new) / 60, ", ".join(os.path.basename(p) for p in new) or "none"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--since", default=QUOTES_LANDED)
    ap.add_argument("--commits", nargs="+", metavar="REV")
    args = ap.parse_args()
    if subprocess.run(["git", "-C", ROOT, "rev-parse", "--verify", "-q", args.since + "^{commit}"],
                      capture_output=True).returncode != 0:
        print("freshness_history: %s is not in this checkout's history (a shallow clone?); skipped" % args.since)
        return 77  # meson's code for a skipped test
    if args.commits:
        commit_costs(args.commits)
        return 0
    return 1 if history(args.since) else 0


if __name__ == "__main__":
    sys.exit(main())
