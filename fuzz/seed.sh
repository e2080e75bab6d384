#!/usr/bin/env bash
# Why this exists: the fuzz targets start from real inputs, not from nothing. This builds a seed
# corpus per target in fuzz/seeds/<target>/ (not committed: regenerate it with this script) from
# the fixtures, Lua 5.4 and zstd (Debian source packages, fetched as the real-program checks do)
# and the system's own files (glibc's libc.so script, GNU ld's default script, mingw-w64 import
# libraries). fuzz/run.sh minimizes seeds + findings into the committed corpus fuzz/corpus/.
#
# Usage: bash fuzz/seed.sh [out-dir]   (default fuzz/seeds)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-$ROOT/fuzz/seeds}
WORK=$ROOT/target/fuzz-seed
SRCDIR=$ROOT/target/real-programs/src
METHOD=${SEED_SRC_METHOD:-auto}
CC=clang-22
log() { echo "seed: $*" >&2; }
. "$ROOT/scripts/real-programs/fetch-source.sh"
mkdir -p "$WORK" "$OUT"
for t in elf archive coff def_file drectve irsymtab linker_script version_script dynamic_list response_file jobfile link_elf link_coff; do
    mkdir -p "$OUT/$t"
done
put() { cp "$2" "$OUT/$1/$(basename "$2" | tr -c 'A-Za-z0-9._\n-' _)"; }

# ---- ELF objects, shared libraries, bitcode: fixtures and real programs ------------------------
E=$WORK/elf; mkdir -p "$E"
n=0
for c in fixtures/elf/*.c fixtures/elf/*/*.c fixtures/elf/*/*.cc; do
    n=$((n + 1)); b=$E/$(echo "${c#fixtures/elf/}" | tr / _)
    case $((n % 4)) in
        0) flags="-O2 -ffunction-sections -fdata-sections" ;;
        1) flags="-O1 -g -gz=zlib" ;;
        2) flags="-O0 -fPIC" ;;
        3) flags="-O2 -g -gz=zstd -fprofile-instr-generate" ;;
    esac
    clang_cmd=$CC; case $c in *.cc) clang_cmd=clang++-22 ;; esac
    $clang_cmd $flags -c "$c" -o "$b.o" 2>/dev/null || continue
    [ $((n % 3)) = 0 ] && put elf "$b.o"
    [ $((n % 9)) = 0 ] && { $clang_cmd -O2 -flto=thin -c "$c" -o "$b.bc" 2>/dev/null && put irsymtab "$b.bc"; } || true
done
# Lua and zstd (Debian sources).
fetch_debian_source lua5.4 "$SRCDIR" "$METHOD" >/dev/null && LUA=$(debian_source_tree lua5.4 "$SRCDIR") || LUA=
if [ -n "$LUA" ]; then
    echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' > "$LUA/src/lua5.4-deb-multiarch.h"
    L=$WORK/lua; mkdir -p "$L"
    for c in "$LUA"/src/*.c; do
        b=$(basename "$c" .c)
        $CC -O2 -DLUA_USE_LINUX -c "$c" -o "$L/$b.o" 2>/dev/null || true
    done
    for b in lstring ltable lvm lua; do [ -f "$L/$b.o" ] && put elf "$L/$b.o"; done
    $CC -O2 -g -gz=zlib -fPIC -DLUA_USE_LINUX -c "$LUA/src/lapi.c" -o "$L/lapi-g.o" && put elf "$L/lapi-g.o"
    $CC -O2 -flto=thin -DLUA_USE_LINUX -c "$LUA/src/lstrlib.c" -o "$L/lstrlib.bc" && put irsymtab "$L/lstrlib.bc"
    (cd "$L" && rm -f liblua.a && llvm-ar-22 rcs liblua.a $(ls *.o | grep -v -e '^lua.o' -e '^luac.o' -e lapi-g))
    $CC -shared -fuse-ld=lld -o "$L/liblua.so" $(ls "$L"/*.o | grep -v -e '/lua.o' -e '/luac.o' -e lapi-g) 2>/dev/null || true
    [ -f "$L/liblua.so" ] && put elf "$L/liblua.so"
    # The whole Lua interpreter as one link container (static, with -e main, unresolved libc).
    python3 - "$L" "$OUT/link_elf/lua-static" 0 <<'PY'
import sys, os, struct
d, out, fl = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = ['lua.o'] + sorted(f for f in os.listdir(d) if f.endswith('.o') and f not in ('lua.o', 'luac.o', 'lapi-g.o'))
b = bytes([fl])
for n in names:
    data = open(os.path.join(d, n), 'rb').read()
    b += n.encode() + b'\0' + struct.pack('<I', len(data)) + data
open(out, 'wb').write(b)
PY
    python3 - "$L" "$OUT/link_elf/lua-archive" 1 <<'PY'
import sys, os, struct
d, out, fl = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = bytes([fl])
for n in ('lua.o', 'liblua.a'):
    data = open(os.path.join(d, n), 'rb').read()
    b += n.encode() + b'\0' + struct.pack('<I', len(data)) + data
open(out, 'wb').write(b)
PY
fi
fetch_debian_source libzstd "$SRCDIR" "$METHOD" >/dev/null && ZSTD=$(debian_source_tree libzstd "$SRCDIR") || ZSTD=
if [ -n "$ZSTD" ]; then
    Z=$WORK/zstd; mkdir -p "$Z"
    for c in common/entropy_common common/xxhash common/zstd_common decompress/huf_decompress; do
        $CC -O2 -g -fPIC -c "$ZSTD/lib/$c.c" -o "$Z/$(basename $c).o" 2>/dev/null && put elf "$Z/$(basename $c).o" || true
    done
    $CC -O2 -flto=thin -c "$ZSTD/lib/common/xxhash.c" -o "$Z/xxhash.bc" 2>/dev/null && put irsymtab "$Z/xxhash.bc" || true
    (cd "$Z" && rm -f libz.a && llvm-ar-22 rcs libz.a *.o 2>/dev/null && cp libz.a "$OUT/archive/zstd-gnu.a") || true
fi

# ---- archives: GNU (long names), BSD, thin, GNU ar's, COFF ----------------------------------
A=$WORK/ar; mkdir -p "$A"
for c in fixtures/elf/archive-thin/*.c; do $CC -O1 -c "$c" -o "$A/$(basename "$c" .c)_member_with_a_long_name.o"; done
(cd "$A" && rm -f *.a && llvm-ar-22 rcs gnu.a *.o && llvm-ar-22 rcs --format=bsd bsd.a *.o \
    && llvm-ar-22 rcsT thin.a *.o && ar rcs gnuar.a *.o && llvm-ar-22 rc noindex.a count_member_with_a_long_name.o)
for a in gnu bsd thin gnuar noindex; do put archive "$A/$a.a"; done

# ---- COFF: objects, archives, import libraries, .def, .drectve ---------------------------------
C=$WORK/coff; mkdir -p "$C"
for c in fixtures/coff/*.c fixtures/coff/*/*.c; do
    b=$C/$(echo "${c#fixtures/coff/}" | tr / _)
    $CC --target=x86_64-w64-mingw32 -O1 -c "$c" -o "$b.o" 2>/dev/null || continue
done
ls "$C"/*.o | head -12 | while read -r o; do put coff "$o"; done
$CC --target=x86_64-w64-mingw32 -O1 -Wa,-mbig-obj -c fixtures/coff/hello-printf.c -o "$C/bigobj.o" 2>/dev/null && put coff "$C/bigobj.o" || true
put def_file fixtures/coff/dll-def-file/exports.def
printf 'LIBRARY foo.dll\nEXPORTS\n    foo_fn\n    foo_other @3 NONAME\n    foo_data DATA\n    alias = foo_fn PRIVATE\n    "quoted name"==internal\nHEAPSIZE 0x100000,4096\nSTACKSIZE 65536\nSECTIONS\n  .text EXECUTE READ\nVERSION 1.2\n' > "$C/foo.def"
put def_file "$C/foo.def"
printf 'NAME app.exe BASE=0x400000\nEXPORTS\n  f@4\n  g = h.i @1\n  ; comment\n' > "$C/app.def"; put def_file "$C/app.def"
llvm-dlltool-22 -m i386:x86-64 -d "$C/foo.def" -l "$C/libfoo_short.a" && put archive "$C/libfoo_short.a"
x86_64-w64-mingw32-dlltool -d "$C/foo.def" -l "$C/libfoo_gnu.a" 2>/dev/null && put archive "$C/libfoo_gnu.a" || true
(cd "$C" && rm -f lib.a && llvm-ar-22 rcs --format=coff lib.a $(ls *.o | head -4) 2>/dev/null && put archive lib.a) || true
(cd "$C" && mkdir -p x && cd x && llvm-ar-22 x ../libfoo_short.a && ls | head -3 | while read -r m; do cp "$m" "$OUT/coff/short-$m"; done) || true
(cd "$C" && mkdir -p g && cd g && ar x ../libfoo_gnu.a 2>/dev/null && ls | head -3 | while read -r m; do cp "$m" "$OUT/coff/gnu-$m"; done) || true
for k in kernel32 msvcrt; do f=/usr/x86_64-w64-mingw32/lib/lib$k.a; [ -f "$f" ] && head -c 65536 "$f" > "$OUT/archive/$k-head.a" || true; done
printf ' /DEFAULTLIB:"libcmt" /EXPORT:foo,@3,NONAME /EXPORT:"bar=baz.qux",DATA -export:x,PRIVATE /include:sym /merge:.a=.b /alternatename:a=b /manifestdependency:"type=\x27win32\x27" /subsystem:console,6.0 /stack:0x100000,0x1000 /section:.x,RWE /guardsym:g' > "$OUT/drectve/all"
printf -- '-export:"f",data /FAILIFMISMATCH:"_ITERATOR_DEBUG_LEVEL=0" /INCLUDE:__imp_x' > "$OUT/drectve/quoted"
for o in "$C"/*.o; do llvm-objcopy-22 --dump-section=.drectve="$WORK/d.txt" "$o" /dev/null 2>/dev/null && [ -s "$WORK/d.txt" ] && cp "$WORK/d.txt" "$OUT/drectve/$(basename "$o").txt"; done || true

# COFF whole-link containers: each fixture directory's objects.
python3 - "$C" "$OUT/link_coff" <<'PY'
import sys, os, struct, collections
d, out = sys.argv[1], sys.argv[2]
groups = collections.defaultdict(list)
for f in sorted(os.listdir(d)):
    if f.endswith('.o') and f != 'bigobj.o':
        groups[f.split('_')[0] if '_' in f else f].append(f)
for i, (g, files) in enumerate(sorted(groups.items())):
    b = bytes([i % 4])
    for n in files:
        data = open(os.path.join(d, n), 'rb').read()
        b += n.encode() + b'\0' + struct.pack('<I', len(data)) + data
    if len(files) > 1 or i % 3 == 0:
        open(os.path.join(out, g), 'wb').write(b)
PY
# ELF whole-link containers: fixture directories (objects compiled above).
python3 - "$E" "$OUT/link_elf" "$A" <<'PY'
import sys, os, struct, collections
d, out, ar = sys.argv[1:4]
groups = collections.defaultdict(list)
for f in sorted(os.listdir(d)):
    if f.endswith('.o') and '_' in f:
        groups[f.split('_')[0]].append(f)
for i, (g, files) in enumerate(sorted(groups.items())):
    if i % 2:
        continue
    b = bytes([i % 8])
    for n in files:
        data = open(os.path.join(d, n), 'rb').read()
        b += n.split('_', 1)[1].encode() + b'\0' + struct.pack('<I', len(data)) + data
    open(os.path.join(out, g), 'wb').write(b)
for a in ('gnu.a', 'thin.a'):
    b = bytes([0])
    for n in ('main_member_with_a_long_name.o', a):
        data = open(os.path.join(ar, n), 'rb').read()
        b += n.encode() + b'\0' + struct.pack('<I', len(data)) + data
    open(os.path.join(out, 'archive-' + a), 'wb').write(b)
PY

# ---- text formats -------------------------------------------------------------------------
for f in fixtures/elf/*/*.map fixtures/elf/*/*.ver; do [ -f "$f" ] && put version_script "$f"; done
printf 'VER_1 { global: foo; bar*; extern "C++" { "ns::f(int)"; ns::*; }; local: *; };\nVER_2 { global: baz; } VER_1;\n{ global: q?x; [a-c]*; };\n' > "$WORK/v.ver"; put version_script "$WORK/v.ver"
for f in fixtures/elf/*/*.list; do put dynamic_list "$f"; done
printf '{ foo; extern "C++" { "A::f()"; A::*; }; b*r; };\n' > "$WORK/d.list"; put dynamic_list "$WORK/d.list"
[ -f /usr/lib/x86_64-linux-gnu/libc.so ] && put linker_script /usr/lib/x86_64-linux-gnu/libc.so
ld --verbose 2>/dev/null | sed -n '/^======/,/^======/p' | sed '1d;$d' > "$WORK/gnu-default.lds" && put linker_script "$WORK/gnu-default.lds"
cat > "$WORK/small.lds" <<'LDS'
ENTRY(_start) OUTPUT_FORMAT("elf64-x86-64") SEARCH_DIR("/nonexistent") EXTERN(a b)
INCLUDE other.lds
MEMORY { ram (rwx) : ORIGIN = 0x400000, LENGTH = 16M }
PHDRS { text PT_LOAD FILEHDR PHDRS; data PT_LOAD; }
SECTIONS {
  . = SIZEOF_HEADERS + 0x1000;
  .text ALIGN(16) : { *(.text .text.*) KEEP(*(SORT(.init_array.*))) } :text
  PROVIDE_HIDDEN(__start = .);
  .data : AT(ADDR(.data) - 0x1000) { *(.data) . = ALIGN(8); x = . + (4 << 2) % 3; } > ram :data
  /DISCARD/ : { *(.comment) }
  ASSERT(. < 0x800000, "too big")
}
VERSION { V1 { global: *; }; }
GROUP(libc.so.6 AS_NEEDED(ld-linux.so.2)) INPUT(-lm)
LDS
put linker_script "$WORK/small.lds"
printf -- '-o out -e main "quoted arg" \x27single q\x27 a\\ b @nested.rsp --start-group -lfoo --end-group\n-Map=x.map --version-script=v.ver -m elf_x86_64 --gc-sections -z now\n' > "$WORK/a.rsp"; put response_file "$WORK/a.rsp"
printf -- '-m i386pep --subsystem console -o x.exe --out-implib=x.lib --export-all-symbols -Lc:/dir -lmsvcrt\n' > "$WORK/m.rsp"; put response_file "$WORK/m.rsp"
cat > "$OUT/jobfile/basic.json" <<'JSON'
{"common":{"linker_output":"prog","args":["/usr/bin/clang-22","-O2","-c","--target=x86_64-unknown-linux-gnu","-fthinlto-distributor=x"]},
 "jobs":[{"args":["prog.dtld-lto/23eb/main.o","-fthinlto-index=prog.dtld-lto/23eb/main.o.thinlto.bc","-o","prog.dtld-lto/23eb/main.o.native.o"],
  "inputs":["prog.dtld-lto/23eb/main.o","prog.dtld-lto/23eb/main.o.thinlto.bc","prog.dtld-lto/aa/b.o"],"outputs":["prog.dtld-lto/23eb/main.o.native.o"]},
  {"args":["b.o"],"inputs":["b.o","b.o.thinlto.bc"],"outputs":["b.o.native.o"]}]}
JSON
printf '{"common":{"linker_output":"a\\u00e9\\n","args":[]},"jobs":[]}' > "$OUT/jobfile/escapes.json"
for t in "$OUT"/*; do log "$(basename "$t"): $(ls "$t" | wc -l) files, $(du -sk "$t" | cut -f1) KiB"; done
