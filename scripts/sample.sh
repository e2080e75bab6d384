#!/usr/bin/env bash
# Why this exists: the quick-start proof that dtld links a real C program. Builds
# examples/hello (main.c + libgreet.a from greet.c and count.c) with clang-22, links it with the
# given linker, runs it, and compares its output with the same program linked by ld.lld-22.
#
# Usage: scripts/sample.sh [path-to-dtld]     (default: target/release/dtld)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DTLD=${1:-${DTLD:-$ROOT/target/release/dtld}}
case $DTLD in /*) ;; *) DTLD=$PWD/$DTLD ;; esac
[ -x "$DTLD" ] || { echo "sample: error: linker not found or not executable: $DTLD" >&2; exit 1; }

SRC=$ROOT/examples/hello
OUT=$ROOT/target/examples/hello
rm -rf "$OUT" && mkdir -p "$OUT"

run() { echo "+ $*" | sed "s|$ROOT/||g"; "$@"; }

echo "== compiling examples/hello with clang-22"
for f in main greet count; do run clang-22 -O2 -c "$SRC/$f.c" -o "$OUT/$f.o"; done
run llvm-ar-22 rcs "$OUT/libgreet.a" "$OUT/greet.o" "$OUT/count.o"

echo "== linking with dtld ($DTLD)"
run clang-22 -fuse-ld="$DTLD" "$OUT/main.o" -L"$OUT" -lgreet -o "$OUT/hello"
echo "== linking with ld.lld-22 (reference)"
run clang-22 -fuse-ld=lld "$OUT/main.o" -L"$OUT" -lgreet -o "$OUT/hello.lld"

echo "== running"
set +e
"$OUT/hello" > "$OUT/out.dtld" 2>&1; rc=$?
"$OUT/hello.lld" > "$OUT/out.lld" 2>&1; rc_lld=$?
set -e
sed 's/^/  | /' "$OUT/out.dtld"
echo "  dtld-linked exit code: $rc (lld-linked: $rc_lld)"
file "$OUT/hello" | sed "s|$ROOT/||; s/^/  /"
if [ $rc -eq 0 ] && [ $rc_lld -eq 0 ] && cmp -s "$OUT/out.dtld" "$OUT/out.lld"; then
    echo "sample: OK — the dtld-linked program ran and matches the ld.lld-22 build"
else
    echo "sample: FAILED — output or exit code differs from the ld.lld-22 build" >&2
    diff "$OUT/out.lld" "$OUT/out.dtld" >&2 || true
    exit 1
fi

# The main job: distributed ThinLTO. The same program as ThinLTO bitcode (the library's members
# too), linked by dtld with its local distributor running the backend compiles.
DIST=${DTLD_DISTRIBUTOR:-$(dirname "$DTLD")/dtld-distribute}
[ -x "$DIST" ] || { echo "sample: error: distributor not found: $DIST (cargo build --release --workspace --bins)" >&2; exit 1; }
echo "== compiling examples/hello with clang-22 -flto=thin"
for f in main greet count; do run clang-22 -O2 -flto=thin -c "$SRC/$f.c" -o "$OUT/$f.bc.o"; done
run llvm-ar-22 rcs "$OUT/libgreet-lto.a" "$OUT/greet.bc.o" "$OUT/count.bc.o"
echo "== linking with dtld, backends distributed by dtld-distribute (DTLTO)"
run clang-22 -flto=thin -fuse-ld="$DTLD" -fthinlto-distributor="$DIST" "$OUT/main.bc.o" -L"$OUT" -lgreet-lto -o "$OUT/hello-dtlto" -Wl,--verbose 2>&1 \
    | grep -E '^(\+ |dtld: (thinlto|time):|dtld-distribute:)'
echo "== linking with ld.lld-22 and the same distributor (reference)"
run clang-22 -flto=thin -fuse-ld=lld -fthinlto-distributor="$DIST" "$OUT/main.bc.o" -L"$OUT" -lgreet-lto -o "$OUT/hello-dtlto.lld"
set +e
"$OUT/hello-dtlto" > "$OUT/out-dtlto.dtld" 2>&1; rc=$?
"$OUT/hello-dtlto.lld" > "$OUT/out-dtlto.lld" 2>&1; rc_lld=$?
set -e
sed 's/^/  | /' "$OUT/out-dtlto.dtld"
if [ $rc -eq 0 ] && [ $rc_lld -eq 0 ] && cmp -s "$OUT/out-dtlto.dtld" "$OUT/out-dtlto.lld" && cmp -s "$OUT/out-dtlto.dtld" "$OUT/out.lld"; then
    echo "sample: OK — the DTLTO link by dtld ran and matches ld.lld-22's"
else
    echo "sample: FAILED — the DTLTO build differs from the ld.lld-22 build" >&2
    diff "$OUT/out-dtlto.lld" "$OUT/out-dtlto.dtld" >&2 || true
    exit 1
fi
