# Why this exists: the real-program checks (lua.sh, lua-mingw.sh, tinyxml2.sh) build programs
# nobody here wrote, from Debian's source packages. This file is *sourced* by them; it fetches
# and unpacks a source package once, the same way for every check: `apt-get source`, else the
# same files straight from the Debian pool of the mirror the bookworm `deb` entry uses.
#
# Usage (after defining `log`, which prints a prefixed message):
#   . "$ROOT/scripts/real-programs/fetch-source.sh"
#   fetch_debian_source <source pkg> <cache dir> <auto|apt|pool> [<binary pkg>] || exit 1
#   TREE=$(debian_source_tree <source pkg> <cache dir>)
# The cache dir ends up holding the .dsc, the tarballs and the unpacked tree <pkg>-<version>/
# with Debian's patches applied; when the tree is already there nothing is fetched. The binary
# package (default: the source package's name) is used to find the version when no deb-src
# index is configured.

# The unpacked tree in <cache dir> (with a trailing slash), or nothing.
debian_source_tree() {  # $1 = source pkg, $2 = cache dir
    local tree
    tree=$(ls -d "$2"/"$1"-*/ 2>/dev/null | head -1)
    echo "${tree%/}"
}

_fetch_apt() {  # $1 = pkg, $2 = temporary dir
    local pkg=$1 tmp=$2
    (cd "$tmp" && apt-get source -qq "$pkg" >/dev/null 2>"$tmp/apt.log") && return 0
    # The deb-src entry may be configured but its index never fetched: update once, as root.
    if [ "$(id -u)" -eq 0 ]; then
        log "apt-get source failed; running apt-get update once and retrying"
        apt-get update -qq >/dev/null 2>&1 || true
        (cd "$tmp" && apt-get source -qq "$pkg" >/dev/null 2>"$tmp/apt.log") && return 0
    fi
    sed 's/^/  apt: /' "$tmp/apt.log" | tail -5
    return 1
}

_fetch_pool() {  # $1 = pkg, $2 = temporary dir, $3 = binary pkg
    local pkg=$1 tmp=$2 bin=$3 mirror version dsc f dir letter
    mirror=$(apt-get indextargets --no-release-info --format '$(TARGET_OF) $(RELEASE) $(REPO_URI)' 2>/dev/null \
             | awk '$1 == "deb" && $2 == "bookworm" { print $3; exit }')
    mirror=${mirror:-http://deb.debian.org/debian/}
    version=$(apt-cache showsrc "$pkg" 2>/dev/null | awk '/^Version:/ { print $2 }' | sort -V | tail -1)
    # Without a deb-src index: the source version of a binary package built from it (its
    # Source: field carries the version when it differs from the binary's).
    if [ -z "$version" ]; then
        version=$(apt-cache show "$bin" 2>/dev/null | awk '
            /^Source:/ && $3 != "" { gsub(/[()]/, "", $3); src = $3 }
            /^Version:/ { ver = $2 }
            /^$/ { if (ver != "") { print (src != "" ? src : ver); exit } }
            END { if (ver != "") print (src != "" ? src : ver) }' | head -1)
    fi
    [ -n "$version" ] || { log "cannot determine the $pkg source version"; return 1; }
    version=${version#*:}   # no epoch in pool file names
    case $pkg in lib?*) letter=${pkg:0:4} ;; *) letter=${pkg:0:1} ;; esac
    dsc=${pkg}_${version}.dsc
    dir=${mirror}pool/main/$letter/$pkg/
    log "fetching $dsc from $dir"
    curl -fsSL --retry 3 -o "$tmp/$dsc" "$dir$dsc" || return 1
    # The .dsc's Files: section lists the tarballs (md5 size name).
    for f in $(awk '/^Files:/ { on = 1; next } /^[^ ]/ { on = 0 } on { print $3 }' "$tmp/$dsc"); do
        curl -fsSL --retry 3 -o "$tmp/$f" "$dir$f" || return 1
    done
    (cd "$tmp" && dpkg-source -x "$dsc" >/dev/null 2>"$tmp/dpkg-source.log") || {
        tail -5 "$tmp/dpkg-source.log"; return 1; }
}

fetch_debian_source() {  # $1 = source pkg, $2 = cache dir, $3 = auto|apt|pool, [$4 = binary pkg]
    local pkg=$1 srcdir=$2 method=$3 bin=${4:-$1} tmp ok=0
    case $method in auto | apt | pool) ;;
        *) log "error: unknown source method '$method' (auto, apt or pool)"; return 1 ;;
    esac
    [ -z "$(debian_source_tree "$pkg" "$srcdir")" ] || return 0
    mkdir -p "$(dirname "$srcdir")"
    tmp=$(mktemp -d "$(dirname "$srcdir")/fetch.XXXXXX")
    if [ "$method" = auto ] || [ "$method" = apt ]; then
        log "fetching source: apt-get source $pkg"
        _fetch_apt "$pkg" "$tmp" && ok=1
    fi
    if [ $ok = 0 ] && { [ "$method" = auto ] || [ "$method" = pool ]; }; then
        rm -rf "${tmp:?}"/*
        _fetch_pool "$pkg" "$tmp" "$bin" && ok=1
    fi
    if [ $ok = 0 ]; then
        rm -rf "$tmp"
        log "error: could not fetch the $pkg source package"
        return 1
    fi
    rm -rf "$srcdir" && mv "$tmp" "$srcdir"
}
