#!/usr/bin/env bash
# One command that sets up, builds and runs the main demo: tools/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
ninja -C build
exec build/cli/attn demo "$@"
