#!/bin/sh
# attn's ops next to PyTorch's, in one table.
#   bench/run_ops.sh [build dir, default build]
# Runs bench/ops_bench (Google Benchmark; needs libbenchmark-dev) and
# bench/torch_ops.py, and prints per op and dtype: attn (forward + backward),
# raw (the same arithmetic in bare xtensor/BLAS), attn's overhead (attn - raw),
# PyTorch with torch.set_num_threads(2) and (1), and attn / the faster PyTorch.
# Times are the best of 5 repetitions, in us. OpenBLAS runs 1 thread for both
# (OPENBLAS_NUM_THREADS=1; attn also calls openblas_set_num_threads(1)).
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OPENBLAS_NUM_THREADS=1
"$build/bench/ops_bench" --benchmark_repetitions=5 --benchmark_min_time=0.2 \
  --benchmark_format=json --benchmark_out="$tmp/attn.json" --benchmark_out_format=json >/dev/null
/usr/bin/python3 bench/torch_ops.py >"$tmp/torch.json"
/usr/bin/python3 - "$tmp/attn.json" "$tmp/torch.json" <<'PY'
import json, sys
attn, torch = (json.load(open(p)) for p in sys.argv[1:3])
best, gflops = {}, {}
for b in attn["benchmarks"]:
    if b.get("run_type") != "iteration":
        continue
    scale = {"us": 1.0, "ms": 1e3, "ns": 1e-3}[b["time_unit"]]
    name = b["run_name"]
    t = b["real_time"] * scale
    if t < best.get(name, float("inf")):
        best[name] = t
        if "GFLOPS" in b:
            gflops[name] = b["GFLOPS"]
rows = torch["rows"]
print("threads: attn OpenBLAS 1; torch %s" % json.dumps(torch["threads"]))
print("forward + backward, 32x128 inputs (matmul128: [32,128] x [128,128]); us per call")
cols = ("op", "dtype", "attn us", "raw us", "overhead", "torch@2 us", "torch@1 us", "ratio")
print("%-10s %-5s %9s %9s %9s %11s %11s %7s" % cols)
for op in ("add", "tanh", "softmax", "matmul128"):
    for dt in ("f32", "f64"):
        key = op + "/" + dt
        a, r = best[key + "/attn"], best[key + "/raw"]
        t2, t1 = rows[key + "@2"], rows[key + "@1"]
        print("%-10s %-5s %9.2f %9.2f %9.2f %11.2f %11.2f %7.2f" % (op, dt, a, r, a - r, t2, t1, a / min(t1, t2)))
print("matmul forward only, [n,n] x [n,n]; GFLOP/s (attn matmul, raw cblas gemm, torch.matmul)")
print("%-10s %-5s %9s %9s %9s %11s %11s %7s" % ("op", "dtype", "attn", "raw gemm", "", "torch@2", "torch@1", "ratio"))
for n in (512, 1024):
    for dt in ("f32", "f64"):
        key = "gemm%d/%s" % (n, dt)
        a, r = gflops[key + "/attn"], gflops[key + "/raw"]
        t2, t1 = rows[key + "/gflops@2"], rows[key + "/gflops@1"]
        print("%-10s %-5s %9.1f %9.1f %9s %11.1f %11.1f %7.2f" % ("matmul%d" % n, dt, a, r, "", t2, t1, max(t1, t2) / a))
print("overhead = attn - raw: graph nodes, closures, gradient buffers and copies.")
print("ratio = attn time / the faster torch time; above 1 attn is slower.")
PY
