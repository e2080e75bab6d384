#!/usr/bin/env bash
# Why this exists: after `cargo build`, nothing lets a user write `clang -fuse-ld=dtld` (clang runs
# `ld.dtld`, found on PATH) or `gcc -B <dir>` (gcc runs `<dir>/ld`). This installs the layout mold
# users know, and records what it installed so that `--uninstall` removes exactly that:
#
#   PREFIX/bin/dtld, dtld-distribute, dtld-reapi
#   PREFIX/bin/ld.dtld -> dtld                       clang -fuse-ld=dtld (PREFIX/bin on PATH)
#   PREFIX/libexec/dtld/ld -> ../../bin/dtld         gcc -B PREFIX/libexec/dtld
#   PREFIX/lib/dtld/libdtld-lto-NN.so                the in-process thin link for LLVM NN, when
#                                                    scripts/build-lto-shim.sh built it
#   PREFIX/share/man/man1/dtld.1, ld.dtld.1 -> dtld.1, dtld-distribute.1, dtld-reapi.1
#   PREFIX/share/bash-completion/completions/, zsh/site-functions/, fish/vendor_completions.d/
#   PREFIX/share/dtld/install-manifest.txt           what --uninstall removes
#
# The links are relative, so the installed tree can be moved. The man pages and completions are
# printed by the binaries themselves (`--generate=man`, `--generate=complete-bash`, ...).
#
# Usage: scripts/install.sh [--prefix DIR] [--uninstall]      (DIR defaults to /usr/local)
# It first runs `cargo build --release --workspace --bins` when cargo is on PATH (a no-op when the
# build is up to date); without cargo (e.g. under sudo) it installs the binaries already built in
# ${CARGO_TARGET_DIR:-target}/release.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

prefix=/usr/local
uninstall=0
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) [ $# -ge 2 ] || { echo "install: error: --prefix needs a directory" >&2; exit 2; }
                  prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        --uninstall) uninstall=1; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "install: error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case $prefix in /*) ;; *) prefix=$PWD/$prefix ;; esac
prefix=${prefix%/}
MANIFEST_REL=share/dtld/install-manifest.txt
MANIFEST=$prefix/$MANIFEST_REL

# ------------------------------------------------------------------------------------------------
# Uninstall: remove what the manifest lists, then the directories the install created, if empty.
# ------------------------------------------------------------------------------------------------
if [ $uninstall -eq 1 ]; then
    [ -f "$MANIFEST" ] || { echo "install: error: no dtld installation recorded in $prefix ($MANIFEST is missing)" >&2; exit 1; }
    entries=$(cat "$MANIFEST")
    removed=0
    while read -r kind rel; do
        case $kind in file|link) ;; *) continue ;; esac
        if [ -e "$prefix/$rel" ] || [ -L "$prefix/$rel" ]; then
            rm -f -- "$prefix/$rel"
            removed=$((removed + 1))
        fi
    done <<< "$entries"
    rm -f -- "$MANIFEST"
    # One that now holds other files stays.
    # Directories inside the prefix deepest first (a child sorts after its parent), then the
    # prefix itself (.) and the ancestors the install created (.., ../..), innermost first.
    dirs=$(sed -n 's/^dir //p' <<< "$entries")
    while read -r rel; do
        [ -n "$rel" ] || continue
        case $rel in
            .|..|../*) d=$prefix; r=$rel
                       while [ "$r" != . ]; do d=$(dirname "$d"); r=${r#..}; r=${r#/}; [ -n "$r" ] || r=.; done ;;
            *) d=$prefix/$rel ;;
        esac
        [ -d "$d" ] || continue
        rmdir -- "$d" 2>/dev/null || echo "install: note: $d is not empty; left in place"
    done < <(grep -v '^\.' <<< "$dirs" | LC_ALL=C sort -r; grep '^\.' <<< "$dirs" | awk '{ print length, $0 }' | sort -n | cut -d' ' -f2-)
    echo "install: removed $removed files and links from $prefix"
    exit 0
fi

# ------------------------------------------------------------------------------------------------
# Install.
# ------------------------------------------------------------------------------------------------
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
if command -v cargo >/dev/null 2>&1; then
    (cd "$ROOT" && cargo build --release --workspace --bins)
    # Says why and exits 0 when LLVM's headers are missing: dtld then uses llvm-lto2/LLVMgold.
    bash "$ROOT/scripts/build-lto-shim.sh" "" "$BIN"
fi
for b in dtld dtld-distribute dtld-reapi; do
    [ -x "$BIN/$b" ] || { echo "install: error: $BIN/$b is not built; run: cargo build --release --workspace --bins" >&2; exit 1; }
done

# The directories that did not exist before, kept from an earlier install over the same prefix,
# so that uninstalling after a reinstall still removes them.
declare -A created=()
if [ -f "$MANIFEST" ]; then
    while read -r kind rel; do [ "$kind" = dir ] && created[$rel]=1; done < "$MANIFEST"
fi
entries=()
mkdirs() { # <rel dir>: creates it and each missing parent inside the prefix, recording them
    local rel=$1 path=""
    local IFS=/
    for part in $rel; do
        path=${path:+$path/}$part
        if [ ! -d "$prefix/$path" ]; then
            mkdir -p -- "$prefix/$path"
            created[$path]=1
        fi
    done
}
put() { # <mode> <source file> <rel dest>
    mkdirs "$(dirname "$3")"
    install -m "$1" -- "$2" "$prefix/$3"
    entries+=("file $3")
}
link() { # <target, relative to the link's directory> <rel link>
    mkdirs "$(dirname "$2")"
    ln -sfn -- "$1" "$prefix/$2"
    entries+=("link $2")
}
# The prefix and any missing ancestors: ".", "..", "../..", ...
up=.
anc=$prefix
while [ ! -d "$anc" ]; do
    created[$up]=1
    anc=$(dirname "$anc")
    [ "$up" = . ] && up=.. || up=$up/..
done
mkdir -p -- "$prefix"

gen=$(mktemp -d)
trap 'rm -rf -- "$gen"' EXIT
"$BIN/dtld" --generate=man > "$gen/dtld.1"
for b in dtld-distribute dtld-reapi; do
    "$BIN/$b" --generate=man > "$gen/$b.1"
    "$BIN/$b" --generate=complete-bash > "$gen/$b.bash"
    "$BIN/$b" --generate=complete-zsh > "$gen/_$b"
    "$BIN/$b" --generate=complete-fish > "$gen/$b.fish"
done

for b in dtld dtld-distribute dtld-reapi; do
    put 755 "$BIN/$b" "bin/$b"
done
link dtld bin/ld.dtld
# The in-process thin-link library (src/lto/inproc.rs looks in <exe>/../lib/dtld/).
for lib in "$BIN"/libdtld-lto-*.so; do
    [ -f "$lib" ] && put 644 "$lib" "lib/dtld/$(basename "$lib")"
done
link ../../bin/dtld libexec/dtld/ld
for page in dtld dtld-distribute dtld-reapi; do
    put 644 "$gen/$page.1" "share/man/man1/$page.1"
done
link dtld.1 share/man/man1/ld.dtld.1
for b in dtld-distribute dtld-reapi; do
    put 644 "$gen/$b.bash" "share/bash-completion/completions/$b"
    put 644 "$gen/_$b" "share/zsh/site-functions/_$b"
    put 644 "$gen/$b.fish" "share/fish/vendor_completions.d/$b.fish"
done

mkdirs "$(dirname "$MANIFEST_REL")"
{
    printf '%s\n' "${entries[@]}"
    for d in "${!created[@]}"; do echo "dir $d"; done | LC_ALL=C sort
} > "$MANIFEST.tmp"
mv -- "$MANIFEST.tmp" "$MANIFEST"

echo "install: installed dtld $("$prefix/bin/dtld" --version | sed -n 's/^dtld \([^ ]*\).*/\1/p') into $prefix (${#entries[@]} files and links; manifest: $MANIFEST)"
case ":$PATH:" in
    *":$prefix/bin:"*) echo "install: use it with: clang -fuse-ld=dtld ...   or: gcc -B $prefix/libexec/dtld ..." ;;
    *) echo "install: $prefix/bin is not on PATH: add it for clang -fuse-ld=dtld, or use clang -B $prefix/bin -fuse-ld=dtld (or --ld-path=$prefix/bin/ld.dtld); gcc -B $prefix/libexec/dtld works as it is" ;;
esac
