#!/usr/bin/env bash
# Why this exists: a real C program nobody here wrote (Lua 5.4 from Debian's source package),
# built in the modes real projects build in — a debug build with --gc-sections, PGO (generate,
# train, merge, use), source coverage, ASan, UBSan, TSan and CFI with ThinLTO — and linked by
# dtld and by ld.lld-22 from the same objects. Both builds run Lua's checks and must behave the
# same; on top of that each mode compares what the mode is about: section sizes and gdb
# sessions (debug), profiles that are written and merge (PGO), llvm-cov reports (coverage),
# clean sanitizer runs.
#
# Usage: scripts/real-programs/build-modes.sh <path-to-dtld>
# Env:   BUILD_MODES="debug pgo coverage asan ubsan tsan cfi"   modes to run (default: all)
#        LUA_SRC_METHOD=auto|apt|pool                            how to fetch the source
#        JOBS=N                                                   parallel compiles (default: nproc)
# Objects are cached per mode under target/real-programs/build-modes/<mode>/obj (rebuilt when
# the flags change); results and both programs are under target/real-programs/build-modes/.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHECKS=$ROOT/scripts/real-programs/lua-checks
WORK=$ROOT/target/real-programs
SRCDIR=$WORK/src
BUILD=$WORK/build-modes

DTLD=${1:-}
[ -n "$DTLD" ] || { echo "usage: $0 <path-to-dtld>" >&2; exit 2; }
case $DTLD in /*) ;; *) DTLD=$PWD/$DTLD ;; esac
[ -x "$DTLD" ] || { echo "build-modes: error: linker not executable: $DTLD" >&2; exit 2; }
MODES=${BUILD_MODES:-debug pgo coverage asan ubsan tsan cfi}
METHOD=${LUA_SRC_METHOD:-auto}
JOBS=${JOBS:-$(nproc)}
SYMBOLIZER=/usr/lib/llvm-22/bin/llvm-symbolizer
# Section sizes of the debug build may differ from ld.lld's by this many percent.
SIZE_TOLERANCE=1

log() { echo "build-modes: $*"; }

for t in clang-22 ld.lld-22 llvm-ar-22 llvm-profdata-22 llvm-cov-22 llvm-size-22 llvm-readelf-22 gdb; do
    command -v "$t" >/dev/null 2>&1 || { log "error: $t not installed (scripts/setup.sh installs it)"; exit 2; }
done

. "$ROOT/scripts/real-programs/lua-common.sh"
lua_source

# ---------------------------------------------------------------------------------------------
# Building: every mode compiles Lua once (lua.c and the library, not luac.c) into
# $BUILD/<mode>/<obj dir>/, and both linkers link those same objects.
LUA_DEFS=(-std=gnu99 -Wall -DLUA_COMPAT_5_3 -DLUA_USE_LINUX)

compile_lua() {  # $1 = object dir, rest = compile flags
    local dir=$1; shift
    mkdir -p "$dir"
    # COMPILE_STAMP: what else the objects depend on (the profile of a profile-use build).
    local flags="${LUA_DEFS[*]} $* ${COMPILE_STAMP:-}"
    if [ "$(cat "$dir/.flags" 2>/dev/null)" != "$flags" ]; then
        rm -f "$dir"/*.o "$dir"/*.dwo; echo "$flags" >"$dir/.flags"
    fi
    local c todo=()
    for c in "$TREE"/src/*.c; do
        [ "$(basename "$c")" = luac.c ] && continue
        [ "$dir/$(basename "${c%.c}").o" -nt "$c" ] || todo+=("$c")
    done
    [ ${#todo[@]} -eq 0 ] && return 0
    # argv only (no shell): each compile is `clang-22 <flags> -c <src> -o <obj>`.
    printf '%s\n' "${todo[@]}" | xargs -P "$JOBS" -I{} \
        sh -c 'src=$1; dir=$2; shift 2; exec clang-22 "$@" -c "$src" -o "$dir/$(basename "$src" .c).o"' \
        _ {} "$dir" "${LUA_DEFS[@]}" "$@" || { log "error: compiling Lua for $dir failed"; return 1; }
}

link_lua() {  # $1 = object dir, $2 = dtld|lld, $3 = output, rest = link flags
    local dir=$1 side=$2 out=$3 ld; shift 3
    [ "$side" = dtld ] && ld=$DTLD || ld=lld
    if ! clang-22 -fuse-ld="$ld" "$@" "$dir"/*.o -lm -ldl -o "$out" >"$out.link.log" 2>&1; then
        sed 's/^/    | /' "$out.link.log" | head -15
        return 1
    fi
}

# Links both sides of a mode into $BUILD/<mode>/lua.{dtld,lld}; records the result.
link_both() {  # $1 = mode name (check name), $2 = object dir, $3 = output dir, rest = link flags
    local name=$1 dir=$2 out=$3; shift 3
    mkdir -p "$out"
    if ! link_lua "$dir" lld "$out/lua.lld" "$@"; then
        record fail "$name/link-lld" "reference link failed"; return 1; fi
    if ! link_lua "$dir" dtld "$out/lua.dtld" "$@"; then
        record fail "$name/link-dtld" "dtld link failed"; return 1; fi
    if ! cmp -s "$out/lua.lld.link.log" "$out/lua.dtld.link.log"; then
        record fail "$name/link" "diagnostics differ"
        diff "$out/lua.lld.link.log" "$out/lua.dtld.link.log" | head -10 | sed 's/^/    | /' || true
        return 0
    fi
    record ok "$name/link"
}

# ---------------------------------------------------------------------------------------------
# Running Lua's checks: `lua -v`, a `-e` one-liner, every script in lua-checks/. Results go to
# <results dir>/<check>.{rc,out,err}; argv[0] (which Lua prints in messages) is normalised.
RUN_PREFIX=()
run_one() {  # $1 = lua binary, $2 = result prefix, rest = args (run in $CHECKS)
    local bin=$1 res=$2; shift 2
    (cd "$CHECKS" && timeout 120 "${RUN_PREFIX[@]}" "$bin" "$@" </dev/null >"$res.out" 2>"$res.err.raw"; echo $? >"$res.rc") || true
    sed "s|$bin|lua|g" "$res.err.raw" >"$res.err" && rm -f "$res.err.raw"
}

# Both programs run under one path, a symlink switched between the runs: Lua keeps argv[0] in
# `arg`, and a different length would change how much it allocates, hence when its collector
# runs, hence what an instrumented build counts.
RUNLINK=$BUILD/run/lua
CHECK_NAMES=()
run_checks() {  # $1 = lua binary, $2 = results dir (the environment is passed through)
    local bin=$RUNLINK res=$2 s
    mkdir -p "$(dirname "$RUNLINK")" && ln -sfn "$1" "$RUNLINK"
    rm -rf "$res" && mkdir -p "$res"
    run_one "$bin" "$res/v" -v
    run_one "$bin" "$res/e" -e 'print(("x"):rep(3), 7 // 2, 7 / 2, math.type(1), #arg)'
    for s in "$CHECKS"/*.lua; do run_one "$bin" "$res/$(basename "$s" .lua)" "$(basename "$s")"; done
}
CHECK_NAMES=(v e)
for s in "$CHECKS"/*.lua; do CHECK_NAMES+=("$(basename "$s" .lua)"); done

compare_checks() {  # $1 = mode, $2 = dtld results dir, $3 = lld results dir
    local c
    for c in "${CHECK_NAMES[@]}"; do compare_runs "$1/$c" "$2/$c" "$3/$c"; done
}

# Both sides' checks, compared (the environment of the call is passed to both runs).
run_and_compare() {  # $1 = mode, $2 = output dir (holding lua.dtld, lua.lld)
    local mode=$1 out=$2
    run_checks "$out/lua.dtld" "$out/results-dtld"
    run_checks "$out/lua.lld" "$out/results-lld"
    compare_checks "$mode" "$out/results-dtld" "$out/results-lld"
}

# A sanitizer that reported something prints a line starting with its name: the lld build's
# checks must run clean (the comparison above makes dtld's match).
require_clean() {  # $1 = mode, $2 = results dir, $3 = pattern of a report line
    if grep -lE "$3" "$2"/*.err >/dev/null 2>&1; then
        record fail "$1/clean" "the lld build reported: $(grep -hE "$3" "$2"/*.err | head -1)"
    else
        record ok "$1/clean"
    fi
}

# ---------------------------------------------------------------------------------------------
# Comparisons specific to the modes.

# Section sizes of two outputs (llvm-size -A), every section matching the pattern and the
# whole file, each within SIZE_TOLERANCE % of ld.lld's; prints the table.
compare_sizes() {  # $1 = check name, $2 = dtld output, $3 = lld output, $4 = section regex
    local name=$1 d=$2 l=$3 re=$4 table
    table=$(awk -v re="$re" -v tol="$SIZE_TOLERANCE" \
        -v dfile="$(stat -c %s "$d")" -v lfile="$(stat -c %s "$l")" '
        FNR == 1 { side++ }
        FNR > 2 && NF == 3 && $1 ~ re { size[side, $1] = $2; names[$1] = 1 }
        END {
            size[1, "(file)"] = dfile; size[2, "(file)"] = lfile; names["(file)"] = 1
            printf "  %-22s %12s %12s %9s\n", "section", "dtld", "ld.lld", "diff"
            bad = 0
            n = 0; for (s in names) list[++n] = s
            for (i = 2; i <= n; i++) { v = list[i]; j = i - 1
                while (j > 0 && list[j] > v) { list[j + 1] = list[j]; j-- } list[j + 1] = v }
            for (i = 1; i <= n; i++) { s = list[i]
                a = size[1, s]; b = size[2, s]
                if (a == "" || b == "") { verdict = "MISSING"; diff = "-"; bad++ }
                else {
                    pct = b > 0 ? (a - b) * 100.0 / b : (a == b ? 0 : 100)
                    diff = sprintf("%+.2f%%", pct)
                    verdict = (pct <= tol && pct >= -tol) ? "ok" : "DIFFERS"
                    if (verdict != "ok") bad++
                }
                printf "  %-22s %12s %12s %9s  %s\n", s, a == "" ? "absent" : a, b == "" ? "absent" : b, diff, verdict
            }
            exit bad > 0
        }' <(llvm-size-22 -A -d "$d") <(llvm-size-22 -A -d "$l")) && rc=0 || rc=$?
    echo "$table"
    if [ "$rc" -eq 0 ]; then record ok "$name"; else
        record fail "$name" "section sizes differ from ld.lld's by more than $SIZE_TOLERANCE%"; fi
}

# gdb in batch mode on both programs; the transcripts (addresses, pids and the programs' paths
# normalised) must be equal and the lld one must show the expected frames.
GDB_SCRIPT=(
    -ex 'set debuginfod enabled off' -ex 'set pagination off' -ex 'set width 0'
    -ex 'set height 0' -ex 'set confirm off'
    -ex 'break luaB_print' -ex 'run' -ex 'bt' -ex 'info line luaB_print'
    -ex 'frame 1' -ex 'info args' -ex 'info line luaV_execute' -ex 'ptype lua_State'
    -ex 'finish'
)
compare_gdb() {  # $1 = check name, $2 = output dir
    local name=$1 out=$2 side
    for side in dtld lld; do
        (cd "$CHECKS" && DEBUGINFOD_URLS= timeout 120 gdb -nx -nh -batch "${GDB_SCRIPT[@]}" \
            --args "$out/lua.$side" -e 'print(("gdb"):upper(), 6 * 7)' </dev/null \
            >"$out/gdb.$side.raw" 2>&1) || true
        sed -E -e "s|$out/lua\\.$side|lua|g" -e 's/0x[0-9a-f]+/0x…/g' \
            -e 's/(process|LWP) [0-9]+/\1 N/g' \
            -e '/^\[Thread debugging using libthread_db enabled\]/d' \
            -e '/^Using host libthread_db library /d' "$out/gdb.$side.raw" >"$out/gdb.$side.txt"
    done
    if ! grep -q '^#0  luaB_print (L=' "$out/gdb.lld.txt" || ! grep -qE '^#[0-9]+ .* in main \(argc=' "$out/gdb.lld.txt"; then
        record fail "$name" "gdb on the lld build did not stop in luaB_print with a backtrace to main (check broken?)"
        head -20 "$out/gdb.lld.txt" | sed 's/^/    | /'
    elif cmp -s "$out/gdb.dtld.txt" "$out/gdb.lld.txt"; then
        record ok "$name"
    else
        record fail "$name" "gdb sessions differ ($out/gdb.{dtld,lld}.txt)"
        diff "$out/gdb.lld.txt" "$out/gdb.dtld.txt" | head -12 | sed 's/^/    | /' || true
    fi
}

# Raw profiles of one side's runs: there must be one per run, none empty.
check_profiles() {  # $1 = check name, $2 = profile dir
    local n empty
    n=$(find "$2" -name '*.profraw' | wc -l)
    empty=$(find "$2" -name '*.profraw' -empty | wc -l)
    if [ "$n" -ge "${#CHECK_NAMES[@]}" ] && [ "$empty" -eq 0 ]; then record ok "$1"; return 0; fi
    record fail "$1" "$n raw profiles for ${#CHECK_NAMES[@]} runs, $empty empty"
    return 1
}

merge_profiles() {  # $1 = check name, $2 = profile dir, $3 = output .profdata
    if llvm-profdata-22 merge -o "$3" "$2"/*.profraw 2>"$3.log"; then record ok "$1"; return 0; fi
    record fail "$1" "llvm-profdata merge failed: $(head -1 "$3.log")"
    return 1
}

# What the profile says about the program's structure (functions, their hashes and numbers of
# counters), without the counts: Lua seeds its string hashes per run, so counts differ even
# between two runs of one program.
profile_structure() {  # $1 = .profdata
    llvm-profdata-22 show --all-functions --counts "$1" |
        grep -vE '^ *(Function count|Block counts|Maximum|Total count|Total number of blocks)'
}

# Instrumented builds count what the program did, and Lua's hashing makes that vary from run
# to run: its string-hash seed mixes the time and addresses (lstate.c), and tables keyed by
# tables or functions hash addresses. So the profiled builds fix the seed through Lua's own
# configuration hook (luai_makeseed) and run without address randomization when the system
# allows it; the two programs' layouts still differ a little, so their counts are compared as
# coverage (what ran), not count for count.
FIXED_SEED=('-Dluai_makeseed(L)=0x5eedu')
NO_ASLR=()
if setarch "$(uname -m)" -R true 2>/dev/null; then NO_ASLR=(setarch "$(uname -m)" -R); fi

# ---------------------------------------------------------------------------------------------
# The modes.

mode_debug() {
    local out=$BUILD/debug
    compile_lua "$out/obj" -O0 -g -fPIE -ffunction-sections -fdata-sections || { record fail debug/compile; return; }
    link_both debug "$out/obj" "$out" -pie -Wl,--gc-sections || return 0
    run_and_compare debug "$out"
    log "debug: section sizes (dtld vs ld.lld, within $SIZE_TOLERANCE%):"
    compare_sizes debug/sizes "$out/lua.dtld" "$out/lua.lld" '^(\.text|\.rodata|\.data|\.bss|\.eh_frame|\.eh_frame_hdr|\.debug_.*)$'
    compare_gdb debug/gdb "$out"
}

mode_pgo() {
    local out=$BUILD/pgo side
    compile_lua "$out/gen-obj" -O2 -fPIE -ffunction-sections -fdata-sections -fprofile-instr-generate "${FIXED_SEED[@]}" \
        || { record fail pgo/compile; return; }
    link_both pgo-generate "$out/gen-obj" "$out/gen" -pie -Wl,--gc-sections -fprofile-instr-generate || return 0
    for side in dtld lld; do
        rm -rf "$out/profiles-$side" && mkdir -p "$out/profiles-$side"
        (export LLVM_PROFILE_FILE="$out/profiles-$side/%p.profraw"; RUN_PREFIX=("${NO_ASLR[@]}")
         run_checks "$out/gen/lua.$side" "$out/gen/results-$side")
    done
    compare_checks pgo-generate "$out/gen/results-dtld" "$out/gen/results-lld"
    check_profiles pgo-generate/profiles-lld "$out/profiles-lld" &&
        merge_profiles pgo-generate/merge-lld "$out/profiles-lld" "$out/lld.profdata" || {
        log "pgo: no profile from the lld build; skipping the rest"; return 0; }
    if check_profiles pgo-generate/profiles-dtld "$out/profiles-dtld" &&
            merge_profiles pgo-generate/merge-dtld "$out/profiles-dtld" "$out/dtld.profdata"; then
        if diff <(profile_structure "$out/dtld.profdata") <(profile_structure "$out/lld.profdata") >"$out/structure.diff"; then
            record ok pgo-generate/profile-functions
        else
            record fail pgo-generate/profile-functions "the profiles list different functions ($out/structure.diff)"
        fi
        if llvm-profdata-22 merge -o "$out/both.profdata" "$out"/profiles-*/*.profraw 2>"$out/both.log"; then
            record ok pgo-generate/merge-both
        else
            record fail pgo-generate/merge-both "dtld's and lld's profiles do not merge: $(head -1 "$out/both.log")"
        fi
    fi
    # The optimized build, from the lld build's profile (the same objects for both links).
    COMPILE_STAMP="profile $(cksum <"$out/lld.profdata")" \
        compile_lua "$out/use-obj" -O2 -fPIE -ffunction-sections -fdata-sections "${FIXED_SEED[@]}" \
            -fprofile-instr-use="$out/lld.profdata" \
        || { record fail pgo-use/compile; return; }
    # (grep -c reads all its input: with -q, llvm-readelf would die of SIGPIPE under pipefail.)
    if llvm-readelf-22 -SW "$out"/use-obj/*.o | grep -c '\.rel\.llvm\.call-graph-profile' >/dev/null; then
        record ok pgo-use/call-graph-profile
    else
        record fail pgo-use/call-graph-profile "no object has .rel.llvm.call-graph-profile (check broken?)"
    fi
    link_both pgo-use "$out/use-obj" "$out/use" -pie -Wl,--gc-sections || return 0
    run_and_compare pgo-use "$out/use"
}

mode_coverage() {
    local out=$BUILD/coverage side
    compile_lua "$out/obj" -O0 -fPIE -fprofile-instr-generate -fcoverage-mapping "${FIXED_SEED[@]}" \
        || { record fail coverage/compile; return; }
    link_both coverage "$out/obj" "$out" -pie -fprofile-instr-generate || return 0
    for side in dtld lld; do
        rm -rf "$out/profiles-$side" && mkdir -p "$out/profiles-$side"
        (export LLVM_PROFILE_FILE="$out/profiles-$side/%p.profraw"; RUN_PREFIX=("${NO_ASLR[@]}")
         run_checks "$out/lua.$side" "$out/results-$side")
    done
    compare_checks coverage "$out/results-dtld" "$out/results-lld"
    check_profiles coverage/profiles-lld "$out/profiles-lld" &&
        merge_profiles coverage/merge-lld "$out/profiles-lld" "$out/lld.profdata" || {
        log "coverage: no profile from the lld build; skipping the reports"; return 0; }
    llvm-cov-22 report "$out/lua.lld" -instr-profile="$out/lld.profdata" >"$out/report.lld.txt"
    # dtld's program read with the lld build's profile: its coverage mapping alone.
    llvm-cov-22 report "$out/lua.dtld" -instr-profile="$out/lld.profdata" >"$out/report.mixed.txt" 2>&1 || true
    if cmp -s "$out/report.mixed.txt" "$out/report.lld.txt"; then record ok coverage/report-mapping; else
        record fail coverage/report-mapping "llvm-cov report of dtld's lua with lld's profile differs"
        diff "$out/report.lld.txt" "$out/report.mixed.txt" | head -8 | sed 's/^/    | /' || true
    fi
    if check_profiles coverage/profiles-dtld "$out/profiles-dtld" &&
            merge_profiles coverage/merge-dtld "$out/profiles-dtld" "$out/dtld.profdata"; then
        llvm-cov-22 report "$out/lua.dtld" -instr-profile="$out/dtld.profdata" >"$out/report.dtld.txt" 2>&1 || true
        if cmp -s "$out/report.dtld.txt" "$out/report.lld.txt"; then record ok coverage/report; else
            record fail coverage/report "llvm-cov report differs ($out/report.{dtld,lld}.txt)"
            diff "$out/report.lld.txt" "$out/report.dtld.txt" | head -8 | sed 's/^/    | /' || true
        fi
    fi
    log "coverage: $(tail -1 "$out/report.lld.txt" | awk '{print "lld build: regions " $4 ", functions " $7 ", lines " $10}')"
}

mode_sanitizer() {  # $1 = mode, $2 = report pattern, $3 = env assignment, rest = -fsanitize= flags
    local mode=$1 pattern=$2 envset=$3 out=$BUILD/$1; shift 3
    compile_lua "$out/obj" -O1 -g -fPIE -fno-omit-frame-pointer "$@" || { record fail "$mode/compile"; return; }
    link_both "$mode" "$out/obj" "$out" -pie "$@" || return 0
    (
        export "${envset?}"
        run_checks "$out/lua.dtld" "$out/results-dtld"
        run_checks "$out/lua.lld" "$out/results-lld"
    )
    compare_checks "$mode" "$out/results-dtld" "$out/results-lld"
    require_clean "$mode" "$out/results-lld" "$pattern"
}

mode_cfi() {
    local out=$BUILD/cfi flags=(-flto=thin -fvisibility=hidden -fsanitize=cfi)
    compile_lua "$out/obj" -O2 -fPIE "${flags[@]}" || { record fail cfi/compile; return; }
    require_bitcode "CFI with ThinLTO" "$out"/obj/*.o
    link_both cfi "$out/obj" "$out" -pie "${flags[@]}" || return 0
    run_and_compare cfi "$out"
}

for mode in $MODES; do
    start=$SECONDS
    case $mode in
        debug) mode_debug ;;
        pgo) mode_pgo ;;
        coverage) mode_coverage ;;
        asan) mode_sanitizer asan '^(==[0-9]+==ERROR|SUMMARY): (Address|Leak)Sanitizer' \
            "ASAN_SYMBOLIZER_PATH=$SYMBOLIZER" -fsanitize=address ;;
        ubsan) mode_sanitizer ubsan 'runtime error:|UndefinedBehaviorSanitizer' \
            "UBSAN_OPTIONS=print_stacktrace=1" -fsanitize=undefined ;;
        tsan) mode_sanitizer tsan 'ThreadSanitizer' \
            "TSAN_OPTIONS=external_symbolizer_path=$SYMBOLIZER" -fsanitize=thread ;;
        cfi) mode_cfi ;;
        *) log "error: unknown mode '$mode' (debug pgo coverage asan ubsan tsan cfi)"; exit 2 ;;
    esac
    log "mode $mode done in $((SECONDS - start))s"
done

log "modes: $MODES; checks: ${#CHECK_NAMES[@]} runs per program; results under ${BUILD#$ROOT/}"
summary
