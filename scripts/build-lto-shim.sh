#!/usr/bin/env bash
# Why this exists: builds dtld's in-process thin-link library (src/lto/shim/dtld_lto.cpp)
# against an LLVM installation's shared libLLVM, next to the dtld binary, so that ThinLTO
# links whose LLVM is that installation run the thin link and the backends inside dtld
# (src/lto/inproc.rs) instead of in `llvm-lto2` or LLVMgold.so. The library only works with
# the libLLVM it was built against: dtld loads it when the link's LLVM installation is that
# one, and takes the llvm-lto2 / LLVMgold path otherwise.
#
# Usage: scripts/build-lto-shim.sh [<llvm-config>] [<out-dir>]
#   defaults: the first of llvm-config-22, llvm-config on PATH; ${CARGO_TARGET_DIR:-target}/release.
# An up-to-date library (newer than its source and this script) is left as it is.
# Without an llvm-config with headers (Debian: llvm-NN-dev) it says so and exits 0: dtld
# works without the library.
set -euo pipefail
cd "$(dirname "$0")/.."
cfg="${1:-}"
out="${2:-${CARGO_TARGET_DIR:-target}/release}"
if [ -z "$cfg" ]; then
    for c in llvm-config-22 llvm-config; do
        if command -v "$c" >/dev/null 2>&1; then cfg="$c"; break; fi
    done
fi
if [ -z "$cfg" ] || [ ! -f "$("$cfg" --includedir)/llvm/LTO/LTO.h" ]; then
    echo "build-lto-shim: no llvm-config with LLVM's headers (install llvm-22-dev): dtld's thin link stays out of process"
    exit 0
fi
if [ "$("$cfg" --shared-mode)" != shared ]; then
    echo "build-lto-shim: $cfg's LLVM has no shared libLLVM: dtld's thin link stays out of process"
    exit 0
fi
major="$("$cfg" --version | cut -d. -f1)"
libdir="$("$cfg" --libdir)"
cxx="${CXX:-}"
if [ -z "$cxx" ]; then
    bindir="$("$cfg" --bindir)"
    if [ -x "$bindir/clang++" ]; then cxx="$bindir/clang++"; else cxx=c++; fi
fi
mkdir -p "$out"
dest="$out/libdtld-lto-$major.so"
if [ -f "$dest" ] && [ "$dest" -nt src/lto/shim/dtld_lto.cpp ] && [ "$dest" -nt src/lto/shim/cache_key.h ] && [ "$dest" -nt "$0" ]; then
    echo "build-lto-shim: $dest is up to date"
    exit 0
fi
# -fno-rtti where LLVM has none; the library links libLLVM by its soname, found through
# RUNPATH in the installation it was built against.
rtti=""
[ "$("$cfg" --has-rtti)" = YES ] || rtti="-fno-rtti"
# shellcheck disable=SC2046
"$cxx" -shared -fPIC -O2 $rtti $("$cfg" --cxxflags) -fvisibility=hidden \
    -Wall -Wno-unused-parameter \
    src/lto/shim/dtld_lto.cpp -o "$dest.tmp" \
    -L"$libdir" -lLLVM -Wl,-rpath,"$libdir" -Wl,--as-needed
mv "$dest.tmp" "$dest"
echo "build-lto-shim: $dest (LLVM $("$cfg" --version), $libdir)"
