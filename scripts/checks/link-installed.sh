#!/usr/bin/env bash
# Why this exists: the proof that an installed dtld is usable the way users call it, shared by
# the install check (scripts/checks/install.sh: a prefix from scripts/install.sh, and the
# documented `cargo install` steps) and the package check (scripts/checks/deb.sh: /usr from the
# .deb). It links examples/hello by the installed names only and compares each program's output
# with the ld.lld-22 build:
#   clang-22 -fuse-ld=dtld              (PREFIX/bin on PATH: clang finds ld.dtld there)
#   clang-22 -B PREFIX/bin -fuse-ld=dtld and --ld-path=PREFIX/bin/ld.dtld   (not on PATH)
#   gcc -B PREFIX/libexec/dtld           (gcc runs the `ld` link there)
#   clang-22 -flto=thin -fuse-ld=dtld -fthinlto-distributor=dtld-distribute   (DTLTO, by name)
# Each output must carry "Linker: dtld" in .comment, so a silent fallback to another linker
# fails. It also checks `ld.dtld --version`, the man pages (found through MANPATH, rendered
# without warnings) and the bash completions.
#
# Usage: scripts/checks/link-installed.sh PREFIX [--no-completions] [--man-suffix=.gz]
# Prints "installed: N passed, M failed" last; exits non-zero if any check failed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PREFIX=${1:?usage: link-installed.sh PREFIX [--no-completions] [--man-suffix=.gz]}
shift
completions=1
man_suffix=
for a in "$@"; do
    case $a in
        --no-completions) completions=0 ;;
        --man-suffix=*) man_suffix=${a#--man-suffix=} ;;
        *) echo "link-installed: error: unknown argument '$a'" >&2; exit 2 ;;
    esac
done

SRC=$ROOT/examples/hello
WORK=$(mktemp -d)
trap 'rm -rf -- "$WORK"' EXIT
passed=0
failed=0
pass() { echo "  ok    $1"; passed=$((passed + 1)); }
fail() { echo "  FAIL  $1${2:+: $2}"; failed=$((failed + 1)); }
# check <name> <command...>: the command's status decides; its output is shown when it fails.
check() {
    local name=$1; shift
    if out=$("$@" 2>&1); then pass "$name"; else fail "$name"; printf '%s\n' "$out" | sed 's/^/        | /' | tail -20; fi
}

# A program linked by dtld: runs, prints what the ld.lld-22 build prints, says "Linker: dtld".
same_as_lld() {
    local exe=$1
    [ -x "$exe" ] || { echo "$exe was not written"; return 1; }
    "$exe" > "$exe.out" 2>&1 || { echo "$exe exited with $?"; cat "$exe.out"; return 1; }
    cmp -s "$exe.out" "$WORK/expected.out" || { diff "$WORK/expected.out" "$exe.out"; return 1; }
    readelf -p .comment "$exe" | grep -q 'Linker: dtld' || { echo "$exe: no 'Linker: dtld' in .comment (another linker ran?)"; readelf -p .comment "$exe"; return 1; }
}

cc_link() { # <name> <command...>: link, then compare
    local exe=$WORK/$1; shift
    "$@" -o "$exe" && same_as_lld "$exe"
}

echo "== objects: examples/hello with clang-22 (native and -flto=thin); reference link by ld.lld-22"
for f in main greet count; do
    clang-22 -O2 -c "$SRC/$f.c" -o "$WORK/$f.o" || exit 1
    clang-22 -O2 -flto=thin -c "$SRC/$f.c" -o "$WORK/$f.bc.o" || exit 1
done
llvm-ar-22 rcs "$WORK/libgreet.a" "$WORK/greet.o" "$WORK/count.o"
llvm-ar-22 rcs "$WORK/libgreet-lto.a" "$WORK/greet.bc.o" "$WORK/count.bc.o"
clang-22 -fuse-ld=lld "$WORK/main.o" -L"$WORK" -lgreet -o "$WORK/ref" && "$WORK/ref" > "$WORK/expected.out" || exit 1
OBJS=("$WORK/main.o" -L"$WORK" -lgreet)
ON_PATH=$PREFIX/bin:$PATH

echo "== links by the installed names ($PREFIX)"
check "PREFIX/bin/ld.dtld --version says 'compatible with GNU linkers'" \
    bash -c '"$1" --version | grep -q "compatible with GNU linkers"' _ "$PREFIX/bin/ld.dtld"
check "clang-22 -fuse-ld=dtld (PREFIX/bin on PATH)" env PATH="$ON_PATH" clang-22 -fuse-ld=dtld "${OBJS[@]}" -o "$WORK/on-path"
check "  ... runs and matches ld.lld-22's build" same_as_lld "$WORK/on-path"
check "clang-22 -B PREFIX/bin -fuse-ld=dtld (not on PATH)" cc_link b-bin clang-22 -B "$PREFIX/bin" -fuse-ld=dtld "${OBJS[@]}"
check "clang-22 --ld-path=PREFIX/bin/ld.dtld (not on PATH)" cc_link ld-path clang-22 --ld-path="$PREFIX/bin/ld.dtld" "${OBJS[@]}"
check "gcc -B PREFIX/libexec/dtld" cc_link gcc-b gcc -B "$PREFIX/libexec/dtld" "${OBJS[@]}"
check "gcc -B PREFIX/libexec/dtld -static" cc_link gcc-b-static gcc -static -B "$PREFIX/libexec/dtld" "${OBJS[@]}"
check "DTLTO: clang-22 -flto=thin -fuse-ld=dtld -fthinlto-distributor=dtld-distribute (by name, from PATH)" \
    env PATH="$ON_PATH" bash -c '
        [ "$(command -v dtld-distribute)" = "$1/bin/dtld-distribute" ] || { echo "dtld-distribute on PATH is $(command -v dtld-distribute), not $1/bin/dtld-distribute"; exit 1; }
        out=$(clang-22 -flto=thin -fuse-ld=dtld -fthinlto-distributor=dtld-distribute "$2/main.bc.o" -L"$2" -lgreet-lto -o "$2/dtlto" 2>&1) || { echo "$out"; exit 1; }
        echo "$out"
        grep -qE "^dtld-distribute: (\[3/3\]|3 of 3 jobs compiled)" <<< "$out" || { echo "the distributor did not run the 3 backend jobs"; exit 1; }' _ "$PREFIX" "$WORK"
check "  ... runs and matches ld.lld-22's build" same_as_lld "$WORK/dtlto"

echo "== man pages and completions"
for page in dtld ld.dtld dtld-distribute dtld-reapi; do
    check "man $page (MANPATH=PREFIX/share/man), no roff warnings" bash -c '
        f=$(MANPATH="$1/share/man" man -w "$2") || exit 1
        want=$2; [ "$2" = ld.dtld ] && want=dtld   # man resolves the link ld.dtld.1 -> dtld.1
        [ "$f" = "$1/share/man/man1/$want.1$3" ] || { echo "man -w $2 found $f"; exit 1; }
        warnings=$(MANWIDTH=80 man --warnings=w -l "$f" 2>&1 >/dev/null)
        [ -z "$warnings" ] || { echo "$warnings"; exit 1; }
        MANWIDTH=80 man -l "$f" 2>/dev/null | grep -q "^NAME"' _ "$PREFIX" "$page" "$man_suffix"
done
check "man dtld lists the option table (--output, --thinlto-distributor=, compatibility options)" bash -c '
    MANWIDTH=100 man -l "$(MANPATH="$1/share/man" man -w dtld)" 2>/dev/null > "$2/dtld.txt"
    grep -q -- "-o <path>, --output=<path>" "$2/dtld.txt" && grep -q -- "--thinlto-distributor=<path>" "$2/dtld.txt" && grep -q "^COMPATIBILITY OPTIONS" "$2/dtld.txt"' _ "$PREFIX" "$WORK"
if [ $completions -eq 1 ]; then
    for b in dtld-distribute dtld-reapi; do
        check "bash completion for $b loads and completes --jobs" bash -c '
            source "$1/share/bash-completion/completions/$2" && complete -p "$2" >/dev/null || exit 1
            COMP_WORDS=("$2" --jo); COMP_CWORD=1; COMP_LINE="$2 --jo"; COMP_POINT=${#COMP_LINE}
            fn=$(complete -p "$2" | sed -n "s/.*-F \([^ ]*\).*/\1/p"); "$fn" "$2" --jo "$2"
            [[ " ${COMPREPLY[*]} " == *" --jobs "* ]] || { echo "COMPREPLY: ${COMPREPLY[*]}"; exit 1; }' _ "$PREFIX" "$b"
    done
fi

echo "installed: $passed passed, $failed failed"
[ $failed -eq 0 ]
