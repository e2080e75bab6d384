#!/usr/bin/env bash
# Why this exists: a real-program check for dtld on C++ and on shared libraries. TinyXML-2 from
# Debian's tinyxml2 source package is built with clang++-22 (libstdc++): libtinyxml2.so is linked
# as a shared library, and the upstream test program xmltest is linked against it (and, in the
# other modes, directly with tinyxml2.o) — once with the linker under test and once with
# ld.lld-22. Both builds run xmltest's own suite (463 checks) and must behave identically; the
# two programs are also run against the other linker's library.
#
# Usage: scripts/real-programs/tinyxml2.sh <path-to-dtld>
# Env:   TINYXML2_MODES="shared pie static"     link modes to run (default: these three; also
#                                               available: nopie static-pie)
#        TINYXML2_ICF=0                         skip the --icf=all check (default: run it)
#        TINYXML2_SRC_METHOD=auto|apt|pool      how to fetch the source (default: auto =
#                                               apt-get source, then the Debian pool)
# Everything (source cache, objects, programs, results) lives under target/real-programs/tinyxml2/;
# delete target/real-programs/tinyxml2/src/ to refetch the source.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$ROOT/target/real-programs/tinyxml2
SRCDIR=$BUILD/src
PKG=tinyxml2

DTLD=${1:-}
[ -n "$DTLD" ] || { echo "usage: $0 <path-to-dtld>" >&2; exit 2; }
case $DTLD in /*) ;; *) DTLD=$PWD/$DTLD ;; esac
[ -x "$DTLD" ] || { echo "tinyxml2: error: linker not executable: $DTLD" >&2; exit 2; }
MODES=${TINYXML2_MODES:-shared pie static}
METHOD=${TINYXML2_SRC_METHOD:-auto}
for m in $MODES; do
    case $m in shared | pie | nopie | static | static-pie) ;;
        *) echo "tinyxml2: error: unknown mode '$m' (shared pie nopie static static-pie)" >&2; exit 2 ;;
    esac
done
case $METHOD in auto | apt | pool) ;;
    *) echo "tinyxml2: error: TINYXML2_SRC_METHOD must be auto, apt or pool" >&2; exit 2 ;;
esac

log() { echo "tinyxml2: $*"; }
t0=$SECONDS

# ---------------------------------------------------------------------------------------------
# 1. Source: Debian's tinyxml2 source package, unpacked with its patch applied (the patch marks
#    private members TINYXML2_PRIVATE = visibility("hidden")).
. "$ROOT/scripts/real-programs/fetch-source.sh"
fetch_debian_source $PKG "$SRCDIR" "$METHOD" libtinyxml2-dev || exit 1
TREE=$(debian_source_tree $PKG "$SRCDIR")
log "source: ${TREE#$ROOT/} ($(ls "$SRCDIR"/*.dsc 2>/dev/null | xargs -r -n1 basename))"
for f in tinyxml2.cpp tinyxml2.h xmltest.cpp resources/dream.xml; do
    [ -f "$TREE/$f" ] || { log "error: $TREE/$f missing"; exit 1; }
done
grep -q TINYXML2_PRIVATE "$TREE/tinyxml2.h" || { log "error: Debian's visibility patch is not applied"; exit 1; }

# ---------------------------------------------------------------------------------------------
# 2. Compile, with the flags of Debian's build: dpkg-buildflags' defaults for bookworm (hardening
#    included) plus what CMakeLists.txt adds (hidden visibility presets; TINYXML2_EXPORT for the
#    library's objects, TINYXML2_IMPORT for the programs using the shared library).
#      obj-shared/  tinyxml2.o -fPIC (goes into libtinyxml2.so), xmltest.o -fPIE
#      obj-pie/     both -fPIE        (pie and static-pie: one program from both objects)
#      obj-nopic/   both -fno-pic     (nopie and static)
CXXFLAGS=(-g -O2 -fstack-protector-strong -Wformat -Werror=format-security -D_FORTIFY_SOURCE=2 -Wno-unused-result)
LIBFLAGS=(-fvisibility=hidden -fvisibility-inlines-hidden)
compile() {  # $1 = obj dir name, $2 = flags for tinyxml2.o, $3 = flags for xmltest.o
    local dir=$BUILD/$1 want
    want="${CXXFLAGS[*]} | $2 | $3"
    mkdir -p "$dir"
    if [ "$(cat "$dir/.flags" 2>/dev/null)" != "$want" ]; then
        rm -f "$dir"/*.o; echo "$want" >"$dir/.flags"
    fi
    # shellcheck disable=SC2086
    { [ "$dir/tinyxml2.o" -nt "$TREE/tinyxml2.cpp" ] && [ "$dir/tinyxml2.o" -nt "$TREE/tinyxml2.h" ]; } ||
        clang++-22 "${CXXFLAGS[@]}" $2 -c "$TREE/tinyxml2.cpp" -o "$dir/tinyxml2.o"
    # shellcheck disable=SC2086
    { [ "$dir/xmltest.o" -nt "$TREE/xmltest.cpp" ] && [ "$dir/xmltest.o" -nt "$TREE/tinyxml2.h" ]; } ||
        clang++-22 "${CXXFLAGS[@]}" $3 -c "$TREE/xmltest.cpp" -o "$dir/xmltest.o"
}
need_pie=0; need_nopic=0; need_shared=0
for m in $MODES; do
    case $m in shared) need_shared=1 ;; pie | static-pie) need_pie=1 ;; nopie | static) need_nopic=1 ;; esac
done
start=$SECONDS
[ $need_shared = 0 ] || compile obj-shared "-fPIC ${LIBFLAGS[*]} -DTINYXML2_EXPORT -Dtinyxml2_EXPORTS" "-fPIE -DTINYXML2_IMPORT"
[ $need_pie = 0 ]    || compile obj-pie    "-fPIE ${LIBFLAGS[*]}" "-fPIE"
[ $need_nopic = 0 ]  || compile obj-nopic  "-fno-pic ${LIBFLAGS[*]}" "-fno-pic"
log "compiled tinyxml2 with clang++-22 in $((SECONDS - start))s"

# ---------------------------------------------------------------------------------------------
# 3. Link with each linker. clang++-22 is the driver, so libstdc++ (shared, or libstdc++.a with
#    -static) is linked as in any C++ build. -Wl,-z,relro is Debian's LDFLAGS.
#    shared: bin/<linker>-shared/libtinyxml2.so.9 (soname libtinyxml2.so.9, symlink
#            libtinyxml2.so -> it, as CMake's install does) and xmltest linked with -L. -ltinyxml2
#            against that side's library; no rpath, runs get LD_LIBRARY_PATH.
#    others: xmltest from xmltest.o + tinyxml2.o.
SONAME=libtinyxml2.so.9
link() {  # $1 = linker name, $2 = -fuse-ld value, $3 = mode
    local name=$1 ld=$2 mode=$3 out=$BUILD/bin/$1-$3 obj flags
    rm -rf "$out" && mkdir -p "$out"
    if [ "$mode" = shared ]; then
        obj=$BUILD/obj-shared
        if ! clang++-22 -fuse-ld="$ld" -shared -Wl,-z,relro -Wl,-soname,$SONAME "$obj/tinyxml2.o" \
                -o "$out/$SONAME" >"$out/lib.link.log" 2>&1; then
            echo "    link: clang++-22 -fuse-ld=$ld -shared -Wl,-z,relro -Wl,-soname,$SONAME $obj/tinyxml2.o -o $out/$SONAME"
            sed 's/^/    | /' "$out/lib.link.log" | head -20
            return 1
        fi
        ln -s $SONAME "$out/libtinyxml2.so"
        if ! clang++-22 -fuse-ld="$ld" -pie -Wl,-z,relro "$obj/xmltest.o" -L"$out" -ltinyxml2 \
                -o "$out/xmltest" >"$out/xmltest.link.log" 2>&1; then
            echo "    link: clang++-22 -fuse-ld=$ld -pie -Wl,-z,relro $obj/xmltest.o -L$out -ltinyxml2 -o $out/xmltest"
            sed 's/^/    | /' "$out/xmltest.link.log" | head -20
            return 1
        fi
        return 0
    fi
    case $mode in
        pie)        obj=$BUILD/obj-pie;   flags=-pie ;;
        static-pie) obj=$BUILD/obj-pie;   flags=-static-pie ;;
        nopie)      obj=$BUILD/obj-nopic; flags=-no-pie ;;
        static)     obj=$BUILD/obj-nopic; flags=-static ;;
    esac
    if ! clang++-22 -fuse-ld="$ld" $flags -Wl,-z,relro "$obj/xmltest.o" "$obj/tinyxml2.o" \
            -o "$out/xmltest" >"$out/xmltest.link.log" 2>&1; then
        echo "    link: clang++-22 -fuse-ld=$ld $flags -Wl,-z,relro $obj/xmltest.o $obj/tinyxml2.o -o $out/xmltest"
        sed 's/^/    | /' "$out/xmltest.link.log" | head -20
        return 1
    fi
}

# ---------------------------------------------------------------------------------------------
# 4. Run and compare.
pass=0; fail=0
failures=()
record() {  # $1 = ok|fail, $2 = name, [$3 = detail]
    if [ "$1" = ok ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); failures+=("$2"); echo "  FAIL $2${3:+: $3}"; fi
}

# xmltest prints timings (clock() ticks) in two places; they are replaced by <time>. Nothing else
# it prints depends on addresses, time or the build (two runs of one binary differ only there).
normalise() {
    sed -E -e 's/^(Parsing dream\.xml \([A-Za-z]+\)): [0-9.]+ milli-seconds$/\1: <time> milli-seconds/' \
           -e 's/^(Load|Delete|Total) time=[0-9]+$/\1 time=<time>/' "$1"
}

# Runs <prog> in its own copy of the source's resources/ (xmltest reads resources/*.xml and
# writes resources/out/), with LD_LIBRARY_PATH=<libdir> if given. Leaves <res>.rc, .out, .err,
# and the run directory <res>.run/.
run_one() {  # $1 = prog, $2 = libdir or "", $3 = result prefix, rest = xmltest args
    local prog=$1 libdir=$2 res=$3 rc; shift 3
    rm -rf "$res.run" && mkdir -p "$res.run"
    cp -r "$TREE/resources" "$res.run/"
    rc=0
    # The braces' 2>/dev/null silences bash's own "Segmentation fault" report; the exit status
    # (128 + signal) is kept and explained by status().
    { (cd "$res.run" && if [ -n "$libdir" ]; then export LD_LIBRARY_PATH=$libdir; else unset LD_LIBRARY_PATH; fi
       exec timeout 120 "$prog" "$@" </dev/null >"$res.out.raw" 2>"$res.err.raw"); } 2>/dev/null || rc=$?
    echo $rc >"$res.rc"
    normalise "$res.out.raw" >"$res.out"
    sed "s|$prog|xmltest|g" "$res.err.raw" >"$res.err"
    rm -f "$res.out.raw" "$res.err.raw"
}

# A program linked against libtinyxml2.so.9 must load the library of the directory it was told
# to use (there is no rpath; a system-wide libtinyxml2 would otherwise go unnoticed).
check_loads() {  # $1 = prog, $2 = libdir; prints the library that is loaded
    LD_LIBRARY_PATH=$2 ldd "$1" 2>&1 | awk -v so=$SONAME '$1 == so { print $3 }'
}

# "exit 0", "exit 1", "exit 139 (SIGSEGV)", "exit 124 (timeout)" for a result prefix.
status() {
    local rc; rc=$(cat "$1.rc")
    if [ "$rc" = 124 ]; then echo "exit 124 (timeout)"
    elif [ "$rc" -gt 128 ] && [ "$rc" -lt 160 ]; then echo "exit $rc (SIG$(kill -l $((rc - 128))))"
    else echo "exit $rc"; fi
}

same_run() {  # $1 = prefix a, $2 = prefix b
    cmp -s "$1.rc" "$2.rc" && cmp -s "$1.out" "$2.out" && cmp -s "$1.err" "$2.err"
}
show_diff() {  # $1 = reference prefix, $2 = other prefix
    diff "$1.out" "$2.out" | head -12 | sed 's/^/    | /' || true
    diff "$1.err" "$2.err" | head -8 | sed 's/^/    | /' || true
}

# The full suite: lld's run must pass (exit 0, "Fail 0"); dtld's must be identical, and so
# must the files each run wrote to resources/out/.
suite_check() {  # $1 = check name, $2 = dtld prefix, $3 = lld prefix
    local name=$1 a=$2 b=$3
    if [ "$(cat "$b.rc")" != 0 ] || ! grep -q '^Pass [0-9]*, Fail 0$' "$b.out"; then
        record fail "$name" "lld-linked xmltest: $(status "$b") ($(grep '^Pass' "$b.out" || echo 'no summary'))"
        grep '^\[fail\]' "$b.out" | head -5 | sed 's/^/    | /' || true
        head -5 "$b.err" | sed 's/^/    | /'
    elif same_run "$a" "$b"; then
        record ok "$name"
    else
        record fail "$name" "output differs (dtld: $(status "$a"), $(grep '^Pass' "$a.out" || echo 'no summary'); lld: $(status "$b"))"
        [ "$(cat "$a.rc")" -le 128 ] ||
            echo "    (stdout is block-buffered: the dtld side's output stops at a 4 KiB boundary, not where it died)"
        show_diff "$b" "$a"
    fi
}
outfiles_check() {  # $1 = check name, $2 = dtld prefix, $3 = lld prefix
    if diff -r "$3.run/resources/out" "$2.run/resources/out" >"$2.outfiles.diff" 2>&1; then
        record ok "$1"
    else
        record fail "$1" "files written to resources/out/ differ"
        head -10 "$2.outfiles.diff" | sed 's/^/    | /'
    fi
}
# A mixed run (one side's program, the other side's library) must pass, like lld's own run, and
# print the same.
mixed_check() {  # $1 = check name, $2 = prog, $3 = libdir, $4 = result prefix, $5 = lld-lld prefix
    local name=$1 prog=$2 libdir=$3 res=$4 ref=$5 got
    got=$(check_loads "$prog" "$libdir")
    if [ "$got" != "$libdir/$SONAME" ]; then
        record fail "$name" "loads '${got:-nothing}' instead of $libdir/$SONAME"
        return
    fi
    run_one "$prog" "$libdir" "$res"
    if [ "$(cat "$res.rc")" != 0 ] || ! grep -q '^Pass [0-9]*, Fail 0$' "$res.out"; then
        record fail "$name" "$(status "$res") ($(grep '^Pass' "$res.out" || echo 'no summary'))"
        grep '^\[fail\]' "$res.out" | head -5 | sed 's/^/    | /' || true
        head -5 "$res.err" | sed 's/^/    | /'
    elif same_run "$res" "$ref"; then
        record ok "$name"
    else
        record fail "$name" "passes but prints something else than lld's program with lld's library"
        show_diff "$ref" "$res"
    fi
}

# The library's dynamic interface: defined dynamic symbols (name, type, binding, visibility,
# version), DT_SONAME and DT_NEEDED must be the same from both linkers.
lib_interface() {  # $1 = library; prints a normalised description
    llvm-readelf-22 --dyn-syms --wide "$1" | awk '$7 != "UND" && $1 ~ /^[0-9]+:$/ && $8 != "" {
        print "sym", $4, $5, $6, $8 }' | sort
    llvm-readelf-22 --dynamic-table "$1" | awk '/\((SONAME|NEEDED)\)/ { print $2, $NF }' | sort
}

# The resources xmltest can load on its own (`xmltest <file>` parses a file and prints its
# ErrorID; the files include inputs found by fuzzing and a missing file).
LOAD_FILES=$(cd "$TREE/resources" && ls *.xml)

for mode in $MODES; do
    log "mode $mode: linking with dtld and with ld.lld-22"
    if ! link lld lld "$mode"; then record fail "$mode/link-lld" "reference link failed"; continue; fi
    if ! link dtld "$DTLD" "$mode"; then record fail "$mode/link-dtld" "dtld link failed"; continue; fi
    record ok "$mode/link"
    D=$BUILD/bin/dtld-$mode; L=$BUILD/bin/lld-$mode
    R=$BUILD/results/$mode; rm -rf "$R"; mkdir -p "$R"
    DL=; LL=
    if [ "$mode" = shared ]; then
        DL=$D; LL=$L
        lib_interface "$L/$SONAME" >"$R/lib.lld.txt"
        lib_interface "$D/$SONAME" >"$R/lib.dtld.txt"
        if [ -s "$R/lib.lld.txt" ] && cmp -s "$R/lib.lld.txt" "$R/lib.dtld.txt"; then
            record ok "$mode/library interface"
        else
            record fail "$mode/library interface" "dynamic symbols / SONAME / NEEDED differ (< lld, > dtld)"
            diff "$R/lib.lld.txt" "$R/lib.dtld.txt" | head -12 | sed 's/^/    | /' || true
        fi
        bad=0
        for side in dtld lld; do
            got=$(check_loads "$BUILD/bin/$side-$mode/xmltest" "$BUILD/bin/$side-$mode")
            if [ "$got" != "$BUILD/bin/$side-$mode/$SONAME" ]; then
                record fail "$mode/$side loads its library" "loads '${got:-nothing}'"; bad=1
            fi
        done
        [ $bad = 0 ] || continue
    fi

    # xmltest's own suite.
    run_one "$D/xmltest" "$DL" "$R/suite.dtld"
    run_one "$L/xmltest" "$LL" "$R/suite.lld"
    suite_check "$mode/xmltest" "$R/suite.dtld" "$R/suite.lld"
    outfiles_check "$mode/xmltest resources/out" "$R/suite.dtld" "$R/suite.lld"

    # `xmltest <file>` on each resource, and on a missing file.
    for f in $LOAD_FILES no-such-file.xml; do
        run_one "$D/xmltest" "$DL" "$R/load-$f.dtld" "resources/$f"
        run_one "$L/xmltest" "$LL" "$R/load-$f.lld" "resources/$f"
        if [ "$(cat "$R/load-$f.lld.rc")" != 0 ] || ! grep -q "^Test file 'resources/$f' loaded. ErrorID=" "$R/load-$f.lld.out"; then
            record fail "$mode/load $f" "lld-linked xmltest: $(status "$R/load-$f.lld")"
        elif same_run "$R/load-$f.dtld" "$R/load-$f.lld"; then
            record ok "$mode/load $f"
        else
            record fail "$mode/load $f" "output differs (dtld: $(status "$R/load-$f.dtld"))"
            show_diff "$R/load-$f.lld" "$R/load-$f.dtld"
        fi
    done

    # Each program with the other linker's library.
    if [ "$mode" = shared ]; then
        mixed_check "$mode/dtld-xmltest+lld-lib" "$D/xmltest" "$L" "$R/mixed-dtld-prog" "$R/suite.lld"
        mixed_check "$mode/lld-xmltest+dtld-lib" "$L/xmltest" "$D" "$R/mixed-lld-prog" "$R/suite.lld"
    fi
done

# ---------------------------------------------------------------------------------------------
# 5. Identical code folding (issue 14): both objects with -ffunction-sections, linked as a PIE
#    with --icf=all --gc-sections by each linker. dtld's .text must be no larger than lld's (it is
#    equal today), --print-icf-sections must list the same folds in the same order, and the
#    folded program must pass xmltest's suite exactly as lld's does. TINYXML2_ICF=0 skips it.
if [ "${TINYXML2_ICF:-1}" != 0 ]; then
    start=$SECONDS
    compile obj-icf "-fPIE -ffunction-sections -fdata-sections ${LIBFLAGS[*]}" "-fPIE -ffunction-sections -fdata-sections"
    R=$BUILD/results/icf; rm -rf "$R" "$BUILD/bin/icf"; mkdir -p "$R" "$BUILD/bin/icf"
    ok=1
    for side in lld dtld; do
        ld=lld; [ $side = dtld ] && ld=$DTLD
        if ! clang++-22 -fuse-ld="$ld" -pie -Wl,-z,relro -Wl,--icf=all -Wl,--gc-sections -Wl,--print-icf-sections \
                "$BUILD/obj-icf/xmltest.o" "$BUILD/obj-icf/tinyxml2.o" -o "$BUILD/bin/icf/xmltest.$side" \
                >"$R/icf.$side.txt" 2>"$R/link.$side.log"; then
            record fail "icf/link-$side" "$(head -3 "$R/link.$side.log")"; ok=0
        fi
    done
    if [ $ok = 1 ]; then
        text() { local v; v=$(llvm-readelf-22 -SW "$1" | sed -n 's/.*\] \.text  *PROGBITS  *[0-9a-f]*  *[0-9a-f]*  *\([0-9a-f]*\) .*/\1/p'); [ -n "$v" ] && echo $((16#$v)); }
        td=$(text "$BUILD/bin/icf/xmltest.dtld"); tl=$(text "$BUILD/bin/icf/xmltest.lld")
        log "icf: .text dtld $td bytes, ld.lld-22 $tl bytes; $(grep -c '^  removing' "$R/icf.lld.txt") sections folded by lld"
        if [ -n "$td" ] && [ -n "$tl" ] && [ "$td" -le "$tl" ]; then record ok "icf/.text size"; else
            record fail "icf/.text size" "dtld .text $td > lld's $tl"; fi
        if [ -s "$R/icf.lld.txt" ] && cmp -s "$R/icf.lld.txt" "$R/icf.dtld.txt"; then record ok "icf/--print-icf-sections"; else
            record fail "icf/--print-icf-sections" "folds differ (< lld, > dtld)"
            diff "$R/icf.lld.txt" "$R/icf.dtld.txt" | head -8 | sed 's/^/    | /' || true; fi
        run_one "$BUILD/bin/icf/xmltest.dtld" "" "$R/suite.dtld"
        run_one "$BUILD/bin/icf/xmltest.lld" "" "$R/suite.lld"
        suite_check "icf/xmltest" "$R/suite.dtld" "$R/suite.lld"
    fi
    log "icf check took $((SECONDS - start))s"
fi

echo "tinyxml2: modes: $MODES; results under ${BUILD#$ROOT/}/results; took $((SECONDS - t0))s"
for f in "${failures[@]}"; do echo "  failed: $f"; done
echo "real-programs: $pass passed, $fail failed"
[ $fail -eq 0 ]
