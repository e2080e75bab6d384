#!/usr/bin/env bash
# Why this exists: the README's first quick-start command. On a fresh Debian 12 machine it
# installs the system packages, builds dtld in release mode, and links and runs the bundled
# C sample (examples/hello) with it.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f "$HOME/.cargo/env" ] && ! command -v cargo >/dev/null 2>&1 && . "$HOME/.cargo/env"

echo "== [1/3] system packages (scripts/setup.sh)"
bash scripts/setup.sh
echo "== [2/3] cargo build --release --workspace --bins (dtld and dtld-distribute), and dtld's in-process thin-link library"
cargo build --release --workspace --bins
bash scripts/build-lto-shim.sh
echo "== [3/3] link and run examples/hello with dtld (scripts/sample.sh)"
bash scripts/sample.sh "${DTLD:-$PWD/target/release/dtld}"
echo
echo "quickstart: done. To use dtld by name, install it: scripts/install.sh --prefix ~/.local"
echo "            then: clang-22 -fuse-ld=dtld ...   or: gcc -B ~/.local/libexec/dtld ...   (docs/install.md)"
