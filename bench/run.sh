#!/bin/sh
# Every benchmark of issue 7, attn against PyTorch, in one table (docs/benchmarks.md).
#   bench/run.sh [build dir, default build] [rounds, default 10] [workload ...: only those rows]
#   bench/run.sh build 3 scaling     only the scaling table (vocabulary and length sweeps)
# Builds nothing: run `ninja -C <build dir> bench/model_bench bench/ops_bench` first
# (ops_bench needs libbenchmark-dev: tools/setup.sh --with-bench).
# Threads: attn 2 and 1 (ATTN_NUM_THREADS); torch set_num_threads(2) and (1); OpenBLAS/MKL 1 for both.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-10}
[ $# -ge 2 ] && shift 2 || set --
exes="model_bench ops_bench"
[ $# -gt 0 ] && exes=model_bench  # named workloads: no (c), (d)
for exe in $exes; do
  [ -x "$build/bench/$exe" ] || { echo "bench/run.sh: $build/bench/$exe is missing: ninja -C $build bench/$exe" >&2; exit 1; }
done
export OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
exec /usr/bin/python3 bench/run.py "$build" "$rounds" "$@"
