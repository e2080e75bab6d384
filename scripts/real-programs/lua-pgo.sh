#!/usr/bin/env bash
# Why this exists: the real-program check of profile-guided code ordering. Lua 5.4 (Debian's
# source) is built the way a PGO build is made: instrumented (-fprofile-instr-generate), trained
# on the Lua checks, then rebuilt with -fprofile-instr-use, whose objects carry
# .llvm.call-graph-profile sections. lua is then linked with ld.lld-22 and with dtld under each
# --call-graph-profile-sort= algorithm (cdsort, lld's default; hfsort; none), and the two links
# must place every function at the same rank (nm -n) — cdsort and hfsort are deterministic
# functions of the graph, so any difference is a bug — and both programs must run the checks
# identically. hfsort's --print-symbol-order= files must be identical too (cdsort writes none,
# as lld).
#
# Usage: scripts/real-programs/lua-pgo.sh <path-to-dtld>
# Env:   LUA_SRC_METHOD=auto|apt|pool   how to fetch the source (see lua.sh)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHECKS=$ROOT/scripts/real-programs/lua-checks
WORK=$ROOT/target/real-programs
SRCDIR=$WORK/src
BUILD=$WORK/lua-pgo

DTLD=${1:-}
[ -n "$DTLD" ] || { echo "usage: $0 <path-to-dtld>" >&2; exit 2; }
case $DTLD in /*) ;; *) DTLD=$PWD/$DTLD ;; esac
[ -x "$DTLD" ] || { echo "lua-pgo: error: linker not executable: $DTLD" >&2; exit 2; }
METHOD=${LUA_SRC_METHOD:-auto}

log() { echo "lua-pgo: $*"; }

. "$ROOT/scripts/real-programs/lua-common.sh"
lua_source

# Lua's `linux` flags (as lua.sh), one function per section so the linker can order them.
CFLAGS_BASE=(-std=gnu99 -O2 -Wall -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -fPIE -ffunction-sections)
compile() {  # $1 = object dir, rest = extra flags
    local dir=$1 c o extra; shift
    rm -rf "$dir"; mkdir -p "$dir"
    for c in "$TREE"/src/*.c; do
        o=$dir/$(basename "${c%.c}").o
        extra=()
        case $(basename "$c") in llex.c|lparser.c|lcode.c) extra=(-Os) ;; esac
        clang-22 "${CFLAGS_BASE[@]}" "${extra[@]}" "$@" -c "$c" -o "$o"
    done
    (cd "$dir" && llvm-ar-22 rcs liblua.a $(ls *.o | grep -vx 'lua.o\|luac.o'))
}

run_checks() {  # $1 = lua binary, $2 = result dir
    local bin=$1 res=$2 script s
    mkdir -p "$res"
    for script in "$CHECKS"/*.lua; do
        s=$(basename "$script" .lua)
        (cd "$CHECKS" && timeout 60 "$bin" "$s.lua" </dev/null >"$res/$s.out" 2>"$res/$s.err.raw"; echo $? >"$res/$s.rc") || true
        sed "s|$bin|lua|g" "$res/$s.err.raw" >"$res/$s.err" && rm -f "$res/$s.err.raw"
    done
}

# ---------------------------------------------------------------------------------------------
# 1. Train: an instrumented lua runs every check; the raw profiles are merged.
start=$SECONDS
rm -rf "$BUILD"; mkdir -p "$BUILD/bin"
compile "$BUILD/obj-gen" -fprofile-instr-generate
clang-22 -fuse-ld=lld -pie -Wl,-E -fprofile-instr-generate "$BUILD/obj-gen/lua.o" "$BUILD/obj-gen/liblua.a" -lm -ldl -o "$BUILD/bin/lua-gen"
LLVM_PROFILE_FILE=$BUILD/prof/%p.profraw run_checks "$BUILD/bin/lua-gen" "$BUILD/results/train"
llvm-profdata-22 merge -o "$BUILD/lua.profdata" "$BUILD"/prof/*.profraw
log "trained on $(ls "$CHECKS"/*.lua | wc -l) checks ($(ls "$BUILD"/prof/*.profraw | wc -l) profiles) in $((SECONDS - start))s"

# 2. Rebuild with the profile: the objects carry call graph profiles.
compile "$BUILD/obj-use" -fprofile-instr-use="$BUILD/lua.profdata" -Wno-profile-instr-out-of-date
n=0
for o in "$BUILD"/obj-use/*.o; do
    llvm-readelf-22 -S "$o" | grep -q ' \.llvm\.call-graph-profile ' && n=$((n + 1))
done
log "$n of $(ls "$BUILD"/obj-use/*.o | wc -l) objects have a .llvm.call-graph-profile section"
[ "$n" -gt 0 ] || { record fail "profile" "no object has a call graph profile (PGO build broken?)"; summary; exit 1; }

# 3. Link with both linkers under each algorithm; compare the function order and the runs.
text_order() { nm -n "$1" | awk '$2 ~ /^[tTwW]$/ { print $3 }'; }
for alg in cdsort hfsort none; do
    for ld in lld dtld; do
        ldflag=-fuse-ld=lld; [ "$ld" = dtld ] && ldflag=--ld-path=$DTLD
        out=$BUILD/bin/$ld-$alg
        rm -f "$out.sym"
        if ! clang-22 "$ldflag" -pie -Wl,-E -Wl,--call-graph-profile-sort=$alg -Wl,--print-symbol-order="$out.sym" \
                "$BUILD/obj-use/lua.o" "$BUILD/obj-use/liblua.a" -lm -ldl -o "$out" >"$out.link.log" 2>&1; then
            sed 's/^/    | /' "$out.link.log" | head -20
            record fail "$alg/link-$ld" "link failed"
            continue 2
        fi
        text_order "$out" >"$out.order"
    done
    L=$BUILD/bin/lld-$alg D=$BUILD/bin/dtld-$alg
    total=$(wc -l <"$L.order")
    if cmp -s "$L.order" "$D.order"; then
        record ok "$alg/function order"
        log "$alg: all $total functions in ld.lld-22's order"
    else
        same=$(paste -d' ' "$L.order" "$D.order" | awk '$1 == $2' | wc -l)
        record fail "$alg/function order" "$same of $total functions at lld's rank"
        diff "$L.order" "$D.order" | head -10 | sed 's/^/    | /' || true
    fi
    # --print-symbol-order=: written by hfsort only, identically.
    if [ -e "$L.sym" ] || [ -e "$D.sym" ]; then
        if [ -e "$L.sym" ] && [ -e "$D.sym" ] && cmp -s "$L.sym" "$D.sym"; then record ok "$alg/--print-symbol-order"
        else record fail "$alg/--print-symbol-order" "files differ (or only one linker wrote one)"; fi
    fi
    run_checks "$L" "$BUILD/results/lld-$alg"; run_checks "$D" "$BUILD/results/dtld-$alg"
    for script in "$CHECKS"/*.lua; do
        s=$(basename "$script" .lua)
        compare_runs "$alg/$s" "$BUILD/results/dtld-$alg/$s" "$BUILD/results/lld-$alg/$s"
    done
done
# The algorithms must actually differ from the unordered layout (else the check tests nothing).
if cmp -s "$BUILD/bin/lld-cdsort.order" "$BUILD/bin/lld-none.order"; then
    record fail "cdsort/reorders" "ld.lld-22's cdsort order equals the input order: nothing was tested"
else
    record ok "cdsort/reorders"
fi
summary
