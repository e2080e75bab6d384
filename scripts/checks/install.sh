#!/usr/bin/env bash
# Why this exists: CI's proof of issue 19's first promise — install, use by name, uninstall
# without a trace — for both documented ways to install:
#   1. scripts/install.sh --prefix DIR into a directory that does not exist yet (its parents
#      neither): every name works (scripts/checks/link-installed.sh), a second install over it
#      changes nothing, and --uninstall leaves not a single file or directory behind;
#   2. the same into a prefix that already holds other files (like /usr/local): uninstall removes
#      ours and keeps theirs and the directories they live in;
#   3. the `cargo install` route of docs/install.md: the three binaries alone in ROOT/bin, then
#      the extra links and man pages the docs list, every name used, and all of it removed.
# Nothing is installed outside a temporary directory. Uses the binaries of
# `cargo build --release --workspace --bins` (install.sh's own build step is then a no-op).
#
# In CI, route 3 copies the workspace's binaries into ROOT/bin, which is what `cargo install`
# leaves there: running `cargo install --path` for real builds each package on its own, with
# other features of shared dependencies than the workspace build (memchr, serde_core, syn), so it
# recompiles dtld and both distributors, minutes on 2 cores, for the same binaries. With
# `--cargo-install` it runs `cargo install --locked --path . / distributor / reapi --root ROOT`
# and `cargo uninstall` instead (run it when the packages' manifests change).
#
# Usage: scripts/checks/install.sh [--cargo-install]     Prints "install-check: N passed, M failed" last.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cargo_install=0
case ${1:-} in
    --cargo-install) cargo_install=1 ;;
    "") ;;
    *) echo "install-check: error: unknown argument '$1'" >&2; exit 2 ;;
esac
BASE=$(mktemp -d)
trap 'rm -rf -- "$BASE"' EXIT
passed=0
failed=0
pass() { echo "ok    $1"; passed=$((passed + 1)); }
fail() { echo "FAIL  $1"; failed=$((failed + 1)); }
check() {
    local name=$1; shift
    if out=$("$@" 2>&1); then pass "$name"; else fail "$name"; printf '%s\n' "$out" | sed 's/^/      | /' | tail -30; fi
}
tree() { (cd "$1" && find . | LC_ALL=C sort); }

# A fresh machine has no dtld on PATH; this check must not pass because of one.
for n in dtld ld.dtld dtld-distribute dtld-reapi; do
    if p=$(command -v "$n"); then echo "install-check: warning: $n is already on PATH ($p); the checks use explicit prefixes"; fi
done

echo "== 1. scripts/install.sh --prefix into a new directory"
P=$BASE/fresh/opt/dtld
check "install into $P (parents created)" bash "$ROOT/scripts/install.sh" --prefix "$P"
check "layout: bin/{dtld,dtld-distribute,dtld-reapi,ld.dtld}, libexec/dtld/ld, 4 man pages, 6 completions" bash -c '
    cd "$1" || exit 1
    for f in bin/dtld bin/dtld-distribute bin/dtld-reapi; do [ -f "$f" ] && [ -x "$f" ] || { echo "missing $f"; exit 1; }; done
    [ "$(readlink bin/ld.dtld)" = dtld ] || { echo "bin/ld.dtld -> $(readlink bin/ld.dtld)"; exit 1; }
    [ "$(readlink libexec/dtld/ld)" = ../../bin/dtld ] || { echo "libexec/dtld/ld -> $(readlink libexec/dtld/ld)"; exit 1; }
    [ "$(readlink share/man/man1/ld.dtld.1)" = dtld.1 ] || exit 1
    for f in share/man/man1/dtld.1 share/man/man1/dtld-distribute.1 share/man/man1/dtld-reapi.1 \
             share/bash-completion/completions/dtld-distribute share/zsh/site-functions/_dtld-reapi \
             share/fish/vendor_completions.d/dtld-distribute.fish; do [ -s "$f" ] || { echo "missing $f"; exit 1; }; done' _ "$P"
bash "$ROOT/scripts/checks/link-installed.sh" "$P" | sed 's/^/  /'
[ "${PIPESTATUS[0]}" -eq 0 ] && pass "installed names link and run (link-installed.sh)" || fail "installed names link and run (link-installed.sh)"
before=$(tree "$BASE/fresh")
check "a second install over it changes no file list" bash -c '
    bash "$1/scripts/install.sh" --prefix "$2" >/dev/null 2>&1 || exit 1
    after=$(cd "$3" && find . | LC_ALL=C sort)
    [ "$after" = "$4" ] || { diff <(echo "$4") <(echo "$after"); exit 1; }' _ "$ROOT" "$P" "$BASE/fresh" "$before"
check "--uninstall" bash "$ROOT/scripts/install.sh" --prefix "$P" --uninstall
check "nothing left behind (not even the created parents)" bash -c '
    [ ! -e "$1/fresh" ] || { echo "left:"; find "$1/fresh"; exit 1; }' _ "$BASE"
check "a second --uninstall says there is nothing to remove" bash -c '
    ! bash "$1/scripts/install.sh" --prefix "$2" --uninstall 2>&1 | tee /dev/stderr | grep -q removed' _ "$ROOT" "$P"

echo "== 2. into a prefix that already has other files"
Q=$BASE/usr-local
mkdir -p "$Q/bin" "$Q/share/man/man1"
echo tool > "$Q/bin/other-tool"
echo page > "$Q/share/man/man1/other.1"
before=$(tree "$Q")
check "install over existing bin/ and share/man/man1/" bash "$ROOT/scripts/install.sh" --prefix "$Q"
check "uninstall restores exactly the previous tree" bash -c '
    bash "$1/scripts/install.sh" --prefix "$2" --uninstall >/dev/null || exit 1
    after=$(cd "$2" && find . | LC_ALL=C sort)
    [ "$after" = "$3" ] || { diff <(echo "$3") <(echo "$after"); exit 1; }' _ "$ROOT" "$Q" "$before"

R=$BASE/cargo-root
if [ $cargo_install -eq 1 ]; then
    echo "== 3. cargo install --locked --path ... (docs/install.md), with the extra links and man pages"
    check "cargo install --locked --path . / distributor / reapi --root R" bash -c '
        cd "$1" && for p in . distributor reapi; do cargo install --quiet --locked --path "$p" --root "$2" || exit 1; done' _ "$ROOT" "$R"
else
    echo "== 3. the cargo install layout (the workspace's binaries in R/bin; --cargo-install runs cargo install), with the extra links and man pages"
    check "R/bin/{dtld,dtld-distribute,dtld-reapi} as cargo install leaves them" bash -c '
        mkdir -p "$2/bin" && for b in dtld dtld-distribute dtld-reapi; do install -m 755 "${CARGO_TARGET_DIR:-$1/target}/release/$b" "$2/bin/" || exit 1; done' _ "$ROOT" "$R"
fi
check "the extra links and man pages of docs/install.md" bash -c '
    set -e
    cd "$1"
    ln -s dtld bin/ld.dtld
    mkdir -p libexec/dtld share/man/man1
    ln -s ../../bin/dtld libexec/dtld/ld
    for b in dtld dtld-distribute dtld-reapi; do bin/$b --generate=man > share/man/man1/$b.1; done
    ln -s dtld.1 share/man/man1/ld.dtld.1' _ "$R"
bash "$ROOT/scripts/checks/link-installed.sh" "$R" --no-completions | sed 's/^/  /'
[ "${PIPESTATUS[0]}" -eq 0 ] && pass "the names of the cargo install route link and run (link-installed.sh)" || fail "the names of the cargo install route link and run (link-installed.sh)"
check "uninstalled (cargo uninstall with --cargo-install), the links and pages removed: nothing left" bash -c '
    if [ "$2" -eq 1 ]; then cargo uninstall --quiet --root "$1" dtld dtld-distributor dtld-reapi || exit 1
    else rm -f "$1"/bin/{dtld,dtld-distribute,dtld-reapi}; fi
    rm -f "$1/bin/ld.dtld" "$1/libexec/dtld/ld" "$1"/share/man/man1/{dtld,ld.dtld,dtld-distribute,dtld-reapi}.1
    rmdir "$1/libexec/dtld" "$1/libexec" "$1/share/man/man1" "$1/share/man" "$1/share" "$1/bin" 2>/dev/null
    rm -f "$1/.crates.toml" "$1/.crates2.json"
    rmdir "$1" || { find "$1"; exit 1; }' _ "$R" "$cargo_install"

echo "install-check: $passed passed, $failed failed"
[ $failed -eq 0 ]
