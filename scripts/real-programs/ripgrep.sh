#!/usr/bin/env bash
# Why this exists: a real Rust program from the crate registry built with dtld as Rust users
# build it (issue 35). ripgrep is installed with `cargo install --locked` five ways: linked by
# ld.lld-22 (the reference, release), and by dtld in debug, release, release with
# `-C linker-plugin-lto` (rustc's bitcode through dtld's in-process thin link) and release with
# `-C linker-plugin-lto` plus DTLTO through dtld-distribute. Every link of a build goes through
# the linker meant (the program, and the build scripts and proc macros cargo links on the way);
# the script proves it from the `.comment` section (`Linker: dtld ...`) and, for DTLTO, from a
# log of the distributor's calls. Each dtld build then runs the same searches of this repository
# as the reference build, and stdout, stderr and exit status must be equal.
#
# Usage: scripts/real-programs/ripgrep.sh <path-to-dtld>
# Env:   RIPGREP_VARIANTS="debug release lto dtlto"   the dtld builds to make (default: all four)
#        RIPGREP_DTLTO=<distributor>                 the DTLTO distributor (default:
#                                                    dtld-distribute next to dtld, else
#                                                    target/release/dtld-distribute)
#        RIPGREP_KEEP=1                              keep cargo's target directories (by default
#                                                    a variant's is removed once it is checked)
# The version is pinned (RIPGREP_VERSION, default 15.2.0): `--locked` then builds the same
# dependency versions from ripgrep's own Cargo.lock every time, so a new release (new code, new
# dependencies, perhaps a newer minimum rustc) cannot change what CI links or what the searches
# print. The registry cache is cargo's usual one (CARGO_HOME), shared with every other build.
# Builds go to target/real-programs/ripgrep/; the ld.lld-22 reference is reused while the
# version, rustc and ld.lld-22 are unchanged. When the registry is unreachable and ripgrep is not
# in cargo's cache, the script prints SKIPPED and exits 0.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$ROOT/target/real-programs/ripgrep
VERSION=${RIPGREP_VERSION:-15.2.0}
VARIANTS=${RIPGREP_VARIANTS:-debug release lto dtlto}

DTLD=${1:-}
[ -n "$DTLD" ] || { echo "usage: $0 <path-to-dtld>" >&2; exit 2; }
case $DTLD in /*) ;; *) DTLD=$PWD/$DTLD ;; esac
[ -x "$DTLD" ] || { echo "ripgrep: error: linker not executable: $DTLD" >&2; exit 2; }
DIST=${RIPGREP_DTLTO:-}
if [ -z "$DIST" ]; then
    DIST=$(dirname "$DTLD")/dtld-distribute
    [ -x "$DIST" ] || DIST=$ROOT/target/release/dtld-distribute
fi
case $DIST in /*) ;; *) DIST=$PWD/$DIST ;; esac
if [[ " $VARIANTS " == *" dtlto "* ]] && ! [ -x "$DIST" ]; then
    echo "ripgrep: error: DTLTO distributor not executable: $DIST (set RIPGREP_DTLTO)" >&2; exit 2
fi
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then . "$HOME/.cargo/env"; fi

log() { echo "ripgrep: $*"; }
pass=0; fail=0; failures=()
record() {  # $1 = ok|fail, $2 = name, [$3 = detail]
    if [ "$1" = ok ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); failures+=("$2"); echo "  FAIL $2${3:+: $3}"; fi
}
mkdir -p "$WORK/logs"

# ---------------------------------------------------------------------------------------------
# 0. The registry: asked through cargo (so a configured mirror counts). Unreachable: try the
#    builds offline (cargo's cache may hold everything); SKIPPED if the reference cannot build.
OFFLINE=
if ! (cd "$WORK" && timeout 120 cargo info --quiet "ripgrep@$VERSION" >/dev/null 2>"$WORK/logs/registry.log"); then
    log "the crate registry did not answer (cargo info ripgrep@$VERSION); trying cargo's cache offline"
    OFFLINE=1
    export CARGO_NET_OFFLINE=true
fi

# ---------------------------------------------------------------------------------------------
# 1. The builds. `build <name> <-fuse-ld value> <debug|release> [rustc flags...]` installs
#    ripgrep into install/<name>/bin/rg, with clang-22 as rustc's linker (`-C linker=clang-22`:
#    rustc's default `cc` would bring its own rust-lld, see docs/rust.md) and the linker chosen
#    by `-fuse-ld=`. RUSTFLAGS applies to every crate, build scripts and proc macros included.
#    No debug information in release (CARGO_PROFILE_RELEASE_DEBUG=0; ripgrep asks for some),
#    to keep the step short; the debug build has it all.
stamp_of() { printf '%s\n' "$VERSION" "$*" "$(rustc -vV)" "$(ld.lld-22 --version)" "$(clang-22 --version | head -1)"; }
build() {
    local name=$1 ld=$2 profile=$3; shift 3
    local target=$WORK/build/$name root=$WORK/install/$name t=$SECONDS
    local args=(install --locked --version "$VERSION" --root "$root" ripgrep)
    [ "$profile" = debug ] && args+=(--debug)
    rm -rf "$target" "$root"
    (cd "$WORK" && env -u CARGO_ENCODED_RUSTFLAGS -u CARGO_BUILD_RUSTFLAGS -u RUSTC_WRAPPER \
        -u RUSTC_WORKSPACE_WRAPPER -u CARGO_BUILD_TARGET -u CARGO_BUILD_TARGET_DIR \
        RUSTFLAGS="-C link-arg=-fuse-ld=$ld $*" CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER=clang-22 \
        CARGO_TARGET_DIR="$target" CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_INCREMENTAL=0 \
        CARGO_TERM_PROGRESS_WHEN=never cargo "${args[@]}") >"$WORK/logs/$name.build.log" 2>&1 || {
        sed 's/^/    | /' "$WORK/logs/$name.build.log" | grep -v '^    |  *Compiling ' | tail -25
        return 1
    }
    log "built $name in $((SECONDS - t))s"
}

# The `Linker:` line of a file's .comment.
marker() { readelf -p .comment "$1" 2>/dev/null | sed -n 's/^ *\[ *[0-9a-f]*\]  *\(Linker: .*\)$/\1/p'; }

# Each linker's marker, from a trivial C program it links.
PROBE=$WORK/probe
rm -rf "$PROBE" && mkdir -p "$PROBE"
echo 'int main(void) { return 0; }' >"$PROBE/main.c"
clang-22 -fuse-ld=lld "$PROBE/main.c" -o "$PROBE/lld"
clang-22 -fuse-ld="$DTLD" "$PROBE/main.c" -o "$PROBE/dtld"
LLD_MARKER=$(marker "$PROBE/lld"); DTLD_MARKER=$(marker "$PROBE/dtld")
[ -n "$LLD_MARKER" ] && [ -n "$DTLD_MARKER" ] || { log "error: no Linker: line in .comment (ld.lld-22: '$LLD_MARKER', dtld: '$DTLD_MARKER')"; exit 1; }
[ "$LLD_MARKER" != "$DTLD_MARKER" ] || log "warning: dtld and ld.lld-22 write the same marker ($DTLD_MARKER): the linker checks cannot tell them apart"

# `linked_by <name> <marker>`: the program, every build script and every
# proc macro of the build.
linked_by() {
    local name=$1 want=$2 f m bad=0 n=0
    while IFS= read -r f; do
        n=$((n + 1)); m=$(marker "$f")
        if [ "$m" != "$want" ]; then
            bad=$((bad + 1)); [ $bad -le 5 ] && echo "    ${f#$WORK/}: ${m:-no Linker: line}"
        fi
    done < <({ echo "$WORK/install/$name/bin/rg"
               find "$WORK/build/$name" -type f \( -name build-script-build -o -name '*.so' \) 2>/dev/null; })
    [ $bad -eq 0 ] || { record fail "$name/linker" "$bad of $n outputs not linked by '$want'"; return 1; }
    record ok "$name/linker ($n outputs: the program, build scripts, proc macros)"
}

# The reference, kept while the stamp matches.
REF_FLAGS="-C link-arg=-fuse-ld=lld"
if [ -x "$WORK/install/lld/bin/rg" ] && [ "$(cat "$WORK/install/lld/.stamp" 2>/dev/null)" = "$(stamp_of "$REF_FLAGS")" ]; then
    log "reference: ld.lld-22 build of ripgrep $VERSION reused (install/lld)"
else
    if ! build lld lld release; then
        if [ -n "$OFFLINE" ]; then
            echo "ripgrep: SKIPPED: the crate registry is unreachable and ripgrep $VERSION is not in cargo's cache"
            exit 0
        fi
        log "error: the reference build (ld.lld-22) failed"; exit 1
    fi
    linked_by lld "$LLD_MARKER" || { log "error: the reference was not linked by ld.lld-22"; exit 1; }
    stamp_of "$REF_FLAGS" >"$WORK/install/lld/.stamp"
    rm -rf "$WORK/build/lld"
fi

# DTLTO: the distributor runs through a wrapper that logs each call.
cat >"$WORK/distribute" <<EOF
#!/bin/sh
printf '%s\n' "\$*" >> '$WORK/logs/dtlto-calls.log'
exec '$DIST' "\$@"
EOF
chmod +x "$WORK/distribute"

built=()
for v in $VARIANTS; do
    name=dtld-$v
    case $v in
        debug) profile=debug; extra=() ;;
        release) profile=release; extra=() ;;
        lto) profile=release; extra=(-C linker-plugin-lto) ;;
        # rustc does not pass -flto to clang, and without it clang ignores
        # -fthinlto-distributor= (and adds no --thinlto-remote-compiler=).
        dtlto) profile=release; extra=(-C linker-plugin-lto -C link-arg=-flto=thin -C "link-arg=-fthinlto-distributor=$WORK/distribute")
               rm -f "$WORK/logs/dtlto-calls.log" ;;
        *) echo "ripgrep: error: unknown variant '$v' (debug release lto dtlto)" >&2; exit 2 ;;
    esac
    if ! build "$name" "$DTLD" "$profile" "${extra[@]}"; then
        record fail "$name/build" "cargo install with dtld failed (log: ${WORK#$ROOT/}/logs/$name.build.log)"; continue
    fi
    record ok "$name/build"
    linked_by "$name" "$DTLD_MARKER" || true
    if [ "$v" = dtlto ]; then
        calls=$(wc -l <"$WORK/logs/dtlto-calls.log" 2>/dev/null || echo 0)
        left=$(find "$WORK/build/$name" \( -name '*.dist-file.json' -o -name '*.native.o' -o -name '*.thinlto.bc' -o -name '*.dtld-lto*' \) 2>/dev/null | head -5)
        if [ "$calls" -eq 0 ]; then record fail "$name/dtlto" "the distributor never ran";
        elif [ -n "$left" ]; then record fail "$name/dtlto" "DTLTO temporaries left: $left";
        else record ok "$name/dtlto ($calls links through the distributor)"; fi
    fi
    [ -n "${RIPGREP_KEEP:-}" ] || rm -rf "$WORK/build/$name"
    built+=("$name")
done

# ---------------------------------------------------------------------------------------------
# 2. The searches, run in this repository by every build; target/ (where the builds and these
#    results live) is excluded. --sort path makes the order deterministic (and the search
#    single-threaded); --no-config keeps RIPGREP_CONFIG_PATH out. `want` is the exit status the
#    reference must have (0 found, 1 nothing found, 2 error), so a broken task is noticed.
TASKS=(
    "0|count-words|--sort path -c -w Linker src docs scripts tests"
    "0|files-glob|--sort path --files -g *.rs -g !target/"
    "0|files-type|--sort path --files -t py -t sh ."
    "0|list-ignore-case|--sort path -l -i thinlto docs scripts tests"
    "0|files-without-match|--sort path --files-without-match Why\\sthis\\sexists scripts docs"
    "0|line-numbers|--sort path -n fn\\smain\\( src tests distributor reapi arch bitcode"
    "0|only-matching|--sort path -o -w -N [A-Z][A-Z0-9_]{4,}_ENV tests"
    "0|context|--sort path -C 2 -F ld.lld-22 scripts/real-programs"
    "0|replace|--sort path -o -r \$1() fn\\s+([a-z_]+)< src"
    "0|multiline|--sort path -U -c impl[^{;]*\\{\\s*\\} src"
    "0|count-matches-type|--sort path -t rust --count-matches unsafe -g !target/ ."
    "0|invert|--sort path -v -c ^\\s*(//|$) src/main.rs src/lib.rs"
    "0|fixed-strings-heading|--sort path --heading -F -i -e dtld-distribute -e --thinlto- docs"
    "0|max-count-column|--sort path -m 2 --column -e TODO -e FIXME -e XXX -g !target/ ."
    "0|json|--sort path --json -w DTLTO docs/dtlto.md"
    "0|type-list|--type-list"
    "0|version|--version"
    "1|no-match|--sort path zzq_no_such_string_qzz src docs"
    "2|bad-regex|--sort path fn\\s( src"
    "2|missing-path|--sort path -n dtld no/such/dir"
)
RES=$WORK/results
rm -rf "$RES" && mkdir -p "$RES"
run_task() {  # $1 = build name, $2 = task name, rest = rg arguments
    local name=$1 task=$2; shift 2
    local out=$RES/$name/$task
    mkdir -p "$RES/$name"
    (cd "$ROOT" && env -u RIPGREP_CONFIG_PATH timeout 60 "$WORK/install/$name/bin/rg" --no-config "$@" \
        </dev/null >"$out.out" 2>"$out.err"; echo $? >"$out.rc") || true
    # The JSON output carries the search's elapsed times.
    [ "$task" != json ] || sed -i -E 's/"elapsed(_total)?":\{[^}]*\}/"elapsed\1":{}/g' "$out.out"
}
for entry in "${TASKS[@]}"; do
    IFS='|' read -r want task args <<<"$entry"
    read -r -a argv <<<"$args"
    run_task lld "$task" "${argv[@]}"
    if [ "$(cat "$RES/lld/$task.rc")" != "$want" ]; then
        record fail "task $task" "the reference exited $(cat "$RES/lld/$task.rc"), not $want (task broken?)"
        continue
    fi
    for name in "${built[@]}"; do
        run_task "$name" "$task" "${argv[@]}"
        if cmp -s "$RES/$name/$task.out" "$RES/lld/$task.out" && cmp -s "$RES/$name/$task.err" "$RES/lld/$task.err" &&
                cmp -s "$RES/$name/$task.rc" "$RES/lld/$task.rc"; then
            record ok "$name/$task"
        else
            record fail "$name/$task" "differs from the reference (exit $(cat "$RES/$name/$task.rc"); results in ${RES#$ROOT/})"
            diff "$RES/lld/$task.out" "$RES/$name/$task.out" | head -6 | sed 's/^/    | /' || true
        fi
    done
done
log "searched with $((${#built[@]} + 1)) builds: ${#TASKS[@]} tasks; $(wc -l <"$RES/lld/files-glob.out") Rust files, $(wc -c <"$RES/lld/line-numbers.out") bytes of fn main"

for f in "${failures[@]}"; do echo "  failed: $f"; done
echo "real-programs: ripgrep $VERSION: $pass passed, $fail failed"
[ $fail -eq 0 ]
