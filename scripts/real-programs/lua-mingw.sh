#!/usr/bin/env bash
# Why this exists: the real-program check for dtld's COFF/PE (MinGW) support. Lua 5.4 from
# Debian's source package (the same cached source as lua.sh) is built for x86_64-w64-mingw32
# with clang-22 the way Lua's own `make mingw` does it: lua54.dll (the core and the standard
# libraries, -DLUA_BUILD_AS_DLL), lua.exe using that DLL, and luac.exe linked statically with
# the library objects. Everything is linked twice — by the linker under test
# (-fuse-ld=<dtld>, which clang runs as `-m i386pep`) and by ld.lld-22's MinGW driver — and
# both builds run the Lua checks under wine and must behave identically, byte for byte; so must
# the mixed pairs (dtld's lua.exe with lld's lua54.dll and the reverse) and the bytecode each
# luac.exe writes.
#
# Usage: scripts/real-programs/lua-mingw.sh <path-to-dtld>
# Env:   LUA_SRC_METHOD=auto|apt|pool     how to fetch the source (default auto; see lua.sh)
#        LUA_MINGW_LTO=thin               compile to ThinLTO bitcode and link with -flto=thin
#                                         (in-process on both sides; default: native objects)
#        LUA_MINGW_DTLTO=<distributor>    with LUA_MINGW_LTO=thin: dtld's links use DTLTO through
#                                         this distributor (ld.lld-22's MinGW driver rejects
#                                         --thinlto-distributor, so its side stays in-process)
#        DTLD_WINE=<wine64>               wine's loader (default /usr/lib/wine/wine64)
# Work (objects, the two builds, results, the wine prefix) lives under
# target/real-programs/lua-mingw/; the wine prefix is created on the first run (~5 s) and the
# wineserver is stopped when the script ends.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHECKS=$ROOT/scripts/real-programs/lua-checks
SRCDIR=$ROOT/target/real-programs/src
BUILD=$ROOT/target/real-programs/lua-mingw
TRIPLE=--target=x86_64-w64-mingw32

DTLD=${1:-}
[ -n "$DTLD" ] || { echo "usage: $0 <path-to-dtld>" >&2; exit 2; }
case $DTLD in /*) ;; *) DTLD=$PWD/$DTLD ;; esac
[ -x "$DTLD" ] || { echo "lua-mingw: error: linker not executable: $DTLD" >&2; exit 2; }
METHOD=${LUA_SRC_METHOD:-auto}
case ${LUA_MINGW_LTO:-} in
    "" | off | none) LTO_FLAGS=(); VARIANT=native ;;
    thin) LTO_FLAGS=(-flto=thin); VARIANT=lto-thin ;;
    *) echo "lua-mingw: error: LUA_MINGW_LTO must be thin, not '$LUA_MINGW_LTO'" >&2; exit 2 ;;
esac
DIST_FLAGS=()
if [ -n "${LUA_MINGW_DTLTO:-}" ]; then
    [ "$VARIANT" = lto-thin ] || { echo "lua-mingw: error: LUA_MINGW_DTLTO needs LUA_MINGW_LTO=thin" >&2; exit 2; }
    case $LUA_MINGW_DTLTO in /*) ;; *) LUA_MINGW_DTLTO=$PWD/$LUA_MINGW_DTLTO ;; esac
    [ -x "$LUA_MINGW_DTLTO" ] || { echo "lua-mingw: error: distributor not executable: $LUA_MINGW_DTLTO" >&2; exit 2; }
    DIST_FLAGS=(-fthinlto-distributor="$LUA_MINGW_DTLTO"); VARIANT=dtlto
fi
WINE=${DTLD_WINE:-/usr/lib/wine/wine64}
WINESERVER=$(dirname "$WINE")/wineserver
[ -x "$WINE" ] || { echo "lua-mingw: error: wine's loader $WINE is missing (scripts/setup.sh installs wine64)" >&2; exit 2; }

log() { echo "lua-mingw: $*"; }
t0=$SECONDS

# ---------------------------------------------------------------------------------------------
# 1. Source: Debian's lua5.4 source package (shared with lua.sh).
. "$ROOT/scripts/real-programs/lua-common.sh"
lua_source

# ---------------------------------------------------------------------------------------------
# 2. Compile like `make mingw` (Lua's src/Makefile): CFLAGS -O2 -Wall -DLUA_COMPAT_5_3, the
#    DLL's objects and lua.o with -DLUA_BUILD_AS_DLL (dllexport / dllimport of the API),
#    luac.o and the objects of its static liblua.a without it (luac uses internal symbols).
CFLAGS=(-std=gnu99 -O2 -Wall -DLUA_COMPAT_5_3 "${LTO_FLAGS[@]}")
compile() {  # $1 = obj dir, rest = extra flags
    local dir=$BUILD/$1 c o extra want; shift
    want="${CFLAGS[*]} $*"
    mkdir -p "$dir"
    if [ "$(cat "$dir/.flags" 2>/dev/null)" != "$want" ]; then
        rm -f "$dir"/*.o "$dir"/*.a; echo "$want" >"$dir/.flags"
    fi
    for c in "$TREE"/src/*.c; do
        o=$dir/$(basename "${c%.c}").o
        [ "$o" -nt "$c" ] && continue
        extra=()
        case $(basename "$c") in llex.c|lparser.c|lcode.c) extra=(-Os) ;; esac
        clang-22 "$TRIPLE" "${CFLAGS[@]}" "$@" "${extra[@]}" -c "$c" -o "$o"
    done
}
start=$SECONDS
# The DTLTO variant links the same bitcode as lto-thin.
OBJV=$VARIANT; [ "$VARIANT" = dtlto ] && OBJV=lto-thin
compile obj-dll-$OBJV -DLUA_BUILD_AS_DLL
compile obj-static-$OBJV
CORE=$(cd "$BUILD/obj-static-$OBJV" && ls *.o | grep -vx 'lua.o\|luac.o')
rm -f "$BUILD/obj-static-$OBJV/liblua.a"
# shellcheck disable=SC2086
(cd "$BUILD/obj-static-$OBJV" && llvm-ar-22 rcs liblua.a $CORE)
[ ${#LTO_FLAGS[@]} -eq 0 ] || require_bitcode LUA_MINGW_LTO "$BUILD"/obj-*-$OBJV/*.o
log "compiled Lua for x86_64-w64-mingw32 with clang-22${LTO_FLAGS:+ (${LTO_FLAGS[*]})} in $((SECONDS - start))s"

# ---------------------------------------------------------------------------------------------
# 3. Link with each linker: lua54.dll (+ its import library liblua54.dll.a), lua.exe against
#    that import library, luac.exe with liblua.a. `-s` as in the Makefile's SYSLDFLAGS.
link() {  # $1 = side name, $2 = -fuse-ld value, rest = extra link flags
    local name=$1 ld=$2 out=$BUILD/bin-$VARIANT/$1 dll=$BUILD/obj-dll-$OBJV st=$BUILD/obj-static-$OBJV
    shift 2
    local LTO_FLAGS=("${LTO_FLAGS[@]}" "$@")
    rm -rf "$out" && mkdir -p "$out"
    # shellcheck disable=SC2046
    (cd "$out" && clang-22 "$TRIPLE" -fuse-ld="$ld" "${LTO_FLAGS[@]}" -shared -s \
        $(for o in $CORE; do echo "$dll/$o"; done) -o lua54.dll -Wl,--out-implib,liblua54.dll.a \
        >link.log 2>&1 &&
     clang-22 "$TRIPLE" -fuse-ld="$ld" "${LTO_FLAGS[@]}" -s "$dll/lua.o" liblua54.dll.a -o lua.exe \
        >>link.log 2>&1 &&
     clang-22 "$TRIPLE" -fuse-ld="$ld" "${LTO_FLAGS[@]}" -s "$st/luac.o" "$st/liblua.a" -o luac.exe \
        >>link.log 2>&1) || { sed 's/^/    | /' "$out/link.log" | head -20; return 1; }
}

# ---------------------------------------------------------------------------------------------
# 4. Wine: a prefix of our own, created once; one wineserver for the whole run, stopped at exit.
export WINEPREFIX=$BUILD/wine WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY
stop_wine() { "$WINESERVER" -k >/dev/null 2>&1 || true; "$WINESERVER" -w >/dev/null 2>&1 || true; }
trap stop_wine EXIT
if [ ! -f "$WINEPREFIX/system.reg" ]; then
    log "creating the wine prefix ${WINEPREFIX#$ROOT/}"
    mkdir -p "$WINEPREFIX"
    timeout 300 "$WINE" wineboot -i >/dev/null 2>&1 || true
    timeout 120 "$WINESERVER" -w || true
    [ -f "$WINEPREFIX/system.reg" ] || { log "error: wineboot did not create the prefix"; exit 1; }
fi
"$WINESERVER" -p60 </dev/null >/dev/null 2>&1

# Runs lua.exe (or luac.exe: $3) of bin dir $1 under wine in $CHECKS, output to prefix $2.
run_one() {  # $1 = bin dir, $2 = result prefix, $3 = exe, rest = args
    local bin=$1 res=$2 exe=$3; shift 3
    (cd "$CHECKS" && timeout 60 "$WINE" "$bin/$exe" "$@" </dev/null >"$res.out" 2>"$res.err.raw"; echo $? >"$res.rc") || true
    # Lua prefixes its messages with argv[0], which wine gives as the build's Windows path
    # (Z:\work\...\lua.exe): write it as `lua.exe`.
    sed -E 's|Z:\\[^:]*\\(luac?\.exe):|\1:|g' "$res.err.raw" >"$res.err" && rm -f "$res.err.raw"
}

# dtld's lua.exe running a bytecode file: $1 = result prefix, $2 = the file.
run_dtld_bytecode() { run_one "$D" "$1" lua.exe "$2"; }

V=$VARIANT
log "$V: linking lua54.dll, lua.exe and luac.exe with dtld and with ld.lld-22 (MinGW)"
if ! link lld lld; then record fail "$V/link-lld" "reference link failed"
elif ! link dtld "$DTLD" "${DIST_FLAGS[@]}"; then record fail "$V/link-dtld" "dtld link failed"
else
    record ok "$V/link"
    D=$BUILD/bin-$V/dtld; L=$BUILD/bin-$V/lld
    # The mixed pairs: each lua.exe with the other linker's lua54.dll.
    for p in dtld lld; do
        q=$([ $p = dtld ] && echo lld || echo dtld)
        rm -rf "$BUILD/bin-$V/mixed-$p-exe" && mkdir -p "$BUILD/bin-$V/mixed-$p-exe"
        cp "$BUILD/bin-$V/$p/lua.exe" "$BUILD/bin-$V/$q/lua54.dll" "$BUILD/bin-$V/mixed-$p-exe/"
    done
    R=$BUILD/results-$V; rm -rf "$R"; mkdir -p "$R"

    run_one "$L" "$R/v.lld" lua.exe -v
    run_one "$D" "$R/v.dtld" lua.exe -v
    compare_runs "$V/lua -v" "$R/v.dtld" "$R/v.lld"
    expr='print(("x"):rep(3), 7 // 2, 7 / 2, math.type(1), #arg, package.config:sub(1, 1))'
    run_one "$L" "$R/e.lld" lua.exe -e "$expr"
    run_one "$D" "$R/e.dtld" lua.exe -e "$expr"
    compare_runs "$V/lua -e" "$R/e.dtld" "$R/e.lld"
    # An error: message (with argv[0]) and traceback on stderr, exit status 1.
    run_one "$L" "$R/err.lld" lua.exe -e "local t = setmetatable({}, {__index = function() error('boom') end}); return t.x"
    run_one "$D" "$R/err.dtld" lua.exe -e "local t = setmetatable({}, {__index = function() error('boom') end}); return t.x"
    if grep -q boom "$R/err.lld.err" && [ "$(cat "$R/err.lld.rc")" = 1 ]; then
        compare_runs "$V/lua error" "$R/err.dtld" "$R/err.lld" fails
    else
        record fail "$V/lua error" "the lld-linked lua did not report the error (check broken?)"
    fi

    for script in "$CHECKS"/*.lua; do
        s=$(basename "$script" .lua)
        run_one "$L" "$R/$s.lld" lua.exe "$s.lua"
        run_one "$D" "$R/$s.dtld" lua.exe "$s.lua"
        compare_runs "$V/$s" "$R/$s.dtld" "$R/$s.lld"
        for p in dtld lld; do
            run_one "$BUILD/bin-$V/mixed-$p-exe" "$R/$s.mixed-$p" lua.exe "$s.lua"
            compare_runs "$V/$s (mixed: $p lua.exe)" "$R/$s.mixed-$p" "$R/$s.lld"
        done
        # luac.exe: both builds must write the same bytecode, and running it must give the same
        # result as running the source.
        run_one "$L" "$R/$s.luac.lld" luac.exe -o "$R/$s.lld.luac" "$s.lua"
        run_one "$D" "$R/$s.luac.dtld" luac.exe -o "$R/$s.dtld.luac" "$s.lua"
        compare_bytecode "$R/$s" "$V/$s" run_dtld_bytecode "$R/$s.luac.dtld.err" "$R/$s.luac.lld.err"
    done
fi

echo "lua-mingw: variant $V; checks: $(ls "$CHECKS"/*.lua | wc -l) scripts under wine ($($WINE --version 2>/dev/null || echo wine)); results under ${BUILD#$ROOT/}/results-$V; $((SECONDS - t0))s"
summary
