#!/usr/bin/env bash
# Registers the kernel of a build with Jupyter under the name xcpp17, the
# kernel the notebooks ask for. Run it again after moving the checkout.
# Usage: kernel/install_kernelspec.sh [--user | --sys-prefix] [BUILD_DIR]
#   --user (default): ~/.local/share/jupyter/kernels/xcpp17
#   --sys-prefix: the Python prefix's share/jupyter/kernels/xcpp17 (e.g. a venv)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=--user
build=build
for arg in "$@"; do
  case "$arg" in
    --user | --sys-prefix) mode=$arg ;;
    -*) echo "install_kernelspec.sh: unknown option '$arg'" >&2; exit 2 ;;
    *) build=$arg ;;
  esac
done
spec="$build/kernel/share/jupyter/kernels/xcpp17"
if [ ! -f "$spec/kernel.json" ] || [ ! -x "$build/kernel/attn-xcpp" ]; then
  echo "install_kernelspec.sh: no kernel in $build: run tools/setup.sh --with-kernel, then ninja -C $build kernel/attn-xcpp" >&2
  exit 1
fi
# (jupyter_client's API: Debian's `jupyter kernelspec` command is in another package.)
/usr/bin/python3 - "$mode" "$(readlink -f "$spec")" <<'PY'
import sys
from jupyter_client.kernelspec import KernelSpecManager
mode, source = sys.argv[1], sys.argv[2]
where = KernelSpecManager().install_kernel_spec(source, "xcpp17", user=(mode == "--user"),
                                                prefix=(sys.prefix if mode == "--sys-prefix" else None))
print("kernel xcpp17 registered in " + where)
PY
