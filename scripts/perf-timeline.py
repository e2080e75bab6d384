#!/usr/bin/env python3
"""Where a link runs on one core: perf samples binned into short windows of wall time.

Why this exists: a profile says where CPU time goes, not when the other cores sat idle. On 2
cores dtld's large debug link used less CPU than mold's and still took longer: its serial
stretches (the resolver's pass, the roots of --gc-sections, .eh_frame, the end of writing) were
what mattered, and a flat profile hides them among the parallel parts. This prints, for each
window, how many samples fell in it (at F Hz and W ms, one busy core gives F*W/1000), how many
threads they came from, and the functions most of them were in: a run of one-core windows with
the same function is a serial stretch worth parallelising.

Usage:
  perf record -F 5000 -g -o perf.data <dtld link command>
  perf script -i perf.data -F tid,time,ip,sym > perf.txt
  scripts/perf-timeline.py perf.txt [window-ms] [--prefix dtld::]

With -g the innermost frames whose names start with the prefix (dtld's own functions by default)
name the window; without call chains the sampled function does. docs/bench.md (stop 27) shows
a use.
"""

import collections
import re
import signal
import sys


def samples(path):
    """(tid, time in s, [frames innermost first]) for each sample of `perf script` output."""
    out = []
    header = re.compile(r"\s*(\d+)\s+([\d.]+):")
    cur = None
    with open(path, errors="replace") as fh:
        for line in fh:
            m = header.match(line)
            if m and not line.startswith("\t"):
                cur = (int(m.group(1)), float(m.group(2)), [])
                out.append(cur)
                continue
            parts = line.strip().split(None, 1)
            if cur is not None and len(parts) > 1:
                cur[2].append(parts[1].split("(")[0].strip())
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--prefix")]
    prefix = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--prefix=")), "dtld::")
    if not args:
        sys.exit(__doc__)
    window = float(args[1]) / 1000 if len(args) > 1 else 0.005
    s = samples(args[0])
    if not s:
        sys.exit("perf-timeline: no samples in " + args[0])
    t0 = min(x[1] for x in s)
    bins = collections.defaultdict(list)
    for x in s:
        bins[int((x[1] - t0) / window)].append(x)
    for w in sorted(bins):
        xs = bins[w]
        threads = len({x[0] for x in xs})
        names = collections.Counter()
        for _, _, frames in xs:
            own = [f for f in frames if f.startswith(prefix) and "{{closure}}" not in f]
            key = " < ".join(f[len(prefix):][:50] for f in own[:3]) if own else (frames[0][:50] if frames else "?")
            names[key] += 1
        top = names.most_common(2)
        line = f"{w * window * 1000:7.1f} ms  samples {len(xs):4d}  threads {threads}  {top[0][0][:100]} ({top[0][1]})"
        if len(top) > 1:
            line += f" | {top[1][0][:60]} ({top[1][1]})"
        print(line)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly
    main()
