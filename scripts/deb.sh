#!/usr/bin/env bash
# Why this exists: a Debian package of dtld (the install.sh layout under /usr), for users who want
# `apt install ./dtld_*.deb` and `-fuse-ld=dtld` with nothing else to set up. cargo-deb makes the
# package from `[package.metadata.deb]` in Cargo.toml; this script first builds the workspace's
# binaries (cargo-deb alone would build only the root package's, leaving the distributors stale)
# and stages the man pages and completions through scripts/install.sh, so the .deb and a prefix
# install have the same files.
#
# Usage: scripts/deb.sh [OUTPUT-DIR]     (default: target/debian) — prints the .deb's path last.
# Needs cargo-deb (`cargo install cargo-deb --locked`; scripts/setup.sh installs it).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/target/debian}
cd "$ROOT"
cargo deb --version >/dev/null 2>&1 || { echo "deb: error: cargo-deb is missing; run: cargo install cargo-deb --locked" >&2; exit 1; }

# The staging tree is the asset directory named in Cargo.toml (target/deb-stage/usr/...).
STAGE=$ROOT/target/deb-stage
rm -rf -- "$STAGE"
bash scripts/install.sh --prefix "$STAGE/usr" >/dev/null
mkdir -p -- "$OUT"
# --strip: the release profile keeps line tables for backtraces in development; a package does
# not need them (a third of the binaries' size).
cargo deb --no-build --strip --output "$OUT" >/dev/null
deb=$(ls -t "$OUT"/dtld_*_amd64.deb | head -1)
echo "deb: built $deb ($(du -h "$deb" | cut -f1))"
echo "$deb"
