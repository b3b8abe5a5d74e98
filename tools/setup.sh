#!/usr/bin/env bash
# Installs what attn needs from Debian's packages (Debian 12 or later), then
# configures a release build in ./build. Safe to run again: it installs only
# what is missing.  Usage: tools/setup.sh [--with-notebook-runner] [--with-bench]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ pkg-config meson ninja-build cmake python3
          libxtensor-dev libxsimd-dev libxtensor-blas-dev libopenblas-dev doctest-dev
          nlohmann-json3-dev libzip-dev libcli11-dev graphviz)
for arg in "$@"; do
  case "$arg" in
    --with-notebook-runner) packages+=(clang-tools-19 libclang-rt-19-dev) ;;
    --with-bench) packages+=(libbenchmark-dev python3-torch python3-numpy) ;;
    *) echo "setup.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -f build/build.ninja ]; then
  meson setup build --buildtype=release
fi
