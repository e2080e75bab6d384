#!/usr/bin/env bash
# Why this exists: one way to build and run the fuzz targets on the stable toolchain, the same
# for CI's short smoke runs and for the long runs of docs/reliability.md.
#
#   bash fuzz/run.sh build                      # build every target (cargo fuzz, no sanitizer)
#   bash fuzz/run.sh run <target> <seconds>     # fuzz one target, corpus fuzz/corpus/<target>
#   bash fuzz/run.sh smoke <seconds>            # every target for <seconds>, committed corpus only
#   bash fuzz/run.sh cmin <target>              # minimize fuzz/corpus/<target> in place
#
# Stable Rust: cargo-fuzz wants nightly only for the sanitizers; `--sanitizer none` builds with
# the stable options (-Cpasses=sancov-module and friends), and RUSTC_BOOTSTRAP=1 covers the one
# `-Z` flag cargo-fuzz still passes. Every run is libFuzzer's fork mode (-fork=1): the parsers
# hand out 'static borrows, so the entry points leak their inputs, and the forked worker is
# restarted before that matters. A crash, a timeout (-timeout, default 10 s), an allocation
# over 1 GiB (-malloc_limit_mb) or an RSS over 2 GiB is a finding: it is written to
# fuzz/artifacts/<target>/ and the run goes on (FUZZ_KEEP_GOING=0 stops at the first).
# Environment: FUZZ_NICE (default 19), FUZZ_EXTRA (more libFuzzer flags), FUZZ_BIN (a directory
# of prebuilt target binaries, so a long run is not disturbed by rebuilds).
set -euo pipefail
cd "$(dirname "$0")"
FUZZ=$PWD
TARGETS="elf archive coff def_file drectve irsymtab linker_script version_script dynamic_list response_file jobfile link_elf link_coff"
BIN=${FUZZ_BIN:-$FUZZ/target/x86_64-unknown-linux-gnu/release}
export RUSTC_BOOTSTRAP=1

max_len() {
    case $1 in
        link_elf | link_coff) echo 1048576 ;;
        elf | archive | coff | irsymtab) echo 262144 ;;
        *) echo 65536 ;;
    esac
}

build() { cargo fuzz build --sanitizer none -O "$@"; }

run() {  # target seconds [only-committed]
    local t=$1 secs=$2 only=${3:-}
    mkdir -p "$FUZZ/corpus/$t" "$FUZZ/artifacts/$t"
    local dirs=("$FUZZ/corpus/$t")
    [ -z "$only" ] && [ -d "$FUZZ/seeds/$t" ] && dirs+=("$FUZZ/seeds/$t")
    local keep=1; [ "${FUZZ_KEEP_GOING:-1}" = 0 ] && keep=0
    # The fork-mode parent's writable corpus: with only the committed corpus (smoke runs), a
    # scratch copy, so CI never changes the tree.
    if [ -n "$only" ]; then
        local scratch; scratch=$(mktemp -d)
        cp -r "$FUZZ/corpus/$t/." "$scratch/"
        dirs=("$scratch")
    fi
    nice -n "${FUZZ_NICE:-19}" "$BIN/$t" -fork=1 -ignore_crashes=$keep -ignore_ooms=$keep -ignore_timeouts=$keep \
        -max_total_time="$secs" -max_len="$(max_len "$t")" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
        -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$FUZZ/artifacts/$t/" ${FUZZ_EXTRA:-} "${dirs[@]}"
    [ -n "$only" ] && rm -rf "$scratch"
    # Findings are files in artifacts/<target>/.
    local found; found=$(ls "$FUZZ/artifacts/$t" 2>/dev/null | wc -l)
    echo "fuzz: $t: ${secs}s, $found finding(s) in fuzz/artifacts/$t"
    [ "$found" = 0 ]
}

case ${1:-} in
    build) shift; build "$@" ;;
    run) run "$2" "$3" ;;
    smoke)
        build
        failed=0
        for t in $TARGETS; do run "$t" "$2" only || failed=1; done
        exit $failed ;;
    cmin) cargo fuzz cmin --sanitizer none -O "$2" "$FUZZ/corpus/$2" -- -max_len="$(max_len "$2")" -rss_limit_mb=2048 ;;
    *) sed -n 2,20p "$0"; exit 2 ;;
esac
