#!/usr/bin/python3
"""Runs the chapter notebooks through the course's Jupyter kernel (xcpp17) with nbclient.

    tools/execute_notebooks.py notebooks/*.ipynb          run them, write outputs in place
    tools/execute_notebooks.py --out DIR notebooks/*.ipynb  run copies into DIR (CI)
    tools/execute_notebooks.py --check notebooks/*.ipynb  are the committed outputs fresh?

A run talks to the real kernel over the real protocol, exactly as Jupyter
Notebook does. Any cell that ends in an error fails the run (exit 1).

Freshness: each written notebook records in its metadata (`attn.source_hash`)
a hash of the library sources its outputs were made with and of its own code
cells. `--check` recomputes that hash from the checkout and fails when it
differs, or when a committed output holds an error: the outputs then come from
older code and must be regenerated with the first command.

Quotes: after a notebook is written in place, the numbers its markdown quotes
(<!--q name-->...<!--/q-->, tools/quotes.py) are filled from its new outputs;
a quote whose value the run did not publish fails the run.

Cells a learner is invited to edit carry `"attn": {"editable": true}` in their
metadata; `--rerun-editable` executes each of them a second time right after
the first, as a learner re-running an edited cell would, and fails on an error.
"""
import argparse
import hashlib
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL = "xcpp17"
# What a notebook's outputs depend on: the library, the notebook header, and
# the kernel's display API. Build files and tests are left out on purpose.
SOURCE_DIRS = ["core", "nn", "models", "viz", "data", "train", "eval", "decode", "io", "audio"]
SOURCE_FILES = ["attn.hpp", "notebooks/attn_notebook.hpp"]
SOURCE_EXT = (".hpp", ".cpp", ".h")


def library_files():
    files = [f for f in SOURCE_FILES if os.path.exists(os.path.join(ROOT, f))]
    for d in SOURCE_DIRS + ["kernel/include"]:
        top = os.path.join(ROOT, d)
        for dirpath, _, names in os.walk(top):
            for n in names:
                if n.endswith(SOURCE_EXT):
                    files.append(os.path.relpath(os.path.join(dirpath, n), ROOT))
    return sorted(files)


def library_hash():
    h = hashlib.sha256()
    for f in library_files():
        h.update(f.encode() + b"\0")
        with open(os.path.join(ROOT, f), "rb") as fh:
            h.update(fh.read())
        h.update(b"\0")
    return h.hexdigest()


def notebook_hash(nb, lib_hash):
    h = hashlib.sha256(lib_hash.encode())
    for cell in nb.cells:
        if cell.cell_type == "code":
            h.update(cell.source.encode() + b"\0")
    return h.hexdigest()[:16]


def errors_in(nb):
    bad = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                bad.append("cell %d: %s: %s" % (i, out.get("ename"), out.get("evalue", "")[:200]))
    return bad


def check(paths, lib_hash):
    import nbformat
    stale = 0
    for p in paths:
        nb = nbformat.read(p, as_version=4)
        want = notebook_hash(nb, lib_hash)
        have = nb.metadata.get("attn", {}).get("source_hash")
        problems = errors_in(nb)
        if have != want:
            problems.insert(0, "outputs made at source hash %s, the checkout is at %s" % (have, want))
        if problems:
            stale += 1
            print("%s: STALE" % p)
            for line in problems:
                print("    " + line)
        else:
            print("%s: fresh (%s)" % (p, want))
    if stale:
        print("%d of %d notebooks are stale: regenerate them with tools/execute_notebooks.py %s"
              % (stale, len(paths), " ".join(paths)))
    return stale == 0


def execute(path, out_path, lib_hash, timeout, rerun_editable, log=None):
    """Runs one notebook through the kernel; returns (failures, seconds, reruns). Progress
    lines go to log (a list, when notebooks run side by side) or straight to stdout."""
    def say(line):
        if log is None:
            print(line, flush=True)
        else:
            log.append(line)

    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, DeadKernelError

    nb = nbformat.read(path, as_version=4)
    nb.metadata.setdefault("attn", {})
    client = NotebookClient(nb, timeout=timeout, kernel_name=KERNEL, allow_errors=True,
                            resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}})
    start = time.time()
    failures = []
    reruns = 0
    with client.setup_kernel():
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            t0 = time.time()
            try:
                client.execute_cell(cell, i)
            except CellExecutionError as e:  # only with allow_errors=False; kept for safety
                failures.append("cell %d: %s" % (i, str(e)[:300]))
            except DeadKernelError:
                failures.append("cell %d: the kernel died" % i)
                break
            if errors_in_cell(cell):
                failures.append("cell %d: %s" % (i, errors_in_cell(cell)))
                break  # later cells depend on this one: stop like "Run All" would
            if rerun_editable and cell.metadata.get("attn", {}).get("editable"):
                reruns += 1
                try:
                    client.execute_cell(cell, i)
                except DeadKernelError:
                    failures.append("cell %d (run a second time): the kernel died" % i)
                    break
                if errors_in_cell(cell):
                    failures.append("cell %d (run a second time): %s" % (i, errors_in_cell(cell)))
                    break
            say("  cell %3d  %6.2f s" % (i, time.time() - t0))
    seconds = time.time() - start
    nb.metadata["attn"]["source_hash"] = notebook_hash(nb, lib_hash)
    nb.metadata["attn"]["run_seconds"] = round(seconds, 1)
    for cell in nb.cells:  # nbclient's per-cell timestamps would make every run differ
        cell.metadata.pop("execution", None)
    nbformat.write(nb, out_path)
    return failures, seconds, reruns


def execute_logged(args):
    """execute() in a worker process: its progress lines come back with its result, and an
    exception (a kernel that would not start, a cell past its timeout) as its failure."""
    log = []
    start = time.time()
    try:
        failures, seconds, reruns = execute(*args, log=log)
    except Exception as e:  # noqa: BLE001 - reported as this notebook's failure, the others go on
        failures, seconds, reruns = ["%s: %s" % (type(e).__name__, str(e)[:500])], time.time() - start, 0
    return failures, seconds, reruns, log


def errors_in_cell(cell):
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return "%s: %s" % (out.get("ename"), out.get("evalue", "")[:300])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="+")
    ap.add_argument("--check", action="store_true", help="only check that committed outputs are fresh")
    ap.add_argument("--out", help="write executed copies into this folder instead of in place")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per cell (default 1800)")
    ap.add_argument("--rerun-editable", action="store_true",
                    help="execute each cell marked editable twice in a row")
    ap.add_argument("--jobs", type=int, default=1,
                    help="notebooks run side by side, each with a kernel of its own (only with --out: "
                         "timings measured side by side are not for publishing)")
    args = ap.parse_args()
    if args.jobs > 1 and not args.out:
        ap.error("--jobs needs --out: the outputs committed in place are measured one notebook at a time")
    lib_hash = library_hash()
    if args.check:
        sys.exit(0 if check(args.notebooks, lib_hash) else 1)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    total = time.time()
    runs = [(p, os.path.join(args.out, os.path.basename(p)) if args.out else p) for p in args.notebooks]
    pool = None
    if args.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor
        pool = ProcessPoolExecutor(max_workers=args.jobs)
        results = pool.map(execute_logged, [(p, out, lib_hash, args.timeout, args.rerun_editable) for p, out in runs])
    else:
        results = (None for _ in runs)
    try:
        failed = report(args, runs, results, lib_hash)
    except KeyboardInterrupt:
        if pool:
            pool.shutdown(wait=False, cancel_futures=True)  # the notebooks not started yet are not started
        raise
    if pool:
        pool.shutdown()
    print("%d notebooks, %d failed, %.1f s" % (len(args.notebooks), failed, time.time() - total))
    sys.exit(1 if failed else 0)


def report(args, runs, results, lib_hash):
    """Prints each notebook's progress and result in the order given; returns how many failed."""
    failed = 0
    for (p, out), result in zip(runs, results):
        print("%s:" % p, flush=True)
        if result is None:
            failures, seconds, reruns = execute(p, out, lib_hash, args.timeout, args.rerun_editable)
        else:
            failures, seconds, reruns, log = result
            print("\n".join(log), flush=True)
        if not args.out:
            # The notebook's own prose quotes its new outputs (tools/quotes.py); pages and
            # other notebooks follow with `tools/quotes.py --write`.
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            import quotes
            for problem in quotes.fill_notebook(os.path.abspath(p)):
                print("    quote: " + problem)
                failures.append(problem)
        extra = ", %d editable cells run twice" % reruns if args.rerun_editable else ""
        print("%s: %s in %.1f s%s" % (p, "FAILED" if failures else "ok", seconds, extra), flush=True)
        for f in failures:
            print("    " + f)
        failed += bool(failures)
    return failed


if __name__ == "__main__":
    main()
