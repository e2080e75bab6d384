# Why this exists: what the two Lua real-program checks (lua.sh, ELF; lua-mingw.sh, MinGW/PE)
# share: the Lua source, the bitcode check of an LTO build, and how a check's two runs are
# compared, recorded and summed up. This file is *sourced* by them (after `log` and ROOT, SRCDIR,
# METHOD are defined); it sources fetch-source.sh itself.
#
# A run's results are three files with one prefix: <prefix>.rc (exit status), <prefix>.out,
# <prefix>.err.

. "$ROOT/scripts/real-programs/fetch-source.sh"

# Fetches Debian's lua5.4 source package (cached in $SRCDIR) and sets TREE to its tree.
lua_source() {
    fetch_debian_source lua5.4 "$SRCDIR" "$METHOD" || exit 1
    TREE=$(debian_source_tree lua5.4 "$SRCDIR")
    log "source: ${TREE#$ROOT/} ($(ls "$SRCDIR"/*.dsc 2>/dev/null | xargs -r -n1 basename))"
    [ -f "$TREE/src/lua.c" ] || { log "error: $TREE/src/lua.c missing"; exit 1; }
    # Debian's build generates this header (debian/rules); luaconf.h includes it (on Windows the
    # value is unused, but the file must exist).
    echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' > "$TREE/src/lua5.4-deb-multiarch.h"
}

# An LTO build whose objects are not bitcode would silently test ordinary linking.
require_bitcode() {  # $1 = what asked for LTO (for the message), rest = objects
    local what=$1 o; shift
    for o in "$@"; do
        [ "$(head -c 4 "$o" | od -An -tx1 | tr -d ' \n')" = 4243c0de ] || {
            log "error: $o is not LLVM bitcode ($what)"; exit 1; }
    done
}

pass=0; fail=0; failures=()
record() {  # $1 = ok|fail, $2 = name, [$3 = detail]
    if [ "$1" = ok ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); failures+=("$2"); echo "  FAIL $2${3:+: $3}"; fi
}

# Whether two runs ended the same way and printed the same.
same_run() {  # $1, $2 = result prefixes
    cmp -s "$1.rc" "$2.rc" && cmp -s "$1.out" "$2.out" && cmp -s "$1.err" "$2.err"
}

# Records whether a run with a dtld-linked part behaved like the lld-linked reference, which
# must itself succeed (unless a 4th argument says the check is meant to fail).
compare_runs() {  # $1 = name, $2 = tested prefix, $3 = reference (lld) prefix, [$4 = fails]
    local name=$1 a=$2 b=$3 expect=${4:-}
    if [ -z "$expect" ] && [ "$(cat "$b.rc")" != 0 ]; then
        record fail "$name" "lld-linked lua exited $(cat "$b.rc") (check itself is broken?)"
        head -5 "$b.err" | sed 's/^/    | /'
    elif same_run "$a" "$b"; then
        record ok "$name"
    else
        record fail "$name" "output differs (tested exit $(cat "$a.rc"), lld exit $(cat "$b.rc"))"
        diff "$b.out" "$a.out" | head -10 | sed 's/^/    | /' || true
        diff "$b.err" "$a.err" | head -10 | sed 's/^/    | /' || true
    fi
}

# luac: both builds must write the same bytecode ($1.dtld.luac, $1.lld.luac, from check $1's
# source whose lld run is $1.lld), and dtld's lua running it ($2 = a command that runs it into
# result prefix $1.bc.dtld) must give the same result as the source.
compare_bytecode() {  # $1 = result dir/check, $2 = name, $3 = runner, [$4 = luac's stderr files]
    local r=$1 name=$2 runner=$3; shift 3
    if [ -s "$r.lld.luac" ] && cmp -s "$r.dtld.luac" "$r.lld.luac"; then
        "$runner" "$r.bc.dtld" "$r.dtld.luac"
        if same_run "$r.bc.dtld" "$r.lld"; then
            record ok "$name (luac)"
        else
            record fail "$name (luac)" "bytecode run differs from source run"
        fi
    else
        record fail "$name (luac)" "bytecode differs or luac failed"
        cat "$@" 2>/dev/null | head -3 | sed 's/^/    | /'
    fi
}

# The failures and the totals; the exit status of the check.
summary() {
    local f
    for f in "${failures[@]}"; do echo "  failed: $f"; done
    echo "real-programs: $pass passed, $fail failed"
    [ $fail -eq 0 ]
}
