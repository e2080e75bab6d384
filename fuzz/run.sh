#!/usr/bin/env bash
# Why this exists: one way to build and run the fuzz targets on the stable toolchain, the same
# for CI's short smoke runs and for the long runs of docs/reliability.md.
#
#   bash fuzz/run.sh build                      # build every target (cargo fuzz, no sanitizer)
#   bash fuzz/run.sh run <target> <seconds>     # fuzz one target, corpus fuzz/corpus/<target>
#   bash fuzz/run.sh smoke <seconds>            # every target for <seconds>, committed corpus only
#   bash fuzz/run.sh cmin <target>              # minimize fuzz/corpus/<target> in place
#
# Stable Rust: cargo-fuzz needs nightly only for the sanitizers (-Zsanitizer); with
# `--sanitizer none` it passes only stable options (-Cpasses=sancov-module and the
# -Cllvm-args=-sanitizer-coverage-* flags), and libfuzzer-sys builds libFuzzer itself with the
# system C++ compiler. Without cargo-fuzz installed, `build` passes the same flags to plain
# cargo (what CI does). Every run is libFuzzer's fork mode (-fork=1): what the parsers leak
# (decompressed sections, names) and the whole link's mappings are dropped with the forked
# worker. A crash, a timeout (-timeout, default 10 s), an allocation
# over 1 GiB (-malloc_limit_mb) or an RSS over 2 GiB is a finding: it is written to
# fuzz/artifacts/<target>/ and the run goes on (FUZZ_KEEP_GOING=0 stops at the first).
# Environment: FUZZ_NICE (default 19), FUZZ_EXTRA (more libFuzzer flags), FUZZ_BIN (a directory
# of prebuilt target binaries, so a long run is not disturbed by rebuilds).
set -euo pipefail
cd "$(dirname "$0")"
FUZZ=$PWD
TARGETS="elf archive coff def_file drectve irsymtab linker_script version_script dynamic_list response_file jobfile link_elf link_coff"
BIN=${FUZZ_BIN:-$FUZZ/target/x86_64-unknown-linux-gnu/release}

max_len() {
    case $1 in
        link_elf | link_coff) echo 1048576 ;;
        elf | archive | coff | irsymtab) echo 262144 ;;
        *) echo 65536 ;;
    esac
}

build() {
    if cargo fuzz --version >/dev/null 2>&1; then
        cargo fuzz build --sanitizer none -O "$@"
    else
        # cargo-fuzz's own flags for `--sanitizer none -O`, on the host triple so that build
        # scripts and proc macros are not instrumented.
        RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares -Cllvm-args=-sanitizer-coverage-stack-depth \
-Cllvm-args=-simplifycfg-branch-fold-threshold=0 -Ccodegen-units=1 --cfg fuzzing" \
            cargo build --release --manifest-path "$FUZZ/Cargo.toml" --target x86_64-unknown-linux-gnu --bins "$@"
    fi
}

run() {  # target seconds [only-committed]
    local t=$1 secs=$2 only=${3:-}
    mkdir -p "$FUZZ/corpus/$t" "$FUZZ/artifacts/$t"
    local dirs=("$FUZZ/corpus/$t")
    [ -z "$only" ] && [ -d "$FUZZ/seeds/$t" ] && dirs+=("$FUZZ/seeds/$t")
    local keep=1; [ "${FUZZ_KEEP_GOING:-1}" = 0 ] && keep=0
    local before; before=$(ls "$FUZZ/artifacts/$t" | wc -l)
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
    local found; found=$(( $(ls "$FUZZ/artifacts/$t" | wc -l) - before ))
    echo "fuzz: $t: ${secs}s, $found new finding(s) in fuzz/artifacts/$t"
    # Name them, so a CI log says which kind (crash-, timeout-, oom-, slow-unit-) and which input.
    [ "$found" = 0 ] || ls -t "$FUZZ/artifacts/$t" | head -n "$found" | sed "s|^|fuzz: $t: finding |"
    [ "$found" = 0 ]
}

case ${1:-} in
    build) shift; build "$@" ;;
    run) run "$2" "$3" ;;
    smoke)
        build
        passed=0 failed=0
        for t in $TARGETS; do
            if run "$t" "$2" only; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
        done
        echo "fuzz: $passed passed, $failed failed"
        [ "$failed" = 0 ] ;;
    cmin)
        # libFuzzer's merge: the smallest set of inputs with the same coverage.
        t=$2 new=$(mktemp -d)
        "$BIN/$t" -merge=1 -max_len="$(max_len "$t")" -rss_limit_mb=2048 -close_fd_mask=3 "$new" "$FUZZ/corpus/$t"
        rm -rf "$FUZZ/corpus/$t" && mv "$new" "$FUZZ/corpus/$t"
        echo "fuzz: $t: $(ls "$FUZZ/corpus/$t" | wc -l) inputs, $(du -sk "$FUZZ/corpus/$t" | cut -f1) KiB" ;;
    *) sed -n 2,20p "$0"; exit 2 ;;
esac
