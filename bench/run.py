"""Every benchmark of issue 7, attn against PyTorch, in one table (bench/run.sh).

    /usr/bin/python3 bench/run.py <build dir> [rounds] [workload ...]

With workloads named (transformer, bahdanau, transformer-v8000, bahdanau-v8000,
decode-transformer, decode-bahdanau, lstm, outproj-..., scaling), only those
rows run, and not (c) and (d). The -v8000 rows are (a) and (b) with a
vocabulary of 8,000 (the real-translation chapter's French side has about
12,500 words); the outproj rows time only the three matrix products of that
step's output layer on both sides, the floor under the step.

scaling: (a) and (b) in f32 against the vocabulary (32, 1,000, 8,000, 32,000,
length 20) and against the sentence length (10, 20, 40, 80, vocabulary 8,000):
attn@2, torch@2 and t@1+ob2 only, in min(rounds, SCALING_ROUNDS) rounds; each
row's step time and peak-memory growth, and their growth from the row before.
With BENCH_JSON=<file>, the scaling rows are also written there (for
bench/plot_scaling.py).

(a), (b), (e) and the LSTM: for each workload and dtype, four server processes,
each in its own process so that its peak RSS (VmHWM) is its own:
  attn@2   <build>/bench/model_bench --serve <workload> <dtype>, ATTN_NUM_THREADS=2
  attn@1   the same with ATTN_NUM_THREADS=1
  torch@2  bench/torch_models.py --serve ... with torch.set_num_threads(2)
  torch@1  the same with 1 thread
  t@1+ob2  torch.set_num_threads(1) and OPENBLAS_NUM_THREADS=2: torch's matrix
           products on OpenBLAS's two threads (on 2 cores, the fastest torch
           for several rows); the others run OpenBLAS on one thread.
attn pins OpenBLAS to one thread and spreads work over its own threads.
After one warm-up round, `rounds` rounds each ask every contender in turn for
calls back to back, so that the machine's other load falls on all alike: calls
for WARM_S that are not counted, then COUNTED calls (see WARM_S); the table
gives the median of the counted ones. (c) and (d): bench/ops_bench (Google Benchmark, best of
5) at 2 and at 1 attn threads, and bench/torch_ops.py, run twice in turn; the
best of both runs is kept. (c)'s overhead comes from ops_bench's pair rows at 1
thread, attn and the raw arithmetic timed in turns: the median of the 10 runs'
median differences, with their range. Ratio = attn@2 time / the fastest torch time (for
rates: the fastest torch rate / attn@2's): both sides may use both cores;
below 1, attn is faster. This driver imports no torch.
"""
import json
import os
import platform
import re
import math
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"
# Each contender's turn in a round: uncounted calls for at least WARM_S, then
# COUNTED calls, all back to back. While one contender runs the others wait, and
# on this VM a core that waited runs slower for up to about 0.1 s (measured:
# attn@2's Transformer f32 step 44 ms when only one call went first, 31 ms
# back to back; its LSTM step 5.7 ms right after a 50 ms pause, 4.4 ms back to
# back), which hits the contenders with 2 threads most. A training loop runs its
# steps back to back: the counted calls do too.
WARM_S = 0.15
COUNTED = 2
SENTENCES = 32  # the batch that decoding runs
DTYPES = ("f32", "f64")
WORKLOADS = (  # name, table label
    ("transformer", "(a) Transformer train step"),
    ("bahdanau", "(b) Bahdanau train step"),
    ("transformer-v8000", "(a) Transformer step, V 8000"),
    ("bahdanau-v8000", "(b) Bahdanau step, V 8000"),
    ("outproj-transformer-v8000", "    (a)'s output-layer gemms, V 8000"),
    ("outproj-bahdanau-v8000", "    (b)'s output-layer gemms, V 8000"),
    ("decode-transformer", "(e) Transformer greedy decode"),
    ("decode-bahdanau", "(e) Bahdanau greedy decode"),
    ("lstm", "    LSTM fwd+bwd [32,20,128]"),
)
CONTENDERS = ("attn@2", "attn@1", "torch@2", "torch@1", "t@1+ob2")
SCALING = "scaling"
SCALING_CONTENDERS = ("attn@2", "torch@2", "t@1+ob2")
SCALING_ROUNDS = 3
SCALING_VOCABS = (32, 1000, 8000, 32000)  # at length 20
SCALING_LENGTHS = (10, 20, 40, 80)  # at vocabulary 8000
SCALING_DTYPE = "f32"
# After its last product, an OpenBLAS thread spins (sched_yield) for about 0.1 s
# before it sleeps: had the next contender started at once, it would have had
# one core, not two (attn@2's LSTM step measured 6.6 ms instead of 4.4). The
# driver waits this long after t@1+ob2's turn.
OPENBLAS_SETTLE_S = 0.3
TORCH = ("torch@2", "torch@1", "t@1+ob2")
ATTN_THREADS = (2, 1)


class Server:
    def __init__(self, argv, env):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def ask(self, request):
        self.proc.stdin.write(request + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("bench: %s stopped" % " ".join(self.proc.args))
        return [float(v) for v in line.split()]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


# What attn::reuse_freed_memory() (core/memory.hpp) sets inside attn's programs,
# given to torch's processes too, so that both sides run with the same malloc.
MALLOC = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_max=0"


def environment(torch_threads=None, attn_threads=None, openblas_threads=1):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(openblas_threads), MKL_NUM_THREADS="1", GLIBC_TUNABLES=MALLOC)
    if torch_threads:
        env["ATTN_TORCH_THREADS"] = str(torch_threads)
    if attn_threads:
        env["ATTN_NUM_THREADS"] = str(attn_threads)
    return env


def run_workload(build, name, dtype, rounds, contenders=CONTENDERS):
    """{contender: (median us, peak kB, start kB)}"""
    attn = [os.path.join(build, "bench", "model_bench"), "--serve", name, dtype]
    torch = [PYTHON, os.path.join(HERE, "torch_models.py"), "--serve", name, dtype]
    make = {
        "attn@2": lambda: Server(attn, environment(attn_threads=2)),
        "attn@1": lambda: Server(attn, environment(attn_threads=1)),
        "torch@2": lambda: Server(torch, environment(2)),
        "torch@1": lambda: Server(torch, environment(1)),
        "t@1+ob2": lambda: Server(torch, environment(1, openblas_threads=2)),
    }
    servers = {who: make[who]() for who in contenders}
    times = {who: [] for who in servers}
    warm = {}  # uncounted calls per turn: enough for WARM_S, from the warm-up round's times
    for r in range(rounds + 1):  # round 0 is the warm-up
        for who, server in servers.items():
            got = server.ask(str(warm.get(who, 1) + COUNTED))
            if r == 0:
                warm[who] = max(1, math.ceil(WARM_S / (statistics.median(got) * 1e-6)))
            else:
                times[who] += got[warm[who]:]
            if who == "t@1+ob2":
                time.sleep(OPENBLAS_SETTLE_S)
    result = {}
    for who, server in servers.items():
        peak, start = server.ask("mem")
        server.close()
        result[who] = (statistics.median(times[who]), peak, start)
    return result


def run_ops(build):
    """(best attn us by "<Google Benchmark run name>@<threads>", GFLOP/s by the same,
    overheads: the <op>/<dtype>/pair rows' medians of attn - raw at 1 thread, a list per op, torch rows)"""
    best, gflops, overheads, rows = {}, {}, {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "attn.json")
        for _ in range(2):
            for threads in ATTN_THREADS:
                subprocess.run([os.path.join(build, "bench", "ops_bench"), "--benchmark_repetitions=5",
                                "--benchmark_min_time=0.2", "--benchmark_out=" + out, "--benchmark_out_format=json"],
                               env=environment(attn_threads=threads), check=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
                for b in json.load(open(out))["benchmarks"]:
                    if b.get("run_type") != "iteration":
                        continue
                    key = "%s@%d" % (b["run_name"], threads)
                    if "overhead_us" in b:
                        if threads == 1:
                            overheads.setdefault(b["run_name"], []).append(b["overhead_us"])
                        continue
                    t = b["real_time"] * {"us": 1.0, "ms": 1e3, "ns": 1e-3}[b["time_unit"]]
                    if t < best.get(key, float("inf")):
                        best[key] = t
                        if "GFLOPS" in b:
                            gflops[key] = b["GFLOPS"]
            for env, rename in ((environment(), None), (environment(1, openblas_threads=2), ("@1", "@1+ob2"))):
                got = json.loads(subprocess.run([PYTHON, os.path.join(HERE, "torch_ops.py")], env=env,
                                                check=True, stdout=subprocess.PIPE, text=True).stdout)
                time.sleep(OPENBLAS_SETTLE_S)
                for key, v in got["rows"].items():
                    key = key.replace(*rename) if rename else key
                    better = max if "gflops" in key else min
                    rows[key] = better(v, rows.get(key, v))
    return best, gflops, overheads, rows


def scaling_rows():
    """(model, sweep, vocabulary, length, workload name) of the scaling table"""
    rows = []
    for model in ("transformer", "bahdanau"):
        rows += [(model, "vocabulary", v, 20, "%s-v%d-t20" % (model, v)) for v in SCALING_VOCABS]
        rows += [(model, "length", 8000, t, "%s-v8000-t%d" % (model, t)) for t in SCALING_LENGTHS]
    return rows


SCALE_ROW = "| %-11s | %-10s | %5s | %3s | %9s | %6s | %9s | %6s | %6s | %7s | %6s | %7s | %6s |"


def print_scaling(results, rounds):
    """The scaling table: per row the step time and the peak-memory growth (peak - start),
    attn@2 and the faster torch, and each one's growth from the row above (same sweep)."""
    print()
    print("scaling (%s; attn@2 against the faster of torch@2 and t@1+ob2; %d rounds of %d counted calls; "
          "x prev = this row / the row above, within a sweep; MB = peak RSS - RSS at start)"
          % (SCALING_DTYPE, rounds, COUNTED))
    print()
    print(SCALE_ROW % ("model", "sweep", "V", "T", "attn ms", "x prev", "torch ms", "x prev", "ratio", "attn MB",
                       "x prev", "torch MB", "x prev"))
    print(SCALE_ROW % tuple("-" * n for n in (11, 10, 5, 3, 9, 6, 9, 6, 6, 7, 6, 7, 6)))
    prev = None
    for model, sweep, v, t, name in scaling_rows():
        r = results[name]
        torch_t = min(r[w][0] for w in SCALING_CONTENDERS[1:])
        torch_m = min(r[w][1] - r[w][2] for w in SCALING_CONTENDERS[1:])
        cur = (r["attn@2"][0], torch_t, r["attn@2"][1] - r["attn@2"][2], torch_m)
        same = prev is not None and prev[0] == (model, sweep)
        grow = ["x%.2f" % (c / p) if same and p > 0 else "" for c, p in zip(cur, prev[1] if same else cur)]
        print(SCALE_ROW % (model, sweep, v, t, "%.2f" % (cur[0] / 1e3), grow[0], "%.2f" % (cur[1] / 1e3), grow[1],
                           "%.2f" % (cur[0] / cur[1]), "%.0f" % (cur[2] / 1024), grow[2], "%.0f" % (cur[3] / 1024),
                           grow[3]))
        prev = ((model, sweep), cur)


def machine():
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return "%s, %d cores, %s" % (cpu, os.cpu_count(), platform.platform())


def torch_version():
    return subprocess.run([PYTHON, "-c", "import torch; print(torch.__version__)"], stdout=subprocess.PIPE,
                          text=True).stdout.strip()


ROW = "| %-32s | %-5s | %-7s | %9s | %9s | %9s | %9s | %9s | %6s | %s |"


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    only = sys.argv[3:]
    known = list(dict(WORKLOADS)) + [SCALING]
    sized = re.compile(r"^(transformer|bahdanau|decode-transformer|decode-bahdanau|outproj-transformer|outproj-bahdanau)(-[vt][0-9]+)+$")  # any V, T
    unknown = [w for w in only if w not in known and not sized.match(w)]
    if unknown:
        raise SystemExit("bench: unknown workload %s (known: %s)" % (", ".join(unknown), ", ".join(known)))
    workloads = [(name, label) for name, label in WORKLOADS if not only or name in only]
    workloads += [(name, name) for name in only if name not in known]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    models = {(name, dt): run_workload(build, name, dt, rounds) for name, _ in workloads for dt in DTYPES}
    if not only:
        best, gflops, overheads, rows = run_ops(build)
    scaling_rounds = min(rounds, SCALING_ROUNDS)
    scaling = {}
    if not only or SCALING in only:
        scaling = {name: run_workload(build, name, SCALING_DTYPE, scaling_rounds, SCALING_CONTENDERS)
                   for _, _, _, _, name in scaling_rows()}
        if os.environ.get("BENCH_JSON"):
            with open(os.environ["BENCH_JSON"], "w") as f:
                json.dump({"started": started, "dtype": SCALING_DTYPE, "rows": [
                    {"model": m, "sweep": sw, "vocab": v, "length": t,
                     "results": {who: list(r) for who, r in scaling[name].items()}}
                    for m, sw, v, t, name in scaling_rows()]}, f, indent=1)

    print("attn vs PyTorch %s, %s, %s; load average %s" % (torch_version(), started, machine(),
                                                          " ".join("%.1f" % v for v in os.getloadavg())))
    print("threads: attn ATTN_NUM_THREADS=2 [attn@2] and 1 [attn@1], OpenBLAS 1 (attn pins it); "
          "torch.set_num_threads(2) [torch@2] and (1) [torch@1] with OPENBLAS_NUM_THREADS=MKL_NUM_THREADS=1, "
          "and (1) with OPENBLAS_NUM_THREADS=2 [t@1+ob2]")
    print("malloc: freed memory kept for reuse on both sides: attn::reuse_freed_memory(), and torch with "
          "GLIBC_TUNABLES=" + MALLOC)
    print("models: median of %d calls, alternating attn@2 / attn@1 / torch@2 / torch@1 / t@1+ob2 in %d rounds after a "
          "warm-up round; each turn %d counted calls after %.2f s of uncounted ones, back to back; "
          "ops: best of 2 x 5 repetitions" % (rounds * COUNTED, rounds, COUNTED, WARM_S))
    print("ratio = attn@2 / the fastest torch (time; for rates the inverse): below 1, attn is faster; "
          "(c) overhead = attn - raw at 1 thread, timed in pairs (ops_bench's pair rows): the median over 10 runs "
          "of each run's median difference, and their range")
    if workloads:
        print_models(models, workloads)
    if not only:
        print_ops(best, gflops, overheads, rows)
    if scaling:
        print_scaling(scaling, scaling_rounds)


def print_models(models, workloads):
    print()
    print(ROW % ("benchmark", "dtype", "unit", "attn@2", "attn@1", "torch@2", "torch@1", "t@1+ob2", "ratio", "notes"))
    print(ROW % ("-" * 32, "-" * 5, "-" * 7, "-" * 9, "-" * 9, "-" * 9, "-" * 9, "-" * 9, "-" * 6, "-" * 12))
    for name, label in workloads:
        for dt in DTYPES:
            r = models[(name, dt)]
            med = {who: r[who][0] for who in CONTENDERS}
            fastest = min(TORCH, key=lambda who: med[who])
            ratio = med["attn@2"] / med[fastest]
            mem = "peak RSS MB attn@2 %.0f (%+.0f from start), %s %.0f (%+.0f)" % (
                r["attn@2"][1] / 1024, (r["attn@2"][1] - r["attn@2"][2]) / 1024,
                fastest, r[fastest][1] / 1024, (r[fastest][1] - r[fastest][2]) / 1024)
            if name.startswith("decode"):
                cells = ["%.0f" % (SENTENCES / (med[who] * 1e-6)) for who in CONTENDERS]
                print(ROW % tuple([label, dt, "sent/s"] + cells + ["%.2f" % ratio, mem]))
            else:
                cells = ["%.2f" % (med[who] / 1e3) for who in CONTENDERS]
                print(ROW % tuple([label, dt, "ms"] + cells + ["%.2f" % ratio, mem]))


def print_ops(best, gflops, overheads, rows):
    for op in ("add", "tanh", "softmax", "matmul128"):
        for dt in DTYPES:
            key = op + "/" + dt
            a2, a1, raw = best[key + "/attn@2"], best[key + "/attn@1"], best[key + "/raw@1"]
            t2, t1, tb = rows[key + "@2"], rows[key + "@1"], rows[key + "@1+ob2"]
            over = overheads[key + "/pair"]
            print(ROW % ("(c) %s fwd+bwd 32x128" % op, dt, "us", "%.2f" % a2, "%.2f" % a1, "%.2f" % t2, "%.2f" % t1,
                         "%.2f" % tb, "%.2f" % (a2 / min(t1, t2, tb)),
                         "raw@1 %.2f us, overhead %.2f us (%.2f to %.2f)" % (raw, statistics.median(over), min(over),
                                                                              max(over))))
    for n in (512, 1024):
        for dt in DTYPES:
            key = "gemm%d/%s" % (n, dt)
            a2, a1, raw = gflops[key + "/attn@2"], gflops[key + "/attn@1"], gflops[key + "/raw@1"]
            t2, t1, tb = rows[key + "/gflops@2"], rows[key + "/gflops@1"], rows[key + "/gflops@1+ob2"]
            print(ROW % ("(d) matmul %dx%d" % (n, n), dt, "GFLOP/s", "%.1f" % a2, "%.1f" % a1, "%.1f" % t2,
                         "%.1f" % t1, "%.1f" % tb, "%.2f" % (max(t1, t2, tb) / a2),
                         "raw OpenBLAS gemm (1 thread) %.1f: attn@1 at %.0f%%" % (raw, 100 * a1 / raw)))


if __name__ == "__main__":
    main()
