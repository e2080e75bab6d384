#!/usr/bin/env bash
# Why this exists: most users meet a linker through their build system, which first runs its own
# checks: CMake's compiler test and ABI detection link through CMAKE_EXE_LINKER_FLAGS, and Meson
# identifies the linker from `-Wl,--version` ("compatible with GNU linkers" is what makes it
# accept dtld as a GNU-like linker). This installs dtld into a temporary prefix
# (scripts/install.sh), puts its bin/ on PATH as a user would, and configures, builds and tests
# examples/buildsys (a shared library, a static library, a program) with:
#   CMake + clang-22: -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=dtld (and the shared-library flags)
#   CMake + gcc:      -DCMAKE_EXE_LINKER_FLAGS=-B<prefix>/libexec/dtld
#   Meson + clang-22: CC_LD=dtld
# Each must have detected dtld (the build system's log names ld.dtld / dtld's --version line)
# and each output must say "Linker: dtld" in .comment; the project's own test then runs.
#
# Usage: scripts/checks/build-systems.sh     Prints "build-systems: N passed, M failed" last.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$ROOT/examples/buildsys
WORK=$(mktemp -d)
trap 'rm -rf -- "$WORK"' EXIT
passed=0
failed=0
check() {
    local name=$1; shift
    if out=$("$@" 2>&1); then echo "ok    $name"; passed=$((passed + 1)); else
        echo "FAIL  $name"; printf '%s\n' "$out" | sed 's/^/      | /' | tail -30; failed=$((failed + 1)); fi
}
for t in cmake meson ninja; do
    command -v $t >/dev/null || { echo "build-systems: error: $t is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done
echo "cmake $(cmake --version | sed -n 's/^cmake version //p'), meson $(meson --version), ninja $(ninja --version)"

P=$WORK/prefix
bash "$ROOT/scripts/install.sh" --prefix "$P" >/dev/null 2>&1 || { echo "build-systems: error: scripts/install.sh failed" >&2; exit 1; }
export PATH=$P/bin:$PATH

# CMake keeps the program of its ABI detection, linked with CMAKE_EXE_LINKER_FLAGS at configure.
abi_linked_by_dtld() {
    local bin
    bin=$(ls "$1"/CMakeFiles/*/CMakeDetermineCompilerABI_C.bin) || return 1
    readelf -p .comment "$bin" | grep -q "Linker: dtld" || { echo "$bin: not linked by dtld"; return 1; }
}
export -f abi_linked_by_dtld

linked_by_dtld() { # <build dir>: the program and the shared library
    for f in "$1/app" "$1/libshapes.so.1.0"; do
        readelf -p .comment "$f" | grep -q 'Linker: dtld' || { echo "$f: not linked by dtld"; readelf -p .comment "$f"; return 1; }
    done
}

B=$WORK/cmake-clang
check "CMake + clang-22 -fuse-ld=dtld: configure (compiler check and ABI detection link with dtld)" bash -c '
    CC=clang-22 cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=dtld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=dtld || exit 1
    grep -q "link line: \[ *\"$3/bin/ld.dtld\"" "$2/CMakeFiles/CMakeOutput.log" \
        || { echo "CMake did not detect the link line of $3/bin/ld.dtld"; grep "link line" "$2/CMakeFiles/CMakeOutput.log"; exit 1; }
    abi_linked_by_dtld "$2"' _ "$SRC" "$B" "$P"
check "  ... build and ctest" bash -c 'cmake --build "$1" && ctest --test-dir "$1" --output-on-failure' _ "$B"
check "  ... outputs linked by dtld" linked_by_dtld "$B"

B=$WORK/cmake-gcc
check "CMake + gcc -B PREFIX/libexec/dtld: configure (ABI detection links with dtld)" bash -c '
    CC=gcc cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_EXE_LINKER_FLAGS="-B$3/libexec/dtld" -DCMAKE_SHARED_LINKER_FLAGS="-B$3/libexec/dtld" || exit 1
    abi_linked_by_dtld "$2"' _ "$SRC" "$B" "$P"
check "  ... build and ctest" bash -c 'cmake --build "$1" && ctest --test-dir "$1" --output-on-failure' _ "$B"
check "  ... outputs linked by dtld" linked_by_dtld "$B"

B=$WORK/meson-clang
check "Meson + clang-22, CC_LD=dtld: setup detects dtld by its --version" bash -c '
    CC=clang-22 CC_LD=dtld meson setup "$2" "$1" --buildtype=release || exit 1
    log=$2/meson-logs/meson-log.txt
    grep -q "^Detecting linker via: clang-22 -Wl,--version -fuse-ld=dtld" "$log" \
        && grep -q "^dtld .* (compatible with GNU linkers)" "$log" \
        || { echo "Meson did not detect dtld:"; grep -A3 "Detecting linker" "$log"; exit 1; }' _ "$SRC" "$B"
check "  ... compile and meson test" bash -c 'meson compile -C "$1" && meson test -C "$1" --print-errorlogs' _ "$B"
check "  ... outputs linked by dtld" linked_by_dtld "$B"

echo "build-systems: $passed passed, $failed failed"
[ $failed -eq 0 ]
