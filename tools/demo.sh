#!/usr/bin/env bash
# One command that sets up, builds and runs the main demo: tools/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
# Only what the demo runs: the library and the command line (tools/test.sh builds the rest).
ninja -C build cli/attn
# attn splits its products over its own threads and runs OpenBLAS on one
# (docs/threads.md); unset, OpenBLAS would start threads of its own that only
# spin (measured: 83 instead of 95 steps/s).
export OPENBLAS_NUM_THREADS=1
exec build/cli/attn demo "$@"
