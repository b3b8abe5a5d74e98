#!/usr/bin/env bash
# The lab track from your editor (docs/labs.md).
#
#   tools/lab.sh              every lab: its chapter, untouched / k of M / passed, and the next one to do
#   tools/lab.sh N            grade lab N: builds your labs/work/NN_name.cpp against the
#                             built library and runs its grader (the first time, copies the
#                             stub labs/NN_name/lab.cpp there for you to edit)
#   tools/lab.sh N --solution grade the worked solution (labs/solutions/), to see a pass
#
# Your files in labs/work/ are never overwritten (git ignores them). Whatever is compiled is
# named before it is; the list compiles nothing (it shows each lab's last grading).
# ATTN_CXX picks the compiler (default g++); ATTN_LAB_NO_BUILD=1 uses the built library as it is.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cxx="${ATTN_CXX:-g++}"
out="build/labs/work"

die() { echo "tools/lab.sh: $*" >&2; exit 2; }

# The library and the graders the labs link against: set up and built the first time,
# brought up to date after that (nothing to do once built; ATTN_LAB_NO_BUILD=1 skips it).
ensure_library() {
  if [ ! -f build/build.ninja ]; then
    echo "setting up the build first (tools/setup.sh)"
    tools/setup.sh
  fi
  if [ -z "${ATTN_LAB_NO_BUILD:-}" ] || [ ! -e build/labs/libattn_labs.so ]; then
    if ! ninja -C build -n labs/libattn_labs.so 2>/dev/null | grep -q "no work to do"; then
      echo "building the library and the graders first (ninja -C build labs/libattn_labs.so):"
      ninja -C build labs/libattn_labs.so | grep -v "^ninja: \(Entering\|no work\)" || true
    fi
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

chapter_of() {  # labs/NN_name -> the chapter its README says it sits beside ("" while it has no README)
  [ -f "$1/README.md" ] || return 0
  sed -n 's/.*Beside \[chapter \([0-9]*\)\].*/\1/p' "$1/README.md" | head -n1
}

# True when $2, built from $1, is newer than the source, the grader headers and the library.
up_to_date() {
  local src="$1" bin="$2"
  [ -e "$bin" ] && [ "$bin" -nt "$src" ] && [ "$bin" -nt build/libattn.so ] &&
    [ "$bin" -nt build/labs/libattn_labs.so ] &&
    [ -z "$(find labs/grader labs/solutions -name '*.hpp' -newer "$bin" -print -quit)" ]
}

# Compiles $1 into $2 unless it is up to date, saying what it compiles. A function that can
# end without a return is an error (-Werror=return-type; labs/grader/lab.hpp says so too).
build() {
  local src="$1" bin="$2"
  mkdir -p "$(dirname "$bin")"
  if up_to_date "$src" "$bin"; then
    return 0
  fi
  echo "compiling $src (with $cxx, against build/libattn.so and build/labs/libattn_labs.so) ..."
  # shellcheck disable=SC2046
  "$cxx" -std=c++17 -O1 -Werror=return-type -DXTENSOR_USE_XSIMD -I"$root" $(pkg-config --cflags xtensor xsimd) \
    "$src" -o "$bin.tmp" -L"$root/build/labs" -L"$root/build" -lattn_labs -lattn \
    -Wl,-rpath,"$root/build/labs:$root/build" && mv "$bin.tmp" "$bin"
}

# The state file of a lab: its last grading, one line, for the list.
state_file() { echo "$out/$1.state"; }
save_state() {  # name, text
  printf '%s\n' "$2" > "$(state_file "$1").tmp" && mv "$(state_file "$1").tmp" "$(state_file "$1")"
}

# "k of M" from a grader's last line, or nothing.
count_of() {
  [[ "$1" =~ :\ ([0-9]+)\ of\ ([0-9]+)\ checks\ pass ]] && echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
}

state_text() {  # a grader's last line -> "passed (M of M)", "k of M checks pass" or nothing
  local count k m
  count=$(count_of "$1") || return 0
  read -r k m <<<"$count"
  if [ "$k" = "$m" ]; then echo "passed ($k of $m)"; else echo "$k of $m checks pass"; fi
}

grade() {  # lab number [--solution]
  local dir name work bin log rc last
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
  if ! build "$work" "$bin"; then
    [ "${2:-}" = "--solution" ] || save_state "$name" "does not compile"
    die "$work does not compile (the compiler's messages are above)"
  fi
  log=$(mktemp)
  rc=0
  "$bin" | tee "$log" || rc=${PIPESTATUS[0]}
  last=$(tail -n1 "$log")
  rm -f "$log"
  if [ "${2:-}" != "--solution" ]; then
    if [ -n "$(state_text "$last")" ]; then
      save_state "$name" "$(state_text "$last")"
    else
      save_state "$name" "the grader did not finish"
    fi
  fi
  return "$rc"
}

status() {
  local dir name number work state chapter next="" first_untouched=""
  printf "%-4s %-18s %-11s %s\n" lab name beside state
  for dir in labs/[0-9][0-9]_*/; do
    dir="${dir%/}"
    [ -f "$dir/lab.cpp" ] || continue
    name=$(basename "$dir")
    number=$((10#${name%%_*}))
    work="labs/work/$name.cpp"
    chapter=$(chapter_of "$dir")
    if [ ! -e "$work" ] || cmp -s "$work" "$dir/lab.cpp"; then
      state="untouched"
      [ -n "$first_untouched" ] || first_untouched="$number"
    else
      if [ -e "$(state_file "$name")" ]; then
        state=$(cat "$(state_file "$name")")
        [ "$work" -nt "$(state_file "$name")" ] && state="$state, edited since"
      else
        state="edited, not graded yet"
      fi
      case "$state" in
        passed*", edited since") [ -n "$next" ] || next="$number" ;;
        passed*) ;;
        *) [ -n "$next" ] || next="$number" ;;
      esac
    fi
    printf "%-4s %-18s %-11s %s\n" "$number" "${name#*_}" "chapter ${chapter:-?}" "$state"
  done
  echo
  [ -n "$next" ] || next="$first_untouched"
  if [ -n "$next" ]; then
    dir=$(lab_dir "$next")
    echo "Next: tools/lab.sh $next   (lab $next, ${dir#labs/[0-9][0-9]_}, beside chapter $(chapter_of "$dir"); what to write: $dir/README.md)"
  else
    echo "Every lab passes."
  fi
}

case "${1:-}" in
  "") status ;;
  -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) grade "$@" ;;
esac
