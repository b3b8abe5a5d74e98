#!/usr/bin/env bash
# The lab track from your editor (docs/labs.md).
#
#   tools/lab.sh              every lab: passing, failing or untouched
#   tools/lab.sh N            grade lab N: builds your labs/work/NN_name.cpp against the
#                             built library and runs its grader (the first time, copies the
#                             stub labs/NN_name/lab.cpp there for you to edit)
#   tools/lab.sh N --solution grade the worked solution (labs/solutions/), to see a pass
#
# Your files in labs/work/ are never overwritten (git ignores them).
# ATTN_CXX picks the compiler (default g++); ATTN_LAB_NO_BUILD=1 uses the built library as it is.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cxx="${ATTN_CXX:-g++}"
out="build/labs/work"

die() { echo "tools/lab.sh: $*" >&2; exit 2; }

# The library and the graders the labs link against: set up and built the first time,
# brought up to date after that (a no-op when nothing changed; ATTN_LAB_NO_BUILD=1 skips it).
ensure_library() {
  if [ ! -f build/build.ninja ]; then
    echo "setting up the build first (tools/setup.sh)"
    tools/setup.sh
  fi
  if [ -z "${ATTN_LAB_NO_BUILD:-}" ] || [ ! -e build/labs/libattn_labs.so ]; then
    ninja -C build labs/libattn_labs.so | grep -v "^ninja: \(Entering\|no work\)" || true
  fi
}

lab_dir() {  # lab number -> labs/NN_name
  local n d
  [[ "$1" =~ ^[0-9]+$ ]] || die "'$1' is not a lab number (tools/lab.sh lists them)"
  n=$(printf "%02d" "$((10#$1))")
  for d in labs/"$n"_*/; do
    [ -f "$d/lab.cpp" ] && { echo "${d%/}"; return; }
  done
  die "there is no lab $1 (tools/lab.sh lists them)"
}

# Compiles $1 into $2 unless $2 is newer than the source, the grader headers and the library.
build() {
  local src="$1" bin="$2"
  mkdir -p "$(dirname "$bin")"
  if [ -e "$bin" ] && [ "$bin" -nt "$src" ] && [ "$bin" -nt build/libattn.so ] &&
     [ "$bin" -nt build/labs/libattn_labs.so ] &&
     [ -z "$(find labs/grader labs/solutions -name '*.hpp' -newer "$bin" -print -quit)" ]; then
    return 0
  fi
  # shellcheck disable=SC2046
  "$cxx" -std=c++17 -O1 -DXTENSOR_USE_XSIMD -I"$root" $(pkg-config --cflags xtensor xsimd) "$src" \
    -o "$bin.tmp" -L"$root/build/labs" -L"$root/build" -lattn_labs -lattn \
    -Wl,-rpath,"$root/build/labs:$root/build" && mv "$bin.tmp" "$bin"
}

grade() {  # lab number [--solution]
  local dir name work bin
  dir=$(lab_dir "$1")
  name=$(basename "$dir")
  ensure_library
  if [ "${2:-}" = "--solution" ]; then
    work="labs/solutions/$name.cpp"
    bin="$out/$name.solution"
  else
    work="labs/work/$name.cpp"
    bin="$out/$name"
    if [ ! -e "$work" ]; then
      mkdir -p labs/work
      cp "$dir/lab.cpp" "$work"
      echo "Your copy of lab $((10#${name%%_*})) is $work: edit it, then run tools/lab.sh $1 again."
      echo "What to write: $dir/README.md (or the notebook notebooks/labs/$name.ipynb)."
      echo
    fi
  fi
  echo "compiling $work ..."
  build "$work" "$bin" || die "$work does not compile (the compiler's messages are above)"
  "$bin"
}

status() {
  local dir name work bin line state
  printf "%-4s %-22s %s\n" lab name state
  for dir in labs/[0-9][0-9]_*/; do
    dir="${dir%/}"
    [ -f "$dir/lab.cpp" ] || continue
    name=$(basename "$dir")
    work="labs/work/$name.cpp"
    if [ ! -e "$work" ] || cmp -s "$work" "$dir/lab.cpp"; then
      state="untouched"
    else
      ensure_library >/dev/null
      bin="$out/$name"
      if ! build "$work" "$bin" >/dev/null 2>&1; then
        state="failing (does not compile: tools/lab.sh ${name%%_*})"
      else
        line=$("$bin" 2>&1 | tail -n1 || true)
        if [[ "$line" =~ :\ ([0-9]+)\ of\ ([0-9]+)\ checks\ pass ]] &&
           [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]; then
          state="passing (${BASH_REMATCH[1]} of ${BASH_REMATCH[2]} checks)"
        elif [[ "$line" =~ :\ ([0-9]+)\ of\ ([0-9]+)\ checks\ pass ]]; then
          state="failing (${BASH_REMATCH[1]} of ${BASH_REMATCH[2]} checks pass)"
        else
          state="failing (the grader did not finish: tools/lab.sh ${name%%_*})"
        fi
      fi
    fi
    printf "%-4s %-22s %s\n" "$((10#${name%%_*}))" "${name#*_}" "$state"
  done
  echo
  echo "Start or continue a lab: tools/lab.sh N   (what to write: docs/labs.md)"
}

case "${1:-}" in
  "") status ;;
  -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) grade "$@" ;;
esac
