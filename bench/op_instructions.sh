#!/bin/sh
# bench/op_instructions.sh [build dir]: attn's overhead per op (issue 7's (c)),
# counted by callgrind in instructions per forward + backward above the raw
# arithmetic (bench/op_instructions.cpp says why). Needs valgrind
# (apt-get install valgrind). One thread, as the (c) rows of bench/run.sh.
set -eu
build=${1:-build-bench}
exe=$build/bench/op_instructions
[ -x "$exe" ] || { echo "op_instructions.sh: $exe not found; build it: ninja -C $build bench/op_instructions" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "op_instructions.sh: valgrind not found (apt-get install valgrind)" >&2; exit 1; }

# instructions of one run: op dtype side calls
count() {
  ATTN_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$exe" "$1" "$2" "$3" "$4" 2>&1 |
    sed -n 's/.*refs: *//p' | tr -d ,
}

echo "| op (fwd + bwd, 32x128) | dtype | raw instr/call | attn instr/call | attn - raw |"
echo "| --- | --- | --- | --- | --- |"
for dtype in f32 f64; do
  for op in add tanh softmax matmul128; do
    raw=$(( ($(count $op $dtype raw 600) - $(count $op $dtype raw 100)) / 500 ))
    att=$(( ($(count $op $dtype attn 600) - $(count $op $dtype attn 100)) / 500 ))
    echo "| $op | $dtype | $raw | $att | $((att - raw)) |"
  done
done
