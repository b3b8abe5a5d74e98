#!/usr/bin/env bash
# Installs what attn needs from Debian's packages (Debian 12 or later), then
# configures a release build in ./build. Safe to run again: it installs only
# what is missing.  Usage:
#   tools/setup.sh [--with-kernel] [--with-browser] [--with-bench] [--with-corpus]
#   --with-kernel: the Jupyter kernel (kernel/) and Jupyter Notebook: tools/notebooks.sh
#   --with-browser: headless Chromium for tools/browser_test.py
#   --with-corpus: makes sure French message catalogs are there for `attn corpus gettext`
#   (chapter 10): if /usr/share/locale/fr has few, downloads a few packages' .deb files
#   with apt-get download (no install, no root) and unpacks only their French
#   catalogs into ./locale/fr/LC_MESSAGES; then: attn corpus gettext --locale-dir locale
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ pkg-config meson ninja-build cmake python3
          libxtensor-dev libxsimd-dev libxtensor-blas-dev libopenblas-dev doctest-dev
          nlohmann-json3-dev libzip-dev libcli11-dev graphviz)
with_corpus=""
for arg in "$@"; do
  case "$arg" in
    --with-bench) packages+=(libbenchmark-dev python3-torch python3-numpy) ;;
    --with-corpus) with_corpus=1 ;;
    --with-kernel) packages+=(xeus-dev libzmq3-dev libclang-19-dev libclang-cpp19-dev llvm-19-dev
                              jupyter-notebook jupyter-client jupyter-nbconvert python3-nbclient
                              python3-nbconvert python3-jupyter-client python3-jupyter-kernel-test) ;;
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
  installed=$(find /usr/share/locale/fr/LC_MESSAGES -name '*.mo' 2>/dev/null | wc -l)
  if [ "$installed" -ge 20 ]; then
    echo "setup: $installed French catalogs in /usr/share/locale/fr/LC_MESSAGES: enough for attn corpus gettext"
  else
    # Programs every Debian has, whose .deb files carry French catalogs.
    corpus_packages=(coreutils tar grep sed findutils diffutils bash apt dpkg gettext-base wget
                     binutils-common iso-codes util-linux-locales e2fsprogs-l10n git)
    mkdir -p locale/fr/LC_MESSAGES
    debs=$(mktemp -d)
    for p in "${corpus_packages[@]}"; do
      (cd "$debs" && apt-get download -qq "$p" 2>/dev/null) || echo "setup: apt-get download $p failed, skipped" >&2
    done
    for deb in "$debs"/*.deb; do
      [ -e "$deb" ] || continue
      dpkg-deb --fsys-tarfile "$deb" |
        tar -x -C "$debs" --wildcards './usr/share/locale/fr/LC_MESSAGES/*.mo' 2>/dev/null || true
    done
    find "$debs/usr/share/locale/fr/LC_MESSAGES" -name '*.mo' -exec cp {} locale/fr/LC_MESSAGES/ \; 2>/dev/null || true
    rm -rf "$debs"
    echo "setup: $(find locale/fr/LC_MESSAGES -name '*.mo' | wc -l) French catalogs in ./locale;" \
         "build the corpus with: build/cli/attn corpus gettext --locale-dir locale --out en-fr.tsv"
  fi
fi
