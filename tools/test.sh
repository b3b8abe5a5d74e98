#!/usr/bin/env bash
# One command that sets up, builds and runs every test: tools/test.sh
# (the Jupyter kernel and its protocol tests included: it installs the kernel's packages too)
# Each test binary prints its doctest summary; the last line counts the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh --with-kernel "$@"
# The course's matrices are small: OpenBLAS's thread pool only costs time on them.
export OPENBLAS_NUM_THREADS=1
ninja -C build
status=0
meson test -C build --verbose --num-processes 2 || status=$?
python3 - <<'PY'
import json
passed = failed = 0
with open("build/meson-logs/testlog.json") as f:
    for line in f:
        r = json.loads(line)
        if r["result"] in ("OK", "EXPECTEDFAIL", "SKIP"):
            passed += 1
        else:
            failed += 1
            print("FAILED:", r["name"])
print(f"{passed} passed, {failed} failed")
PY
exit $status
