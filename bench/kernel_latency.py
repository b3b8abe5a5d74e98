#!/usr/bin/env python3
"""How long a learner waits for the notebook kernel (xcpp17): the kernel's
start, the first attn cell given at once (cold) and 5 s after the start,
a later small cell, and clang-repl-19 given the same input, median of a few
runs; then where the kernel's time went, from its own log.

  JUPYTER_PATH=build/kernel/share/jupyter /usr/bin/python3 bench/kernel_latency.py [--runs 5] [--no-pch]

Wall times through jupyter_client (the real protocol), as a notebook sees them.
By default the kernel reads the build's precompiled attn_notebook.hpp
(kernel/meson.build); --no-pch starts it with ATTN_KERNEL_PCH=none, so it
parses the header at the cell's #include. The breakdown comes from
ATTN_KERNEL_TIMING=FILE, where the kernel appends the time of its start
(the PCH check, the interpreter with libattn) and of each input (parse + IR,
JIT + run).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from jupyter_client.manager import start_new_kernel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(ROOT, "notebooks")
FIRST_CELL = ('#include "attn_notebook.hpp"\n'
              "auto x = attn::tensor({1.0, 2.0, 3.0}, true);\n"
              "auto y = attn::sum(attn::softmax(x, 0) * x);\n"
              "y.backward();\n"
              "std::cout << x.grad() << std::endl;\n")
SMALL_CELL = "auto s{i} = attn::softmax(x, 0);\nstd::cout << s{i} << std::endl;\n"


def execute(kc, code):
    """Runs code; returns its wall time in seconds (request to reply)."""
    t0 = time.perf_counter()
    reply = kc.execute_interactive(code, timeout=600, output_hook=lambda msg: None)
    elapsed = time.perf_counter() - t0
    if reply["content"]["status"] != "ok":
        sys.exit(f"kernel_latency: the cell failed: {reply['content']}")
    return elapsed


def one_kernel(wait, log):
    """(start, first cell, later small cell) in seconds; the first cell is sent `wait` s after the start."""
    os.environ["ATTN_KERNEL_TIMING"] = log
    t0 = time.perf_counter()
    km, kc = start_new_kernel(kernel_name="xcpp17", cwd=NOTEBOOKS, startup_timeout=600)
    start = time.perf_counter() - t0
    try:
        time.sleep(wait)
        first = execute(kc, FIRST_CELL)
        small = min(execute(kc, SMALL_CELL.format(i=i)) for i in range(3))
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return start, first, small


def clang_repl(flags):
    """clang-repl-19's wall time for the same input (libattn loaded, the kernel's flags), or None."""
    repl = shutil.which("clang-repl-19")
    if not repl:
        return None
    lines = [f"%lib {os.path.join(ROOT, 'build', 'libattn.so')}"] + FIRST_CELL.splitlines() + ["%quit"]
    args = [repl] + [a for f in flags for a in ("-Xcc", f)]
    t0 = time.perf_counter()
    out = subprocess.run(args, input="\n".join(lines) + "\n", cwd=NOTEBOOKS, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if "shape=[3]" not in out.stdout:
        sys.exit(f"kernel_latency: clang-repl-19 did not run the cell:\n{out.stdout}\n{out.stderr}")
    return elapsed  # (clang-repl-19 may crash at %quit, after the answer: its exit status is not read)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-pch", action="store_true", help="the kernel reads the header at the #include")
    args = parser.parse_args()
    if args.no_pch:
        os.environ["ATTN_KERNEL_PCH"] = "none"
    else:
        os.environ.pop("ATTN_KERNEL_PCH", None)
    log = tempfile.NamedTemporaryFile(prefix="kernel-latency-", suffix=".log", delete=False).name
    cold, warm, repl = [], [], []
    flags = ["-std=c++17", "-fno-relaxed-template-template-args", "-DXTENSOR_USE_XSIMD", "-DATTN_KERNEL",
             f"-I{ROOT}", f"-I{NOTEBOOKS}", f"-I{os.path.join(ROOT, 'kernel', 'include')}"]
    for _ in range(args.runs):  # in turns, so the machine's drift spreads over all three
        cold.append(one_kernel(0, log))
        warm.append(one_kernel(5, log))
        r = clang_repl(flags)
        if r is not None:
            repl.append(r)
    med = lambda xs: statistics.median(xs)
    print(f"{args.runs} runs{', no PCH' if args.no_pch else ', the precompiled header'}, median (min-max), wall seconds, "
          f"load average {os.getloadavg()[0]:.2f}")
    rows = [
        ("kernel start", [c[0] for c in cold + warm]),
        ("first attn cell, sent at once", [c[1] for c in cold]),
        ("start + first attn cell, sent at once", [c[0] + c[1] for c in cold]),
        ("first attn cell, sent 5 s after the start", [w[1] for w in warm]),
        ("later small cell", [c[2] for c in cold + warm]),
    ]
    if repl:
        rows.append(("clang-repl-19, same input (start + cell)", repl))
    print("| | median | min-max |\n|---|---|---|")
    for name, xs in rows:
        print(f"| {name} | {med(xs):.3f} s | {min(xs):.3f}-{max(xs):.3f} s |")
    print()
    print(breakdown(log))
    os.unlink(log)


def breakdown(log):
    """Where the kernel's time went (its ATTN_KERNEL_TIMING log), medians over the kernels, in ms."""
    parts = {}
    first_input = True
    with open(log) as f:
        for line in f:
            m = re.match(r"pch check\s+([\d.]+) ms\s+interpreter \+ libattn\s+([\d.]+) ms\s+pch (\w+)", line)
            if m:
                parts.setdefault("start: PCH check (a child kernel loads it)", []).append(float(m.group(1)))
                parts.setdefault("start: interpreter made, libattn loaded", []).append(float(m.group(2)))
                first_input = True
                continue
            m = re.match(r"parse\+IR\s+([\d.]+) ms\s+jit\+run\s+([\d.]+) ms\s+(.*)", line)
            if not m or "attn_kernel_pch_check" in line:
                continue
            if m.group(3).startswith("#include"):
                name = "first cell: its #include lines"
            elif first_input:
                name = "first cell: its code"
                first_input = False
            else:
                continue
            parts.setdefault(name + ", parse + IR", []).append(float(m.group(1)))
            parts.setdefault(name + ", JIT + run", []).append(float(m.group(2)))
    rows = ["| kernel's own log | median |", "|---|---|"]
    rows += [f"| {k} | {statistics.median(v):.0f} ms |" for k, v in parts.items()]
    return "\n".join(rows)


if __name__ == "__main__":
    main()
