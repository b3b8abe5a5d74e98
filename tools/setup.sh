#!/usr/bin/env bash
# Installs what attn needs from Debian's packages (Debian 12 or later), then
# configures a release build in ./build. Safe to run again: it installs only
# what is missing.  Usage:
#   tools/setup.sh [--with-kernel] [--with-browser] [--with-bench] [--with-corpus]
#   --with-kernel: the Jupyter kernel (kernel/) and Jupyter Notebook: tools/notebooks.sh
#   --with-browser: headless Chromium for tools/browser_test.py
#   --with-corpus: the pinned French and German message catalogs of chapter 10
#   (data/pinned/gettext-bookworm.json): tools/pinned_corpus.py fetch downloads their
#   packages with apt-get download (no install, no root), checks every catalog's SHA-256
#   and unpacks them into ./locale; then: attn corpus gettext --locale-dir locale;
#   and the pinned manual pages of chapter 18 (data/pinned/manpages-bookworm.json),
#   checked, into ./manpages, rendered into ./manpages.jsonl and that file checked
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ pkg-config meson ninja-build cmake python3 python3-nltk
          libxtensor-dev libxsimd-dev libxtensor-blas-dev libopenblas-dev doctest-dev
          nlohmann-json3-dev libzip-dev libcli11-dev graphviz librapidcheck-dev libpng-dev
          espeak-ng groff-base)  # libpng-dev: PNG pictures (io/png.cpp); espeak-ng: spoken words made on the machine (audio/speak.hpp);
          # groff-base: the pinned manual pages rendered (tools/pinned_manpages.py)
with_corpus=""
for arg in "$@"; do
  case "$arg" in
    --with-bench) packages+=(libbenchmark-dev python3-torch python3-numpy) ;;
    --with-corpus) with_corpus=1 ;;
    --with-kernel) packages+=(xeus-dev libzmq3-dev libclang-19-dev libclang-cpp19-dev llvm-19-dev clang-19
                              jupyter-notebook jupyter-client jupyter-nbconvert python3-nbclient
                              python3-nbconvert python3-jupyter-client python3-jupyter-kernel-test
                              jupyter-console python3-pexpect strace) ;;  # strace: the files a notebook reads
    --with-browser) packages+=(chromium chromium-driver python3-selenium) ;;
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
elif ((${#missing[@]})); then
  meson setup --reconfigure build >/dev/null  # optional parts (the kernel) find what was just installed
fi

if [ -n "$with_corpus" ]; then
  # The pinned catalogs of data/pinned/gettext-bookworm.json, checked, into ./locale.
  python3 tools/pinned_corpus.py fetch
  echo "setup: build the corpus with: build/cli/attn corpus gettext --locale-dir locale --out en-fr.tsv"
  # Chapter 18's documents: the pinned manual pages, rendered once (about a minute), then checked.
  python3 tools/pinned_manpages.py fetch
  if ! python3 tools/pinned_manpages.py check-corpus manpages.jsonl >/dev/null 2>&1; then
    python3 tools/pinned_manpages.py corpus --out manpages.jsonl
    python3 tools/pinned_manpages.py check-corpus manpages.jsonl
  fi
fi
