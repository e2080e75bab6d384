#!/usr/bin/env bash
# Why this exists: a real-program check for dtld. Lua 5.4 from Debian's source package is built
# with clang-22 and linked twice — with the linker under test and with ld.lld-22 — in four link
# modes; both builds run the same Lua checks and must behave identically, byte for byte.
#
# Usage: scripts/real-programs/lua.sh <path-to-dtld>
# Env:   LUA_MODES="pie nopie static static-pie"   link modes to run (default: all four)
#        LUA_SRC_METHOD=auto|apt|pool               how to fetch the source (default: auto =
#                                                   apt-get source, then the Debian pool)
#        KEEP_GOING=1                                (default) report all failures, then exit 1
#        LUA_LTO=thin|full                           build every object as LLVM bitcode
#                                                   (-flto=thin / -flto=full) and link with the
#                                                   same flag (default: off, native objects);
#                                                   LTO=... is read when LUA_LTO is unset
#        LUA_DTLTO=<distributor>                     with LUA_LTO=thin: link both sides with
#                                                   -fthinlto-distributor=<distributor> (DTLTO:
#                                                   the ThinLTO backends run through it; e.g.
#                                                   target/release/dtld-distribute), and require
#                                                   that no temporary is left next to the programs
#        LUA_DTLTO_REF=<distributor>                 the distributor of the ld.lld-22 side
#                                                   (default: LUA_DTLTO). .ci/run gives
#                                                   target/release/dtld-distribute here with
#                                                   LUA_DTLTO=dtld-reapi (REAPI), so the reference
#                                                   does not depend on the engine. dtld-reapi reads
#                                                   its engine from DTLD_REAPI_ENDPOINT (run under
#                                                   `scripts/buildbox.sh serve`); the job file's
#                                                   inputs may be absolute paths (only a sample
#                                                   profile must be relative)
#        LUA_DTLTO_ARGS=a,b                          -Xthinlto-distributor=a,b on the dtld side
# The downloaded source is cached under target/real-programs/src/ (delete it to refetch).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHECKS=$ROOT/scripts/real-programs/lua-checks
WORK=$ROOT/target/real-programs
SRCDIR=$WORK/src
BUILD=$WORK/lua

DTLD=${1:-}
[ -n "$DTLD" ] || { echo "usage: $0 <path-to-dtld>" >&2; exit 2; }
case $DTLD in /*) ;; *) DTLD=$PWD/$DTLD ;; esac
[ -x "$DTLD" ] || { echo "lua: error: linker not executable: $DTLD" >&2; exit 2; }
MODES=${LUA_MODES:-pie nopie static static-pie}
METHOD=${LUA_SRC_METHOD:-auto}
LTO_KIND=${LUA_LTO:-${LTO:-}}
case $LTO_KIND in
    "" | off | none) LTO_KIND=; LTO_FLAGS=(); VARIANT= ;;
    thin | full) LTO_FLAGS=(-flto="$LTO_KIND"); VARIANT=-lto-$LTO_KIND ;;
    *) echo "lua: error: LUA_LTO must be thin or full, not '$LTO_KIND'" >&2; exit 2 ;;
esac
# Objects are the same with and without DTLTO; only the links (and their names) differ.
OBJ_VARIANT=$VARIANT
DTLTO=${LUA_DTLTO:-}
DTLTO_FLAGS=()
if [ -n "$DTLTO" ]; then
    [ "$LTO_KIND" = thin ] || { echo "lua: error: LUA_DTLTO needs LUA_LTO=thin" >&2; exit 2; }
    case $DTLTO in /*) ;; *) DTLTO=$PWD/$DTLTO ;; esac
    [ -f "$DTLTO" ] && [ -x "$DTLTO" ] || {
        echo "lua: error: DTLTO distributor not executable: $DTLTO" >&2; exit 2; }
    DTLTO_FLAGS=(-fthinlto-distributor="$DTLTO")
    VARIANT=$VARIANT-dtlto
fi
# The ld.lld-22 side's distributor, and extra distributor arguments for the dtld side.
DTLTO_REF_FLAGS=("${DTLTO_FLAGS[@]}")
if [ -n "${LUA_DTLTO_REF:-}" ]; then
    [ -n "$DTLTO" ] || { echo "lua: error: LUA_DTLTO_REF needs LUA_DTLTO" >&2; exit 2; }
    DTLTO_REF_FLAGS=(-fthinlto-distributor="$LUA_DTLTO_REF")
fi
[ -z "${LUA_DTLTO_ARGS:-}" ] || DTLTO_FLAGS+=(-Xthinlto-distributor="$LUA_DTLTO_ARGS")

log() { echo "lua: $*"; }

# ---------------------------------------------------------------------------------------------
# 1. Source: Debian's lua5.4 source package, unpacked with its patches applied.
. "$ROOT/scripts/real-programs/lua-common.sh"
lua_source

# ---------------------------------------------------------------------------------------------
# 2. Compile (once per code model) with the flags of Lua's `linux` target; the parser and code
#    generator get -Os as in Debian's Makefile. Objects go into liblua.a, like upstream. With
#    LUA_LTO the objects are bitcode and live in obj-<model>-lto-<kind>/.
CFLAGS_BASE=(-std=gnu99 -O2 -Wall -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -g "${LTO_FLAGS[@]}")
compile() {   # $1 = pic|nopic
    local model=$1 dir=$BUILD/obj-$1$OBJ_VARIANT flag c o extra
    [ "$model" = pic ] && flag=-fPIE || flag=-fno-pic
    mkdir -p "$dir"
    # Recompile everything when the flags change.
    if [ "$(cat "$dir/.flags" 2>/dev/null)" != "${CFLAGS_BASE[*]} $flag" ]; then
        rm -f "$dir"/*.o; echo "${CFLAGS_BASE[*]} $flag" >"$dir/.flags"
    fi
    for c in "$TREE"/src/*.c; do
        o=$dir/$(basename "${c%.c}").o
        [ "$o" -nt "$c" ] && continue
        extra=()
        case $(basename "$c") in llex.c|lparser.c|lcode.c) extra=(-Os) ;; esac
        clang-22 "${CFLAGS_BASE[@]}" "$flag" "${extra[@]}" -c "$c" -o "$o"
    done
    rm -f "$dir/liblua.a"
    (cd "$dir" && llvm-ar-22 rcs liblua.a $(ls *.o | grep -vx 'lua.o\|luac.o'))
    [ -z "$LTO_KIND" ] || require_bitcode "LUA_LTO=$LTO_KIND" "$dir"/*.o
}
start=$SECONDS
compile pic
compile nopic
log "compiled Lua with clang-22${LTO_KIND:+ (-flto=$LTO_KIND)} in $((SECONDS - start))s"
[ -z "$DTLTO" ] || log "DTLTO: dtld links use ${DTLTO_FLAGS[*]}; ld.lld-22 links use ${DTLTO_REF_FLAGS[*]}"

# ---------------------------------------------------------------------------------------------
# 3. Link lua and luac with each linker in each mode.
mode_flags() {
    case $1 in
        pie)        echo "pic -pie -Wl,-E" ;;
        nopie)      echo "nopic -no-pie -Wl,-E" ;;
        static)     echo "nopic -static" ;;
        static-pie) echo "pic -static-pie" ;;
        *) echo "bad mode $1" >&2; return 1 ;;
    esac
}

link() {  # $1 = linker name, $2 = -fuse-ld value, $3 = mode
    local name=$1 ld=$2 mode=$3 model flags out p obj left
    read -r model flags <<<"$(mode_flags "$mode")"
    out=$BUILD/bin/$name-$mode$VARIANT
    obj=$BUILD/obj-$model$OBJ_VARIANT
    rm -rf "$out" && mkdir -p "$out"
    for p in lua luac; do
        # With LUA_LTO, -flto=<kind> makes clang pass -plugin .../LLVMgold.so and -plugin-opt=
        # to dtld (only the -plugin-opt= options to ld.lld), as a real LTO build would. With
        # LUA_DTLTO, clang also passes --thinlto-distributor= and --thinlto-remote-compiler= to
        # either linker.
        # shellcheck disable=SC2086
        local dflags=("${DTLTO_FLAGS[@]}")
        [ "$name" = lld ] && dflags=("${DTLTO_REF_FLAGS[@]}")
        if ! clang-22 -fuse-ld="$ld" $flags "${LTO_FLAGS[@]}" "${dflags[@]}" "$obj/$p.o" \
                "$obj/liblua.a" -lm -ldl -o "$out/$p" >"$out/$p.link.log" 2>&1; then
            sed 's/^/    | /' "$out/$p.link.log" | head -20
            return 1
        fi
    done
    # A REAPI distributor's end-of-link counts (cache hits, executed, uploaded bytes), for the log.
    grep -h '^dtld-reapi: summary:' "$out"/*.link.log 2>/dev/null | sed "s/^dtld-reapi: /lua: $name $mode: dtld-reapi /" || true
    # DTLTO temporaries (job file, shards, native objects, extracted archive members,
    # <output>.dtld-lto/) go next to the output: none may be left.
    if [ -n "$DTLTO" ]; then
        left=$(ls -A "$out" | grep -vx 'lua\|luac\|lua.link.log\|luac.link.log' || true)
        if [ -n "$left" ]; then
            echo "$left" | head -10 | sed 's/^/    left: /'
            return 1
        fi
    fi
}

# ---------------------------------------------------------------------------------------------
# 4. Run the checks with both builds and compare.
#    Each check: exit code, stdout and stderr must be identical; the lld build must exit 0.
run_one() {  # $1 = bin dir, $2 = result prefix, rest = command args (run in $CHECKS)
    local bin=$1 res=$2; shift 2
    (cd "$CHECKS" && timeout 30 "$bin/lua" "$@" </dev/null >"$res.out" 2>"$res.err.raw"; echo $? >"$res.rc") || true
    # lua prefixes its messages with argv[0], which differs between the two builds.
    sed "s|$bin/lua|lua|g" "$res.err.raw" >"$res.err" && rm -f "$res.err.raw"
}

# dtld's lua running a bytecode file: $1 = result prefix, $2 = the file.
run_dtld_bytecode() { run_one "$D" "$1" "$2"; }

for m in $MODES; do
    # Check names and directories carry the LTO variant: pie, or pie-lto-thin.
    mode=$m$VARIANT
    log "mode $mode: linking lua and luac with dtld and with ld.lld-22"
    if ! link lld lld "$m"; then record fail "$mode/link-lld" "reference link failed (or left temporaries)"; continue; fi
    if ! link dtld "$DTLD" "$m"; then record fail "$mode/link-dtld" "dtld link failed (or left temporaries)"; continue; fi
    record ok "$mode/link"
    D=$BUILD/bin/dtld-$mode; L=$BUILD/bin/lld-$mode
    R=$BUILD/results/$mode; rm -rf "$R"; mkdir -p "$R"

    # Interpreter basics: version banner, -e, a script on stdin.
    run_one "$D" "$R/v.dtld" -v; run_one "$L" "$R/v.lld" -v
    compare_runs "$mode/lua -v" "$R/v.dtld" "$R/v.lld"
    run_one "$D" "$R/e.dtld" -e 'print(("x"):rep(3), 7 // 2, 7 / 2, math.type(1), #arg)'
    run_one "$L" "$R/e.lld" -e 'print(("x"):rep(3), 7 // 2, 7 / 2, math.type(1), #arg)'
    compare_runs "$mode/lua -e" "$R/e.dtld" "$R/e.lld"

    for script in "$CHECKS"/*.lua; do
        s=$(basename "$script" .lua)
        run_one "$D" "$R/$s.dtld" "$s.lua"; run_one "$L" "$R/$s.lld" "$s.lua"
        compare_runs "$mode/$s" "$R/$s.dtld" "$R/$s.lld"
        # luac: both builds must produce the same bytecode, and running it must give the
        # same result as running the source.
        (cd "$CHECKS" && timeout 30 "$D/luac" -o "$R/$s.dtld.luac" "$s.lua") 2>"$R/$s.luac.err" || true
        (cd "$CHECKS" && timeout 30 "$L/luac" -o "$R/$s.lld.luac" "$s.lua") 2>>"$R/$s.luac.err" || true
        compare_bytecode "$R/$s" "$mode/$s" run_dtld_bytecode "$R/$s.luac.err"
    done
done

echo "lua: modes: $MODES${LTO_KIND:+ (LTO: $LTO_KIND${DTLTO:+, DTLTO via $DTLTO})}; checks: $(ls "$CHECKS"/*.lua | wc -l) scripts; results under ${BUILD#$ROOT/}/results"
summary
