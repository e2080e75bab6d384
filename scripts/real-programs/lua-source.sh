#!/usr/bin/env bash
# Why this exists: test harnesses that build Lua themselves (tests/dtlto's job-file comparison
# on a real program) need its source tree without running a whole real-program check. This
# fetches Debian's lua5.4 source package into the shared cache (target/real-programs/src/, as
# lua.sh does) and prints the tree's path on stdout; messages go to stderr.
#
# Usage: scripts/real-programs/lua-source.sh        (LUA_SRC_METHOD=auto|apt|pool as in lua.sh)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRCDIR=$ROOT/target/real-programs/src
METHOD=${LUA_SRC_METHOD:-auto}
log() { echo "lua-source: $*" >&2; }
. "$ROOT/scripts/real-programs/lua-common.sh"
lua_source >&2
echo "$TREE"
