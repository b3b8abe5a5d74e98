#!/bin/sh
# attn's nn::LSTM next to torch.nn.LSTM, forward + backward, in one table.
#   bench/run_lstm.sh [build dir, default build] [rounds, default 12]
# Builds nothing: run `ninja -C <build dir> bench/lstm_bench` first.
# Threads: OpenBLAS 1 for attn (OPENBLAS_NUM_THREADS=1); torch.set_num_threads(2),
# and 1 for comparison. The two alternate in one run: see bench/torch_lstm.py.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
export OPENBLAS_NUM_THREADS=1
exec /usr/bin/python3 bench/torch_lstm.py "$build/bench/lstm_bench" "${2:-12}"
