#!/usr/bin/env bash
# Why this exists: the real-program check for GCC LTO. Lua 5.4 from Debian's source package is
# compiled with `gcc -O2 -flto` (GCC IR objects, liblua.a built with gcc-ar) and linked by gcc
# three times — through dtld (`-B<dir>` holding `ld` → dtld), through GNU ld (`-fuse-ld=bfd`,
# the reference: ld.lld cannot host GCC's plugin) and through mold (`-fuse-ld=mold`) — with
# `-flto=auto` (lto-wrapper runs its partitions in parallel). All three builds run the same Lua
# checks and must behave identically, byte for byte; the resolution file GCC's plugin wrote for
# dtld must equal GNU ld's (up to GNU ld's UNDEF for references to versioned definitions in
# shared libraries, where dtld says RESOLVED_DYN), and so must the objects GCC compiled for the
# two (debug sections aside).
#
# Usage: scripts/real-programs/lua-gcc-lto.sh <path-to-dtld>
# Env:   LUA_MODES="pie nopie static"   link modes (default: all three)
#        LUA_GCC_FAT=1                 compile with -ffat-lto-objects (default: slim objects)
#        LUA_SRC_METHOD=auto|apt|pool  how to fetch the source (see lua.sh)
# The downloaded source is cached under target/real-programs/src/.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHECKS=$ROOT/scripts/real-programs/lua-checks
WORK=$ROOT/target/real-programs
SRCDIR=$WORK/src
BUILD=$WORK/lua-gcc-lto

DTLD=${1:-}
[ -n "$DTLD" ] || { echo "usage: $0 <path-to-dtld>" >&2; exit 2; }
case $DTLD in /*) ;; *) DTLD=$PWD/$DTLD ;; esac
[ -x "$DTLD" ] || { echo "lua-gcc-lto: error: linker not executable: $DTLD" >&2; exit 2; }
MODES=${LUA_MODES:-pie nopie static}
METHOD=${LUA_SRC_METHOD:-auto}
FAT=()
[ "${LUA_GCC_FAT:-0}" = 1 ] && FAT=(-ffat-lto-objects)
HAVE_MOLD=0
command -v mold >/dev/null 2>&1 && HAVE_MOLD=1

log() { echo "lua-gcc-lto: $*"; }

. "$ROOT/scripts/real-programs/lua-common.sh"
lua_source

# gcc finds `ld` in the -B directory first: a wrapper that runs dtld.
TOOLS=$BUILD/tools
mkdir -p "$TOOLS"
printf '#!/bin/sh\nexec %q "$@"\n' "$DTLD" >"$TOOLS/ld"
chmod +x "$TOOLS/ld"

# ---------------------------------------------------------------------------------------------
# 1. Compile once per code model with Lua's `linux` flags plus -flto; the parser and code
#    generator get -Os as in Debian's Makefile. GCC IR objects; liblua.a by gcc-ar (its index
#    lists the IR symbols through the plugin).
CFLAGS_BASE=(-std=gnu99 -O2 -Wall -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -g -flto "${FAT[@]}")
compile() {  # $1 = pic|nopic
    local model=$1 dir=$BUILD/obj-$1${FAT:+-fat} flag c o extra
    [ "$model" = pic ] && flag=-fPIE || flag=-fno-pic
    mkdir -p "$dir"
    if [ "$(cat "$dir/.flags" 2>/dev/null)" != "${CFLAGS_BASE[*]} $flag" ]; then
        rm -f "$dir"/*.o; echo "${CFLAGS_BASE[*]} $flag" >"$dir/.flags"
    fi
    # With -save-temps and -g, lto-wrapper leaves early-debug objects next to its inputs
    # (liblua.a@0x...debug.temp.o): they are not Lua's.
    rm -f "$dir"/*.debug.temp.o
    local objs=()
    for c in "$TREE"/src/*.c; do
        o=$dir/$(basename "${c%.c}").o
        objs+=("$o")
        [ "$o" -nt "$c" ] && continue
        extra=()
        case $(basename "$c") in llex.c|lparser.c|lcode.c) extra=(-Os) ;; esac
        gcc "${CFLAGS_BASE[@]}" "$flag" "${extra[@]}" -c "$c" -o "$o"
    done
    rm -f "$dir/liblua.a"
    (cd "$dir" && gcc-ar rcs liblua.a $(for o in "${objs[@]}"; do basename "$o"; done | grep -vx 'lua.o\|luac.o'))
    # An object without GCC IR would silently test ordinary linking.
    for o in "${objs[@]}"; do
        readelf -SW "$o" | grep '\.gnu\.lto_\.symtab' >/dev/null || { log "error: $o holds no GCC LTO IR"; exit 1; }
    done
}
start=$SECONDS
compile pic
compile nopic
log "compiled Lua with gcc -O2 -flto${FAT:+ -ffat-lto-objects} in $((SECONDS - start))s"

# ---------------------------------------------------------------------------------------------
# 2. Link lua and luac with each linker in each mode, keeping GCC's LTO files (-save-temps).
mode_flags() {
    case $1 in
        pie)    echo "pic -pie -Wl,-E" ;;
        nopie)  echo "nopic -no-pie -Wl,-E" ;;
        static) echo "nopic -static" ;;
        *) echo "bad mode $1" >&2; return 1 ;;
    esac
}

link() {  # $1 = linker name (bfd|dtld|mold), $2 = mode
    local name=$1 mode=$2 model flags out obj p sel
    read -r model flags <<<"$(mode_flags "$mode")"
    out=$BUILD/bin/$name-$mode${FAT:+-fat}
    obj=$BUILD/obj-$model${FAT:+-fat}
    case $name in dtld) sel=-B$TOOLS/ ;; *) sel=-fuse-ld=$name ;; esac
    rm -rf "$out" && mkdir -p "$out"
    for p in lua luac; do
        # shellcheck disable=SC2086
        if ! (cd "$out" && gcc -flto=auto -save-temps "$sel" $flags "$obj/$p.o" "$obj/liblua.a" -lm -ldl \
                -o "$p" >"$p.link.log" 2>&1); then
            sed 's/^/    | /' "$out/$p.link.log" | head -20
            return 1
        fi
    done
}

# The resolution file as sorted "file line" pairs, GNU ld's UNDEF for versioned shared-library
# definitions folded into RESOLVED_DYN (see the top of this file).
res_lines() {  # $1 = .res file, $2 = 1 to fold
    awk -v fold="$2" 'NR == 1 { next } NF == 2 { file = $1; next }
        { if (fold && $3 == "UNDEF") $3 = "RESOLVED_DYN"; print file, $0 }' "$1" | sort
}

# GCC must have been told the same and compiled the same for dtld as for GNU ld.
compare_lto() {  # $1 = mode name, $2 = dtld dir, $3 = bfd dir
    local name=$1 d=$2 b=$3 p o ok=1
    for p in lua luac; do
        if ! cmp -s <(res_lines "$d/$p.res" 1) <(res_lines "$b/$p.res" 1); then
            record fail "$name/$p resolutions" "dtld's $p.res differs from GNU ld's"
            diff <(res_lines "$b/$p.res" 1) <(res_lines "$d/$p.res" 1) | head -10 | sed 's/^/    | /' || true
            ok=0
        else
            record ok "$name/$p resolutions"
        fi
        for o in "$b/$p".ltrans*.ltrans.o; do
            [ -e "$o" ] || { record fail "$name/$p ltrans" "GNU ld's link left no LTRANS object"; ok=0; break; }
            objcopy --strip-debug "$o" "$BUILD/ref.o"
            objcopy --strip-debug "$d/$(basename "$o")" "$BUILD/test.o" 2>/dev/null || { record fail "$name/$p ltrans" "$(basename "$o") missing for dtld"; ok=0; continue; }
            cmp -s "$BUILD/ref.o" "$BUILD/test.o" || { record fail "$name/$p ltrans" "$(basename "$o") differs from GNU ld's"; ok=0; }
        done
    done
    [ $ok = 1 ] && record ok "$name/ltrans objects identical to GNU ld's"
    rm -f "$BUILD/ref.o" "$BUILD/test.o"
}

# ---------------------------------------------------------------------------------------------
# 3. Run the checks with every build and compare with GNU ld's.
run_one() {  # $1 = bin dir, $2 = result prefix, rest = lua args (run in $CHECKS)
    local bin=$1 res=$2; shift 2
    (cd "$CHECKS" && timeout 30 "$bin/lua" "$@" </dev/null >"$res.out" 2>"$res.err.raw"; echo $? >"$res.rc") || true
    sed "s|$bin/lua|lua|g" "$res.err.raw" >"$res.err" && rm -f "$res.err.raw"
}

compare_with_bfd() {  # $1 = name, $2 = tested prefix, $3 = GNU ld's prefix
    local name=$1 a=$2 b=$3
    if [ "$(cat "$b.rc")" != 0 ]; then
        record fail "$name" "GNU ld's lua exited $(cat "$b.rc") (check itself is broken?)"
    elif same_run "$a" "$b"; then
        record ok "$name"
    else
        record fail "$name" "output differs (exit $(cat "$a.rc"), GNU ld's exit $(cat "$b.rc"))"
        diff "$b.out" "$a.out" | head -10 | sed 's/^/    | /' || true
        diff "$b.err" "$a.err" | head -10 | sed 's/^/    | /' || true
    fi
}

tested=(dtld)
[ $HAVE_MOLD = 1 ] && tested+=(mold)
for m in $MODES; do
    mode=$m${FAT:+-fat}
    log "mode $mode: linking lua and luac with GNU ld, ${tested[*]}"
    if ! link bfd "$m"; then record fail "$mode/link-bfd" "reference link failed"; continue; fi
    for l in "${tested[@]}"; do
        if link "$l" "$m"; then record ok "$mode/link-$l"; else record fail "$mode/link-$l" "$l link failed"; fi
    done
    B=$BUILD/bin/bfd-$mode
    compare_lto "$mode" "$BUILD/bin/dtld-$mode" "$B"
    R=$BUILD/results/$mode; rm -rf "$R"; mkdir -p "$R"
    for l in "${tested[@]}"; do
        T=$BUILD/bin/$l-$mode
        [ -x "$T/lua" ] || continue
        run_one "$T" "$R/v.$l" -v; run_one "$B" "$R/v.bfd" -v
        compare_with_bfd "$mode/$l/lua -v" "$R/v.$l" "$R/v.bfd"
        for script in "$CHECKS"/*.lua; do
            s=$(basename "$script" .lua)
            run_one "$T" "$R/$s.$l" "$s.lua"; run_one "$B" "$R/$s.bfd" "$s.lua"
            compare_with_bfd "$mode/$l/$s" "$R/$s.$l" "$R/$s.bfd"
            # luac: the same bytecode as GNU ld's build writes.
            (cd "$CHECKS" && timeout 30 "$T/luac" -o "$R/$s.$l.luac" "$s.lua" && timeout 30 "$B/luac" -o "$R/$s.bfd.luac" "$s.lua") 2>/dev/null || true
            if [ -s "$R/$s.bfd.luac" ] && cmp -s "$R/$s.$l.luac" "$R/$s.bfd.luac"; then
                record ok "$mode/$l/$s (luac)"
            else
                record fail "$mode/$l/$s (luac)" "bytecode differs or luac failed"
            fi
        done
    done
done

echo "lua-gcc-lto: modes: $MODES${FAT:+ (fat LTO objects)}; linkers: GNU ld (reference), ${tested[*]}; checks: $(ls "$CHECKS"/*.lua | wc -l) scripts; results under ${BUILD#$ROOT/}/results"
summary
