#!/usr/bin/env python3
"""Runs attn's notebooks cell by cell in clang-repl and writes the outputs back.

The notebooks are xeus-cling notebooks (kernel xcpp17). CI has no Jupyter, so
this runner plays the kernel: one clang-repl-19 process per notebook (the
interpreter behind xeus-cpp) with libattn loaded, each code cell written to a
file and `#include`d as one input, so multi-line functions, classes and
#ifdef blocks work as in a kernel. A cell fails when the compiler reports an
error or the interpreter dies (an uncaught exception aborts it).

Cells show rich output with xcpp::display(x); notebooks/attn_notebook.hpp
gives the runner a stand-in that prints the MIME bundle between markers,
which become display_data outputs here (SVG heatmaps, HTML tensors).

Usage: tools/run_notebooks.py [--build build] [--check-only] notebooks/*.ipynb
Exit status 1 if any cell of any notebook fails.
"""
import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
END = "@@ATTN_CELL_END@@"
MIME_BEGIN = "@@ATTN_MIME_BEGIN@@"
MIME_END = "@@ATTN_MIME_END@@"


def find_repl():
    for name in ("clang-repl-19", "clang-repl"):
        for d in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/lib/llvm-19/bin"]:
            p = os.path.join(d, name)
            if os.access(p, os.X_OK):
                return p
    sys.exit("run_notebooks: clang-repl-19 not found (apt-get install clang-tools-19)")


class Repl:
    """A clang-repl process fed one input line at a time."""

    def __init__(self, build_dir):
        args = [find_repl(),
                "--Xcc=-std=c++17",
                "--Xcc=-fno-relaxed-template-template-args",  # xtensor needs it under clang
                "--Xcc=-DXTENSOR_USE_XSIMD",
                "--Xcc=-DATTN_NOTEBOOK_RUNNER",
                "--Xcc=-I" + ROOT,
                "--Xcc=-I" + os.path.join(ROOT, "notebooks"),
                "--Xcc=-Wno-unused-value"]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1, cwd=os.path.join(ROOT, "notebooks"))
        self.out, self.err = queue.Queue(), queue.Queue()
        for stream, q in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=self._pump, args=(stream, q), daemon=True).start()
        lib = os.path.join(os.path.abspath(build_dir), "libattn.so")
        if not os.path.exists(lib):
            sys.exit("run_notebooks: %s not found: build first (ninja -C %s)" % (lib, build_dir))
        self.send("%lib " + lib)

    @staticmethod
    def _pump(stream, q):
        for line in stream:
            q.put(line)
        q.put(None)

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def run_cell(self, path, timeout, stuck_after_error=20.0):
        """Runs one cell; returns (stdout, stderr, problem or None).

        The cell ends when both streams have printed the end marker. After a
        compile error clang-repl may fail the marker's own line too ("Failed to
        materialize symbols"), so once an error shows on stderr, a silence of
        `stuck_after_error` seconds ends the cell as failed instead of waiting
        for the whole timeout.
        """
        self.send('#include "%s"' % path)
        self.send('std::cout << "\\n%s" << std::endl; std::cerr << "%s" << std::endl;' % (END, END))
        deadline = time.time() + timeout
        lines = {"out": [], "err": []}
        done = {"out": False, "err": False}
        last_seen = time.time()
        while not (done["out"] and done["err"]):
            got = False
            for name, q in (("out", self.out), ("err", self.err)):
                while not done[name]:
                    try:
                        line = q.get_nowait()
                    except queue.Empty:
                        break
                    got = True
                    if line is None:
                        return "".join(lines["out"]), "".join(lines["err"]), "the interpreter died"
                    if line.strip() == END:
                        done[name] = True
                    else:
                        lines[name].append(line)
            now = time.time()
            if got:
                last_seen = now
                continue
            if now > deadline:
                return "".join(lines["out"]), "".join(lines["err"]), "timed out"
            if any("error" in l for l in lines["err"]) and now - last_seen > stuck_after_error:
                return ("".join(lines["out"]), "".join(lines["err"]),
                        "the interpreter stopped answering after an error")
            time.sleep(0.05)
        return "".join(lines["out"]), "".join(lines["err"]), None

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()


def split_outputs(stdout):
    """Turns the cell's stdout into notebook outputs: text streams and MIME bundles."""
    outputs, text = [], []

    def flush():
        s = "".join(text)
        if s.strip():
            outputs.append({"output_type": "stream", "name": "stdout", "text": s.splitlines(True)})
        text.clear()

    rest = stdout
    while MIME_BEGIN in rest:
        before, after = rest.split(MIME_BEGIN, 1)
        text.append(before)
        payload, rest = after.split(MIME_END, 1) if MIME_END in after else (after, "")
        rest = rest[1:] if rest.startswith("\n") else rest  # the newline that ended the display
        flush()
        bundle = json.loads(payload)
        outputs.append({"output_type": "display_data", "metadata": {},
                        "data": {k: (v.splitlines(True) if isinstance(v, str) else v) for k, v in bundle.items()}})
    text.append(rest)
    flush()
    # The end marker is printed after a newline: drop that trailing blank line.
    if outputs and outputs[-1]["output_type"] == "stream":
        t = outputs[-1]["text"]
        if t and t[-1] == "\n":
            t.pop()
        if not t:
            outputs.pop()
    return outputs


def run_notebook(path, build_dir, timeout, write):
    with open(path) as f:
        nb = json.load(f)
    repl = Repl(build_dir)
    failures, count = [], 0
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="attn-nb-") as tmp:
        for index, cell in enumerate(nb["cells"]):
            if cell["cell_type"] != "code":
                continue
            count += 1
            source = "".join(cell["source"])
            cell_file = os.path.join(tmp, "cell_%03d.cpp" % index)
            with open(cell_file, "w") as f:
                f.write(source + "\n")
            t0 = time.time()
            stdout, stderr, problem = repl.run_cell(cell_file, timeout)
            errors = [l for l in stderr.splitlines() if "error:" in l]
            cell["execution_count"] = count
            cell["outputs"] = split_outputs(stdout)
            if problem or errors:
                first = source.strip().splitlines()[0] if source.strip() else ""
                failures.append("%s: cell %d (%s): %s\n%s" % (path, index, first[:60], problem or "compile error",
                                                              stderr.strip()[-3000:]))
                cell["outputs"].append({"output_type": "stream", "name": "stderr", "text": stderr.splitlines(True)})
                if problem:
                    break  # the interpreter is gone or stuck: the rest cannot run
            print("  cell %-3d %6.1fs %s" % (index, time.time() - t0, "FAILED" if (problem or errors) else "ok"),
                  flush=True)
    repl.close()
    nb.setdefault("metadata", {})["kernelspec"] = {"display_name": "C++17", "language": "C++17", "name": "xcpp17"}
    nb["metadata"]["language_info"] = {"codemirror_mode": "text/x-c++src", "file_extension": ".cpp",
                                       "mimetype": "text/x-c++src", "name": "c++", "version": "17"}
    if write:
        with open(path, "w") as f:
            json.dump(nb, f, indent=1, ensure_ascii=False)
            f.write("\n")
    print("%s: %d cells, %d failed, %.0fs" % (path, count, len(failures), time.time() - started), flush=True)
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebooks", nargs="+")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--timeout", type=float, default=900, help="seconds per cell")
    ap.add_argument("--check-only", action="store_true", help="run, but do not write outputs back")
    args = ap.parse_args()
    failures = []
    for path in args.notebooks:
        failures += run_notebook(path, args.build, args.timeout, not args.check_only)
    for f in failures:
        print("FAILED " + f, file=sys.stderr)
    print("%d notebooks, %d failed cells" % (len(args.notebooks), len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
