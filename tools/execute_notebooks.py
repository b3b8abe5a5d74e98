#!/usr/bin/python3
"""Runs the chapter notebooks through the course's Jupyter kernel (xcpp17) with nbclient.

    tools/execute_notebooks.py notebooks/*.ipynb          run them, write outputs in place
    tools/execute_notebooks.py --out DIR notebooks/*.ipynb  run copies into DIR (CI)
    tools/execute_notebooks.py --check notebooks/*.ipynb  are the committed outputs fresh?

A run talks to the real kernel over the real protocol, exactly as Jupyter
Notebook does. Any cell that ends in an error fails the run (exit 1).

Freshness (docs/notebooks.md): a notebook is stale when something its outputs were made with
changed: its own code cells, or a file its run used. A run that writes notebooks in place
records what it used (`attn.uses` in the notebook's metadata, tools/freshness.py): the kernel
reports the declarations and the libattn symbols each cell's code referred to, strace the data
files the run read; each used file is kept with its hash, sources hashed as the compiler sees
them (comments and whitespace left out).

    tools/execute_notebooks.py --check notebooks/*.ipynb           fresh by what each one uses?
    tools/execute_notebooks.py --check --strict notebooks/*.ipynb  fresh by every library byte (a release)
    tools/execute_notebooks.py --stale notebooks/*.ipynb           list the stale ones, each with the file
    tools/execute_notebooks.py --rerun-stale notebooks/*.ipynb     re-run just those, in place

`--check` also fails when a committed output holds an error. `--strict` is the older rule: one
hash of every library source byte and the notebook's code cells (`attn.source_hash`).

Quotes: after a notebook is written in place, the numbers its markdown quotes
(<!--q name-->...<!--/q-->, tools/quotes.py) are filled from its new outputs;
a quote whose value the run did not publish fails the run.

Cells a learner is invited to edit carry `"attn": {"editable": true}` in their
metadata; `--rerun-editable` executes each of them a second time right after
the first, as a learner re-running an edited cell would, and fails on an error.
"""
import argparse
import hashlib
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import freshness  # noqa: E402

KERNEL = "xcpp17"
BUILD = os.path.join(ROOT, "build")


def library_files():
    """Every library source a notebook could use (the strict rule's list: freshness.py's)."""
    files = [f for f in freshness.SOURCE_FILES if os.path.exists(os.path.join(ROOT, f))]
    for d in freshness.SOURCE_DIRS:
        top = os.path.join(ROOT, d)
        for dirpath, _, names in os.walk(top):
            for n in names:
                if n.endswith(freshness.SOURCE_EXT):
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


def why_stale(nb, lib_hash, strict):
    """The reasons a notebook's committed outputs are stale ([] when fresh): its code cells or a
    file it used changed (strict: any library byte), or an output holds an error."""
    meta = nb.metadata.get("attn", {})
    problems = []
    uses = meta.get("uses")
    if strict or uses is None:
        want = notebook_hash(nb, lib_hash)
        if meta.get("source_hash") != want:
            rule = "" if strict else " (it records no usage: the strict rule applies)"
            problems.append("outputs made at source hash %s, the checkout is at %s%s"
                            % (meta.get("source_hash"), want, rule))
    else:
        if meta.get("cells_hash") != freshness.cells_hash(nb):
            problems.append("its code cells changed since its outputs were made")
        for rel, how in freshness.changed(uses):
            problems.append("%s %s" % (rel, how))
    return problems + errors_in(nb)


def check(paths, lib_hash, strict=False, listing=False):
    """Prints each notebook's freshness; returns the stale ones. listing: only the stale ones
    are printed, each with every file that made it stale."""
    import nbformat
    stale = []
    for p in paths:
        nb = nbformat.read(p, as_version=4)
        problems = why_stale(nb, lib_hash, strict)
        if problems:
            stale.append(p)
            print("%s: STALE" % p)
            for line in problems:
                print("    " + line)
        elif not listing:
            uses = nb.metadata.get("attn", {}).get("uses")
            how = "every library byte" if strict or uses is None else "%d files it uses" % len(uses)
            print("%s: fresh (%s)" % (p, how))
    if stale and not listing:
        print("%d of %d notebooks are stale: regenerate them with tools/execute_notebooks.py --rerun-stale %s"
              % (len(stale), len(paths), " ".join(paths)))
    if listing:
        print("%d of %d notebooks are stale" % (len(stale), len(paths)))
    return stale


def usage_kernel(workdir):
    """A kernelspec of its own for one recorded run: the course's kernel under strace (the files
    the run reads), with ATTN_KERNEL_USAGE set (what its cells' code refers to). Returns its name
    and the two logs."""
    import shutil
    from jupyter_client.kernelspec import KernelSpecManager
    strace = shutil.which("strace")
    if not strace:
        raise RuntimeError("strace is needed to record the files a notebook reads: tools/setup.sh --with-kernel "
                           "installs it")
    spec = KernelSpecManager().get_kernel_spec(KERNEL)
    name = "xcpp17-usage-%d" % os.getpid()
    usage_log = os.path.join(workdir, "usage.jsonl")
    strace_log = os.path.join(workdir, "strace.log")
    # seccomp-bpf: the kernel stops only at the calls traced, so its cells run at full speed.
    argv = [strace, "-f", "-qq", "--seccomp-bpf", "-e", "trace=open,openat,rename,renameat,renameat2",
            "-e", "status=successful", "-o", strace_log] + spec.argv
    kdir = os.path.join(workdir, "kernels", name)
    os.makedirs(kdir)
    with open(os.path.join(kdir, "kernel.json"), "w") as f:
        json.dump({"argv": argv, "display_name": spec.display_name, "language": spec.language,
                   "env": dict(spec.env or {}, ATTN_KERNEL_USAGE=usage_log),
                   "interrupt_mode": spec.interrupt_mode}, f)
    os.environ["JUPYTER_PATH"] = workdir + os.pathsep + os.environ.get("JUPYTER_PATH", "")
    return name, usage_log, strace_log


def execute(path, out_path, lib_hash, timeout, rerun_editable, record=False, log=None):
    """Runs one notebook through the kernel; returns (failures, seconds, reruns). Progress
    lines go to log (a list, when notebooks run side by side) or straight to stdout.
    record: the run records what it used (usage_kernel) into the notebook's metadata."""
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
    kernel_name, workdir = KERNEL, None
    if record:
        import tempfile
        workdir = tempfile.mkdtemp(prefix="attn-usage-")
        kernel_name, usage_log, strace_log = usage_kernel(workdir)
    client = NotebookClient(nb, timeout=timeout, kernel_name=kernel_name, allow_errors=True,
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
    if record:
        import shutil
        cwd = os.path.dirname(os.path.abspath(path))
        nb.metadata["attn"]["cells_hash"] = freshness.cells_hash(nb)
        nb.metadata["attn"]["uses"] = freshness.resolve(nb, usage_log, strace_log, cwd, BUILD)
        nb.metadata["attn"]["uses_scale"] = float(os.environ.get("ATTN_NOTEBOOK_SCALE", "1"))
        shutil.rmtree(workdir, ignore_errors=True)
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


_LIB_AT = {}  # revision -> the strict rule's library hash there
_BLOBS = []


def _blobs():
    import freshness_history
    if not _BLOBS:
        _BLOBS.append(freshness_history.Blobs())
    return _BLOBS[0]


def made_at(nb, lib_hash):
    """The revision whose library sources the notebook's outputs were made with (the strict rule's
    source_hash): "the work tree", a commit of main's recent history, or None."""
    import freshness_history
    if nb.metadata.get("attn", {}).get("source_hash") == notebook_hash(nb, lib_hash):
        return "the work tree"
    cells = [c.source for c in nb.cells if c.cell_type == "code"]
    for rev in freshness_history.git("rev-list", "--first-parent", "-60", "HEAD").split():
        if rev not in _LIB_AT:
            _LIB_AT[rev] = freshness_history.strict_library_hash(_blobs(), rev)
        lib = _LIB_AT[rev]
        if freshness_history.strict_notebook_hash(lib, cells) == nb.metadata["attn"].get("source_hash"):
            return rev
    return None


def adopt_usage(paths, recorded_dir, lib_hash):
    """Gives committed notebooks the usage recorded by a run of their copies (--out DIR
    --record-usage): what a run uses does not depend on its size, since the kernel reports what
    the cells' code refers to, not what it ran. A notebook takes it only when its outputs were
    made at a known library (the strict rule's hash matches the work tree or a recent commit),
    no file the copy's run used has changed since then, and the copy ran the same cells."""
    import freshness_history
    import nbformat
    refused = 0
    for p in paths:
        nb = nbformat.read(p, as_version=4)
        copy_path = os.path.join(recorded_dir, os.path.basename(p))
        problems = errors_in(nb)
        rev = made_at(nb, lib_hash)
        if rev is None:
            problems.append("its outputs were made at a library not found in the last 60 commits")
        copy = nbformat.read(copy_path, as_version=4) if os.path.exists(copy_path) else None
        if copy is None or "uses" not in copy.metadata.get("attn", {}):
            problems.append("%s records no usage (run it with --out %s --record-usage)" % (copy_path, recorded_dir))
        elif copy.metadata["attn"].get("cells_hash") != freshness.cells_hash(nb):
            problems.append("%s ran other code cells" % copy_path)
        if problems:
            refused += 1
            print("%s: not adopted: %s" % (p, "; ".join(problems)))
            continue
        uses = freshness.reclose(copy.metadata["attn"]["uses"], BUILD)
        moved = freshness.changed(uses)
        if rev != "the work tree":
            blobs = _blobs()
            moved += [(rel, "changed since %s" % rev[:7]) for rel in uses
                      if freshness.file_hash(rel, lambda r: blobs.read(rev, r)) != freshness.file_hash(rel)
                      and not rel.startswith(tuple(freshness.GENERATED))]
        if moved:
            refused += 1
            print("%s: not adopted: files it uses changed since its outputs were made: %s" % (p, moved))
            continue
        nb.metadata["attn"]["cells_hash"] = copy.metadata["attn"]["cells_hash"]
        nb.metadata["attn"]["uses"] = uses
        nb.metadata["attn"]["uses_scale"] = copy.metadata["attn"]["uses_scale"]
        nbformat.write(nb, p)
        print("%s: uses %d files (outputs made at %s)" % (p, len(uses), rev if rev == "the work tree" else rev[:7]))
    return refused == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="+")
    ap.add_argument("--check", action="store_true", help="only check that committed outputs are fresh")
    ap.add_argument("--strict", action="store_true",
                    help="with --check or --stale: stale when any library byte changed (for a release)")
    ap.add_argument("--stale", action="store_true", help="list the stale notebooks, each with what made it stale")
    ap.add_argument("--rerun-stale", action="store_true",
                    help="re-run the stale notebooks in place (timing notebooks alone, the others two at a "
                         "time), fill their quotes and figures, and list the published values that moved")
    ap.add_argument("--out", help="write executed copies into this folder instead of in place")
    ap.add_argument("--record-usage", action="store_true",
                    help="with --out: record what each run uses (in place, runs always record it)")
    ap.add_argument("--adopt-usage", metavar="DIR",
                    help="give the notebooks the usage their copies in DIR recorded (see adopt_usage)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per cell (default 1800)")
    ap.add_argument("--rerun-editable", action="store_true",
                    help="execute each cell marked editable twice in a row")
    ap.add_argument("--jobs", type=int, default=1,
                    help="notebooks run side by side, each with a kernel of its own (only with --out: "
                         "timings measured side by side are not for publishing)")
    args = ap.parse_args()
    if args.jobs > 1 and not args.out:
        ap.error("--jobs needs --out: the outputs committed in place are measured one notebook at a time "
                 "(--rerun-stale runs the notebooks that time nothing two at a time itself)")
    for p in args.notebooks:
        if not os.path.isfile(p):
            ap.error("%s: no such notebook" % p)
    lib_hash = library_hash()
    if args.check or args.stale:
        stale = check(args.notebooks, lib_hash, strict=args.strict, listing=args.stale)
        sys.exit(1 if stale and args.check else 0)
    if args.adopt_usage:
        sys.exit(0 if adopt_usage(args.notebooks, args.adopt_usage, lib_hash) else 1)
    if args.rerun_stale:
        sys.exit(rerun_stale(args, lib_hash))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    total = time.time()
    record = args.record_usage or not args.out
    runs = [(p, os.path.join(args.out, os.path.basename(p)) if args.out else p) for p in args.notebooks]
    failed = run_all(args, runs, lib_hash, record, args.jobs)
    print("%d notebooks, %d failed, %.1f s" % (len(args.notebooks), failed, time.time() - total))
    sys.exit(1 if failed else 0)


def run_all(args, runs, lib_hash, record, jobs):
    """Runs (notebook, output path) pairs, `jobs` side by side; returns how many failed."""
    pool = None
    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor
        pool = ProcessPoolExecutor(max_workers=jobs)
        results = pool.map(execute_logged, [(p, out, lib_hash, args.timeout, args.rerun_editable, record)
                                            for p, out in runs])
    else:
        results = (None for _ in runs)
    try:
        failed = report(args, runs, results, lib_hash, record)
    except KeyboardInterrupt:
        if pool:
            pool.shutdown(wait=False, cancel_futures=True)  # the notebooks not started yet are not started
        raise
    if pool:
        pool.shutdown()
    return failed


def rerun_stale(args, lib_hash):
    """--rerun-stale: the stale notebooks again, in place; the ones that publish timings one at a
    time (their metadata says "timing": true), the others two at a time (one core each)."""
    import nbformat
    import subprocess
    stale = check(args.notebooks, lib_hash, strict=args.strict, listing=True)
    if not stale:
        return 0
    timing = [p for p in stale if nbformat.read(p, as_version=4).metadata.get("attn", {}).get("timing")]
    others = [p for p in stale if p not in timing]
    total = time.time()
    failed = 0
    if others:
        print("re-running %d notebooks two at a time: %s" % (len(others), " ".join(others)), flush=True)
        failed += run_all(args, [(p, p) for p in others], lib_hash, True, min(2, len(others)))
    if timing:
        print("re-running %d timing notebooks one at a time: %s" % (len(timing), " ".join(timing)), flush=True)
        failed += run_all(args, [(p, p) for p in timing], lib_hash, True, 1)
    tools = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["/usr/bin/python3", os.path.join(tools, "quotes.py"), "--write"], check=False)
    subprocess.run(["/usr/bin/python3", os.path.join(tools, "figures.py"), "--write"], check=False)
    print("published values that moved since HEAD:", flush=True)
    subprocess.run(["/usr/bin/python3", os.path.join(tools, "quotes.py"), "--moved", "HEAD"], check=False)
    print("%d notebooks re-run, %d failed, %.1f s" % (len(stale), failed, time.time() - total))
    return 1 if failed else 0


def report(args, runs, results, lib_hash, record):
    """Prints each notebook's progress and result in the order given; returns how many failed."""
    failed = 0
    for (p, out), result in zip(runs, results):
        print("%s:" % p, flush=True)
        if result is None:
            failures, seconds, reruns = execute(p, out, lib_hash, args.timeout, args.rerun_editable, record)
        else:
            failures, seconds, reruns, log = result
            print("\n".join(log), flush=True)
        if os.path.abspath(out) == os.path.abspath(p):
            # The notebook's own prose quotes its new outputs (tools/quotes.py); pages and
            # other notebooks follow with `tools/quotes.py --write`.
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
