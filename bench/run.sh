#!/bin/sh
# Every benchmark of issue 7, attn against PyTorch, in one table (docs/benchmarks.md).
#   bench/run.sh [build dir, default build] [rounds, default 10] [workload ...: only those rows]
# Builds nothing: run `ninja -C <build dir> bench/model_bench bench/ops_bench` first
# (ops_bench needs libbenchmark-dev: tools/setup.sh --with-bench).
# Threads: attn 2 and 1 (ATTN_NUM_THREADS); torch set_num_threads(2) and (1); OpenBLAS/MKL 1 for both.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-10}
for exe in model_bench ops_bench; do
  [ -x "$build/bench/$exe" ] || { echo "bench/run.sh: $build/bench/$exe is missing: ninja -C $build bench/$exe" >&2; exit 1; }
done
export OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
[ $# -ge 2 ] && shift 2 || set --
exec /usr/bin/python3 bench/run.py "$build" "$rounds" "$@"
