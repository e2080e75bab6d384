#!/bin/bash
# Linker wrapper for run.sh --devnull-workaround (a what-if mode). When the output file
# (-o X, --output X, --output=X) exists and is neither a regular file nor a directory, e.g.
# /dev/null, the link goes to a temporary file whose bytes are then copied into the output;
# otherwise the linker runs unchanged. MOLD_SUITE_LINKER names the linker; every redirected
# output is appended to $MOLD_SUITE_WORK/devnull-redirects.
out=; prev=
for a in "$@"; do
  case $prev in -o|--output) out=$a ;; esac
  case $a in --output=*) out=${a#--output=} ;; esac
  prev=$a
done
if [ -n "$out" ] && [ -e "$out" ] && [ ! -f "$out" ] && [ ! -d "$out" ]; then
  tmp=$(mktemp -d) || exit 1
  args=(); prev=
  for a in "$@"; do
    b=$a
    case $prev in -o|--output) b=$tmp/out ;; esac
    case $a in --output=*) b=--output=$tmp/out ;; esac
    args+=("$b"); prev=$a
  done
  "$MOLD_SUITE_LINKER" "${args[@]}"; rc=$?
  [ $rc = 0 ] && cat "$tmp/out" > "$out"
  rm -rf "$tmp"
  echo "$out" >> "$MOLD_SUITE_WORK/devnull-redirects"
  exit $rc
fi
exec "$MOLD_SUITE_LINKER" "$@"
