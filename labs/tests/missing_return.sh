#!/bin/sh
# A function of the learner's that can end without a return must be a compile error: the lab
# headers raise -Wreturn-type to an error (labs/grader/lab.hpp), in the editor's compiler and in
# the notebook kernel alike. Compiles labs/tests/missing_return.cpp with the flags of a plain
# build (no -Werror) and expects both of its forgotten returns to fail it, named -Wreturn-type.
#   missing_return.sh CXX SOURCE_ROOT
cxx="$1"
root="$2"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# shellcheck disable=SC2046
if "$cxx" -std=c++17 -O1 -I"$root" $(pkg-config --cflags xtensor xsimd) -c "$root/labs/tests/missing_return.cpp" \
     -o /dev/null >"$log" 2>&1; then
  cat "$log"
  echo "FAIL: a forgotten return compiled (with at most a warning): it must be an error"
  exit 1
fi
errors=$(grep -c "error: .*-W\(error[=,]\)\{0,1\}return-type\]" "$log")
if [ "$errors" -lt 2 ]; then
  cat "$log"
  echo "FAIL: expected both forgotten returns (lines 13 and 18) as -Wreturn-type errors, found $errors"
  exit 1
fi
echo "both forgotten returns are compile errors (-Wreturn-type)"
