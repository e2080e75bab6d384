#!/usr/bin/env bash
# Why this exists: the largest real link we have at hand is a Rust debug build — this
# workspace's own dtld-reapi (tokio, tonic, prost, rustls...): hundreds of MB of objects with
# DWARF, linked with --gc-sections as rustc always does. The script builds it once with
# ld.lld-22 and `--reproduce`, then replays that exact link from the extracted tar with dtld
# and with ld.lld-22, compares the sizes of .text, .eh_frame, .debug_str, .debug_info and the
# whole output (each within 1% of ld.lld's), and runs both programs.
#
# Usage: scripts/real-programs/rust-debug.sh <path-to-dtld>
# Env:   RUST_DEBUG_TOLERANCE=1     allowed size difference in percent (default 1)
# The cargo build goes to target/real-programs/rust-debug/target (its own target directory, so
# the workspace's builds are untouched; reruns reuse it and only relink dtld-reapi).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$ROOT/target/real-programs/rust-debug
TARGET=$WORK/target
TAR=$WORK/dtld-reapi.tar
TOLERANCE=${RUST_DEBUG_TOLERANCE:-1}

DTLD=${1:-}
[ -n "$DTLD" ] || { echo "usage: $0 <path-to-dtld>" >&2; exit 2; }
case $DTLD in /*) ;; *) DTLD=$PWD/$DTLD ;; esac
[ -x "$DTLD" ] || { echo "rust-debug: error: linker not executable: $DTLD" >&2; exit 2; }
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then . "$HOME/.cargo/env"; fi

log() { echo "rust-debug: $*"; }
pass=0; fail=0; failures=()
record() {  # $1 = ok|fail, $2 = name, [$3 = detail]
    if [ "$1" = ok ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); failures+=("$2"); echo "  FAIL $2${3:+: $3}"; fi
}

mkdir -p "$WORK"

# 1. The debug build, its final link by ld.lld-22 (through clang) with --reproduce. Only the
#    final crate gets the link flags (`cargo rustc`), so the dependencies' builds are shared
#    with later runs; the binary is removed first so that cargo links again and the tar is
#    fresh.
start=$SECONDS
rm -f "$TARGET/debug/dtld-reapi" "$TARGET"/debug/deps/dtld_reapi-* "$TAR"
(cd "$ROOT" && cargo rustc --quiet --profile dev -p dtld-reapi --bin dtld-reapi --target-dir "$TARGET" -- \
    -C linker=clang-22 -C link-arg=-fuse-ld=lld -C "link-arg=-Wl,--reproduce=$TAR") \
    || { log "error: cargo build of dtld-reapi (debug, ld.lld-22) failed"; exit 1; }
[ -s "$TAR" ] || { log "error: ld.lld-22 wrote no reproduce tar at $TAR"; exit 1; }
log "built dtld-reapi (debug) with ld.lld-22 in $((SECONDS - start))s; reproduce tar: $(du -m "$TAR" | cut -f1) MB"

# 2. Replay the link from the extracted tar with each linker (`--chroot .` in response.txt
#    finds every input in the tree); the last -o wins.
REPLAY=$WORK/replay
rm -rf "$REPLAY" && mkdir -p "$REPLAY"
tar -xf "$TAR" -C "$REPLAY"
TREE=$REPLAY/dtld-reapi
[ -f "$TREE/response.txt" ] || { log "error: no response.txt in $TAR"; exit 1; }
declare -A LINK_TIME
for side in lld dtld; do
    mkdir -p "$WORK/$side"
    out=$WORK/$side/dtld-reapi
    rm -f "$out"
    [ "$side" = dtld ] && linker=$DTLD || linker=ld.lld-22
    t0=$(date +%s.%N)
    if (cd "$TREE" && "$linker" @response.txt -o "$out") >"$WORK/$side.link.log" 2>&1; then
        LINK_TIME[$side]=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
        record ok "link-$side"
    else
        LINK_TIME[$side]=-
        record fail "link-$side" "the replayed link failed"
        sed 's/^/    | /' "$WORK/$side.link.log" | head -15
    fi
done
log "replayed links: ld.lld-22 ${LINK_TIME[lld]}s, dtld ${LINK_TIME[dtld]}s"
[ -f "$WORK/lld/dtld-reapi" ] || { log "error: the reference link failed"; exit 1; }
[ -f "$WORK/dtld/dtld-reapi" ] || { echo "real-programs: $pass passed, $fail failed"; exit 1; }

# 3. Sizes: the four sections of the issue and the whole file must be within TOLERANCE% of
#    ld.lld's; every other allocated or debug section is shown for information.
sizes() { llvm-size-22 -A -d "$1" | awk 'NR > 2 && NF == 3 { print $1, $2 }'; echo "(file) $(stat -c %s "$1")"; }
CHECKED='^(\.text|\.eh_frame|\.debug_str|\.debug_info|\(file\))$'
printf '  %-24s %14s %14s %9s\n' section dtld ld.lld diff
while read -r name d l; do
    verdict=info
    if [ "$d" = - ] || [ "$l" = - ]; then diff=-; else
        diff=$(awk -v a="$d" -v b="$l" 'BEGIN { printf "%+.2f%%", b ? (a - b) * 100 / b : 0 }'); fi
    if [[ $name =~ $CHECKED ]]; then
        if [ "$d" != - ] && [ "$l" != - ] &&
                awk -v a="$d" -v b="$l" -v t="$TOLERANCE" 'BEGIN { x = (a - b) * 100 / b; exit !(x <= t && x >= -t) }'; then
            verdict=ok; record ok "size $name"
        else
            verdict=DIFFERS; record fail "size $name" "dtld $d, ld.lld $l ($diff; allowed $TOLERANCE%)" >/dev/null
        fi
    fi
    printf '  %-24s %14s %14s %9s  %s\n' "$name" "$d" "$l" "$diff" "$verdict"
done < <(LC_ALL=C join -a1 -a2 -e - -o 0,1.2,2.2 <(sizes "$WORK/dtld/dtld-reapi" | LC_ALL=C sort) \
             <(sizes "$WORK/lld/dtld-reapi" | LC_ALL=C sort) |
         grep -E '^(\.text|\.rodata|\.data\S*|\.bss|\.eh_frame\S*|\.gcc_except_table|\.debug_\S+|\.symtab|\.strtab|\(file\)) ')

# 4. Both programs run: --help and --version print the same and exit 0.
for args in --help --version; do
    for side in dtld lld; do
        (cd "$WORK/$side" && timeout 60 ./dtld-reapi "$args" >"$WORK/$side$args.out" 2>&1; echo $? >"$WORK/$side$args.rc") || true
    done
    if [ "$(cat "$WORK/lld$args.rc")" != 0 ]; then
        record fail "run $args" "the lld-linked program exited $(cat "$WORK/lld$args.rc")"
    elif cmp -s "$WORK/dtld$args.out" "$WORK/lld$args.out" && cmp -s "$WORK/dtld$args.rc" "$WORK/lld$args.rc"; then
        record ok "run $args"
    else
        record fail "run $args" "dtld's program: exit $(cat "$WORK/dtld$args.rc"), output differs"
        diff "$WORK/lld$args.out" "$WORK/dtld$args.out" | head -6 | sed 's/^/    | /' || true
    fi
done

for f in "${failures[@]}"; do echo "  failed: $f"; done
echo "real-programs: $pass passed, $fail failed"
[ $fail -eq 0 ]
