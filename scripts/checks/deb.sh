#!/usr/bin/env bash
# Why this exists: CI's proof of issue 19's second promise — the Debian package builds, installs
# with its dependencies, links the sample by the installed names (also with distributed ThinLTO
# through /usr/bin/dtld-distribute), and purges without a trace. It builds the .deb with
# scripts/deb.sh, checks that its files are install.sh's layout under /usr, installs it with
# apt-get (which resolves Depends), runs scripts/checks/link-installed.sh /usr, purges it, and
# checks that every file the package had is gone.
#
# This installs into /usr on this machine for the few seconds of the check (as root, like CI),
# and refuses to start if a dtld package or a /usr/bin/dtld is already there.
#
# Usage: scripts/checks/deb.sh     Prints "deb-check: N passed, M failed" last.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
passed=0
failed=0
check() {
    local name=$1; shift
    if out=$("$@" 2>&1); then echo "ok    $name"; passed=$((passed + 1)); else
        echo "FAIL  $name"; printf '%s\n' "$out" | sed 's/^/      | /' | tail -30; failed=$((failed + 1)); fi
}
SUDO=()
[ "$(id -u)" -eq 0 ] || SUDO=(sudo -n)
cleanup() {
    if dpkg-query -W dtld >/dev/null 2>&1; then "${SUDO[@]}" dpkg --purge dtld >/dev/null 2>&1 || true; fi
    rm -rf -- "$WORK"
}

if dpkg-query -W -f='${Status}' dtld 2>/dev/null | grep -q installed || [ -e /usr/bin/dtld ]; then
    echo "deb-check: error: a dtld package or /usr/bin/dtld is already installed; remove it first (dpkg --purge dtld)" >&2
    exit 1
fi
trap cleanup EXIT

DEB=$(bash "$ROOT/scripts/deb.sh" "$WORK/out" | tail -1)
[ -f "$DEB" ] || { echo "deb-check: error: scripts/deb.sh made no package" >&2; exit 1; }
echo "package: $(basename "$DEB"), $(du -h "$DEB" | cut -f1)"
dpkg-deb -f "$DEB" Depends Recommends | sed 's/^/  /'

check "the package has install.sh's layout under /usr (.gz man pages, zsh vendor-completions)" bash -c '
    dpkg-deb -c "$1" | awk "{ print \$6 }" | sed "s|^\./||; /\/$/d" | LC_ALL=C sort > "$2/deb.files"
    bash "$3/scripts/install.sh" --prefix "$2/stage" >/dev/null 2>&1 || exit 1
    (cd "$2/stage" && find . ! -type d | sed "s|^\./|usr/|" \
        | sed "s|^usr/share/man/\(.*\)\.1$|usr/share/man/\1.1.gz|; s|^usr/share/zsh/site-functions/|usr/share/zsh/vendor-completions/|" \
        | grep -v "^usr/share/dtld/install-manifest.txt$" | LC_ALL=C sort) > "$2/install.files"
    # The package adds its Debian documents; everything else must be the same list.
    grep -v "^usr/share/doc/dtld/" "$2/deb.files" > "$2/deb.layout"
    diff "$2/install.files" "$2/deb.layout"' _ "$DEB" "$WORK" "$ROOT"
check "apt-get install ./$(basename "$DEB") (Depends resolved)" \
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$DEB"
check "dpkg says installed; /usr/bin/ld.dtld -> dtld, /usr/libexec/dtld/ld -> ../../bin/dtld" bash -c '
    [ "$(dpkg-query -W -f="\${Status}" dtld)" = "install ok installed" ] || exit 1
    [ "$(readlink /usr/bin/ld.dtld)" = dtld ] && [ "$(readlink /usr/libexec/dtld/ld)" = ../../bin/dtld ]'
dpkg -L dtld | while read -r f; do [ -d "$f" ] || echo "$f"; done > "$WORK/owned"
bash "$ROOT/scripts/checks/link-installed.sh" /usr --man-suffix=.gz | sed 's/^/  /'
[ "${PIPESTATUS[0]}" -eq 0 ] && { echo "ok    the installed names link and run (link-installed.sh /usr)"; passed=$((passed + 1)); } \
    || { echo "FAIL  the installed names link and run (link-installed.sh /usr)"; failed=$((failed + 1)); }
check "dpkg --purge dtld" "${SUDO[@]}" dpkg --purge dtld
check "purged: not known to dpkg, and none of its $(wc -l < "$WORK/owned") files left" bash -c '
    ! dpkg-query -W dtld >/dev/null 2>&1 || { dpkg-query -W -f="\${Status}\n" dtld; exit 1; }
    left=0; while read -r f; do if [ -e "$f" ] || [ -L "$f" ]; then echo "left: $f"; left=1; fi; done < "$1"
    [ -d /usr/libexec/dtld ] && { echo "left: /usr/libexec/dtld/"; left=1; }
    [ $left -eq 0 ]' _ "$WORK/owned"

echo "deb-check: $passed passed, $failed failed"
[ $failed -eq 0 ]
