#!/usr/bin/env bash
# The course's notebooks in Jupyter, on Debian 12: installs what is missing
# (tools/setup.sh --with-kernel) and the pinned catalogs of chapter 10 (--with-corpus), builds libattn and the C++ kernel (kernel/),
# registers it as xcpp17 for this user, and starts Jupyter Notebook on notebooks/.
# Usage: tools/notebooks.sh [--no-browser] [other `jupyter notebook` options]
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh --with-kernel --with-corpus
meson setup --reconfigure build >/dev/null  # finds the kernel's packages if setup just installed them
ninja -C build kernel/attn-xcpp labs/libattn_labs.so  # the kernel, and the graders the lab notebooks load
kernel/install_kernelspec.sh --user build

extra=()
[ "$(id -u)" -ne 0 ] || extra+=(--allow-root)
exec jupyter notebook "${extra[@]}" "$@" notebooks/
