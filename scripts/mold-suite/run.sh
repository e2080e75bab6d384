#!/bin/bash
# Runs mold's test suite (x86-64 subset) against a linker and records PASS / FAIL / SKIP per test.
# The mold checkout stays outside this repository; nothing of mold's is copied here.
#
# usage: scripts/mold-suite/run.sh <mold-checkout> [<linker>] [options]
#   <linker>               linker under test (default: target/release/dtld)
#   --only portable-core|all
#                          run the 199 portable-core scripts (scripts/mold-suite/portable-core.txt)
#                          or all 429 x86-64 scripts (default: all)
#   -j N                   tests run in parallel (default: 2)
#   --filter REGEX         only tests whose file name (e.g. "as-needed.sh") matches REGEX (grep -E)
#   --timeout SECS         per-test timeout (default: 60)
#   --out FILE             results file (default: target/mold-suite/results.tsv)
#   --compare TSV          after the run, list tests that PASS in TSV but not now
#   --compare-only TSV     do not run anything; compare the existing results file with TSV
#   --keep                 keep the work directory (fakes dir + test outputs) and print its path
#   --devnull-workaround   what-if mode: when the output file exists and is not a regular file
#                          (-o /dev/null), link into a temporary file and copy it there
#                          (scripts/mold-suite/devnull-wrapper.sh)
#   (a linker under target/ is copied into the work directory first, so rebuilds do not disturb a run)
#
# Method (same as the reference runner used for results-ld.lld-22.tsv): a "fakes" directory holds
# wrapper scripts named ld, mold and ld.lld that exec the linker under test; each test runs as
# `bash <mold>/test/<t>.sh` with that directory as the working directory (the tests call
# `$CC -B.` and `./mold`). A shim directory on PATH maps clang/clang++ to clang-22/clang++-22.
# TEST_CC etc. are left unset, so the tests use cc/c++ (gcc 12). Exit != 0 => FAIL; exit 0 with
# a line ending in "skipped" => SKIP; otherwise PASS. The third column of the results file is the
# first "command failed" line of the test's output ("timeout after N s" if it was killed).
# Full per-test output goes to <results file minus .tsv>.logs/<test>.log.
set -u

die() { echo "run.sh: $*" >&2; exit 2; }
usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CORE_LIST=$HERE/portable-core.txt

MOLD=
LINKER=
ONLY=all
JOBS=2
FILTER=
TIMEOUT=60
OUT=$ROOT/target/mold-suite/results.tsv
COMPARE=
COMPARE_ONLY=0
KEEP=0
DEVNULL_WORKAROUND=0

while [ $# -gt 0 ]; do
  case $1 in
    --only) ONLY=${2:?}; shift 2 ;;
    --only=*) ONLY=${1#*=}; shift ;;
    -j) JOBS=${2:?}; shift 2 ;;
    -j*) JOBS=${1#-j}; shift ;;
    --filter) FILTER=${2:?}; shift 2 ;;
    --timeout) TIMEOUT=${2:?}; shift 2 ;;
    --out) OUT=${2:?}; shift 2 ;;
    --compare) COMPARE=${2:?}; shift 2 ;;
    --compare-only) COMPARE=${2:?}; COMPARE_ONLY=1; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --devnull-workaround) DEVNULL_WORKAROUND=1; shift ;;
    -h|--help) usage ;;
    -*) die "unknown option $1" ;;
    *) if [ -z "$MOLD" ]; then MOLD=$1
       elif [ -z "$LINKER" ]; then LINKER=$1
       else die "too many arguments"; fi
       shift ;;
  esac
done

case $ONLY in portable-core|all) ;; *) die "--only takes portable-core or all" ;; esac
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || die "-j takes a positive number"
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "--timeout takes a positive number"
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
case $COMPARE in ''|/*) ;; *) COMPARE=$PWD/$COMPARE ;; esac

# Compare the results file with a reference TSV. Both formats are accepted: ours
# (test, result, first failure) and the reference's (result, test, first failure).
compare() {
  local ref=$1 cur=$2
  [ -f "$ref" ] || die "no such file: $ref"
  [ -f "$cur" ] || die "no such file: $cur"
  echo "== PASS in the reference ($ref) but not now ($cur) =="
  awk -F'\t' '
    function norm(a, b) { if (a ~ /^(PASS|FAIL|SKIP)$/) { T = b; R = a } else { T = a; R = b } }
    FNR == NR { norm($1, $2); ref[T] = R; next }
    { norm($1, $2); if (ref[T] == "PASS" && R != "PASS") { n++; printf "%s\t%s\t%s\n", T, R, $3 } }
    END { printf "(%d tests)\n", n + 0 }' "$ref" "$cur"
  echo "== PASS now but not in the reference =="
  awk -F'\t' '
    function norm(a, b) { if (a ~ /^(PASS|FAIL|SKIP)$/) { T = b; R = a } else { T = a; R = b } }
    FNR == NR { norm($1, $2); ref[T] = R; next }
    { norm($1, $2); if (R == "PASS" && (T in ref) && ref[T] != "PASS") { n++; printf "%s\t%s in reference\n", T, ref[T] } }
    END { printf "(%d tests)\n", n + 0 }' "$ref" "$cur"
}

if [ $COMPARE_ONLY = 1 ]; then
  compare "$COMPARE" "$OUT"
  exit 0
fi

[ -n "$MOLD" ] || usage
[ -f "$MOLD/test/common.inc" ] || die "$MOLD does not look like a mold checkout (no test/common.inc)"
MOLD=$(cd "$MOLD" && pwd)
[ -f "$CORE_LIST" ] || die "missing $CORE_LIST"

LINKER=${LINKER:-$ROOT/target/release/dtld}
if [[ $LINKER != */* ]]; then
  LINKER=$(command -v "$LINKER") || die "linker not found on PATH"
fi
[ -x "$LINKER" ] || die "linker $LINKER is not executable (build it: cargo build --release)"
LINKER=$(cd "$(dirname "$LINKER")" && pwd)/$(basename "$LINKER")

command -v clang-22 >/dev/null || die "clang-22 not found (scripts/setup.sh installs it)"
command -v timeout >/dev/null || die "timeout(1) not found"

# The x86-64 subset: every test/*.sh except arch-*, plus arch-x86_64-*.
TESTS=$( (cd "$MOLD/test" && ls *.sh | grep -v '^arch-'; cd "$MOLD/test" && ls arch-x86_64-*.sh) )
if [ $ONLY = portable-core ]; then
  TESTS=$(printf '%s\n' "$TESTS" | grep -Fxf <(grep -v '^#' "$CORE_LIST"))
fi
if [ -n "$FILTER" ]; then
  TESTS=$(printf '%s\n' "$TESTS" | grep -E -- "$FILTER")
fi
[ -n "$TESTS" ] || die "no tests selected"
NTESTS=$(printf '%s\n' "$TESTS" | wc -l)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mold-suite.XXXXXX")
cleanup() { if [ $KEEP = 1 ]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# A linker built in this repository's target/ is copied first, so that a rebuild during the run
# cannot mix two binaries (or exec a half-written one).
LINKER_SHOWN=$LINKER
case $(readlink -f "$LINKER") in
  "$ROOT"/target/*)
    mkdir -p "$WORK/linker"
    cp "$LINKER" "$WORK/linker/" || die "cannot copy $LINKER"
    LINKER=$WORK/linker/$(basename "$LINKER")
    LINKER_SHOWN="$LINKER_SHOWN (copied; sha256 $(sha256sum "$LINKER" | cut -c1-16))" ;;
esac

FAKES=$WORK/fakes
SHIMS=$WORK/shimbin
mkdir -p "$FAKES" "$SHIMS"
for n in ld mold ld.lld; do
  if [ $DEVNULL_WORKAROUND = 1 ]; then
    printf '#!/bin/sh\nMOLD_SUITE_LINKER=%q MOLD_SUITE_WORK=%q exec %q "$@"\n' \
      "$LINKER" "$WORK" "$HERE/devnull-wrapper.sh" > "$FAKES/$n"
  else
    printf '#!/bin/sh\nexec %q "$@"\n' "$LINKER" > "$FAKES/$n"
  fi
  chmod +x "$FAKES/$n"
done
printf '#!/bin/sh\nexec clang-22 "$@"\n' > "$SHIMS/clang"
printf '#!/bin/sh\nexec clang++-22 "$@"\n' > "$SHIMS/clang++"
chmod +x "$SHIMS/clang" "$SHIMS/clang++"

OUTDIR=$(dirname "$OUT")
LOGS=${OUT%.tsv}.logs
mkdir -p "$OUTDIR" "$LOGS"
RAW=$WORK/raw.tsv
: > "$RAW"

echo "mold suite: $MOLD ($(git -C "$MOLD" rev-parse --short HEAD 2>/dev/null || echo 'no git'))"
echo "linker:     $LINKER_SHOWN"
[ $DEVNULL_WORKAROUND = 1 ] && echo "mode:       --devnull-workaround (output to /dev/null goes through a temporary file)"
echo "tests:      $NTESTS ($ONLY${FILTER:+, filter $FILTER}), -j $JOBS, timeout ${TIMEOUT}s"

# Run as root, a linker that replaces its output file by renaming a temporary file over it turns
# `-o /dev/null` (used all over the suite) into deleting the system's /dev/null. So as root each
# test runs in a private mount namespace in which /dev/null is a bind mount of itself: a rename
# over it fails with EBUSY (the link fails) instead of replacing it. Opening and writing it works
# as usual, so linkers that write into /dev/null (ld.lld, GNU ld) are unaffected.
[ -c /dev/null ] || die "/dev/null is not a character device (repair: rm -f /dev/null && mknod -m 666 /dev/null c 1 3)"
GUARD=
if [ "$(id -u)" = 0 ]; then
  command -v unshare >/dev/null &&
    unshare -m --propagation private sh -c 'mount --bind /dev/null /dev/null' 2>/dev/null ||
    die "running as root needs unshare(1) and mount namespaces to protect /dev/null; run as a normal user instead"
  printf '#!/bin/sh\nmount --bind /dev/null /dev/null || exit 125\nexec "$@"\n' > "$WORK/guard"
  chmod +x "$WORK/guard"
  GUARD="unshare -m --propagation private $WORK/guard"
fi

one() {
  local name=$1 out rc st fl
  out=$(timeout -k 5 "$TIMEOUT" $GUARD bash "$MOLD/test/$name" 2>&1 </dev/null); rc=$?
  printf '%s\n' "$out" > "$LOGS/${name%.sh}.log"
  if [ $rc -ne 0 ]; then st=FAIL
  elif printf '%s\n' "$out" | grep -q 'skipped$'; then st=SKIP
  else st=PASS; fi
  fl=$(printf '%s\n' "$out" | grep -m1 'command failed' | cut -c1-220 | tr '\t' ' ')
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then fl="timeout after ${TIMEOUT}s${fl:+; $fl}"; fi
  printf '%s\t%s\t%s\n' "$name" "$st" "$fl"
  printf '%-4s %s\n' "$st" "$name" >&2
}
export -f one
export MOLD LOGS TIMEOUT GUARD
export PATH=$SHIMS:$PATH

cd "$FAKES"
printf '%s\n' "$TESTS" | xargs -P "$JOBS" -I{} bash -c 'one "$1"' _ {} >> "$RAW"
sort -t$'\t' -k1,1 "$RAW" > "$OUT"

totals() {  # totals <label> <file>
  awk -F'\t' -v label="$1" '
    { n++; c[$2]++ }
    END { printf "%-24s %3d PASS / %3d FAIL / %3d SKIP  (%d tests)\n", label, c["PASS"], c["FAIL"], c["SKIP"], n }' "$2"
}
echo
echo "results: $OUT"
totals "all selected:" "$OUT"
awk -F'\t' 'NR == FNR { core[$1] = 1; next } ($1 in core)' <(grep -v '^#' "$CORE_LIST") "$OUT" > "$WORK/core.tsv"
[ -s "$WORK/core.tsv" ] && totals "portable-core subset:" "$WORK/core.tsv"
TIMEOUTS=$(awk -F'\t' '$3 ~ /^timeout/ { print $1 }' "$OUT")
[ -n "$TIMEOUTS" ] && echo "timed out: $(echo $TIMEOUTS)"
[ -f "$WORK/devnull-redirects" ] && echo "--devnull-workaround: $(wc -l < "$WORK/devnull-redirects") links redirected"

[ -c /dev/null ] || echo "WARNING: /dev/null is no longer a character device; repair: rm -f /dev/null && mknod -m 666 /dev/null c 1 3" >&2

if [ -n "$COMPARE" ]; then
  echo
  compare "$COMPARE" "$OUT"
fi
exit 0
