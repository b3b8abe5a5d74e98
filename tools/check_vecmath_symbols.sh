#!/bin/sh
# Checks that a vecmath static library compiled with wider instruction flags
# (core/backend/vecmath/avx2.cpp, avx512.cpp) shares no function with the rest of
# libattn: every weak (inline or template) symbol it defines must name its
# instruction set. A shared one, say an inline helper compiled with AVX-512,
# could be the copy the linker keeps, and crash an older CPU. Run by `meson test`.
#   tools/check_vecmath_symbols.sh <nm> <library.a> <isa name, e.g. avx512>
set -eu
nm="$1" lib="$2" isa="$3"
shared=$("$nm" -C --defined-only "$lib" | grep -E ' [WVu] ' | grep -v "$isa" | grep -v 'DW.ref.__gxx_personality_v0' || true)
if [ -n "$shared" ]; then
  echo "check_vecmath_symbols: $lib defines weak symbols that do not name $isa:"
  echo "$shared"
  exit 1
fi
echo "check_vecmath_symbols: $lib: every weak symbol names $isa"
