#!/usr/bin/env python3
"""A/B check of two dtld builds: the same link, the two binaries taking turns run by run.

Why this exists: a refactoring or an optimisation must be compared with the build before it, and
on a shared machine wall time swings with the load; CPU time (user + sys of the linker) barely
does. bench.py compares linkers; this compares two dtld binaries on one workload.

Usage: scripts/ab-dtld.py OLD_DTLD NEW_DTLD OBJ_DIR RUNS [clang link flags...]
The link command is clang-22's own for the objects in OBJ_DIR (`clang -###`), run directly.
"""
import os, subprocess, sys, time, resource, shlex, statistics, glob, ctypes
# dtld finishes in a forked child that outlives the process it started as: as a subreaper this
# script inherits and reaps it, so its CPU time counts.
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
old, new, objdir, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
flags = sys.argv[5:]
objs = sorted(o for o in glob.glob(objdir + "/*.o") if not o.endswith("luac.o"))
cmd = subprocess.run(["clang-22", "-###", "-fuse-ld=lld", *flags, *objs, "-lm", "-o", "/tmp/ab.out"], capture_output=True, text=True).stderr.strip().splitlines()[-1]
argv = shlex.split(cmd)[1:]
res = {old: [], new: []}
for i in range(runs):
    for b in (old, new) if i % 2 == 0 else (new, old):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run([b, *argv], check=True)
        w = time.perf_counter() - t
        while True:
            try:
                os.wait()
            except ChildProcessError:
                break
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        res[b].append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime, w))
for b in (old, new):
    cpu = statistics.median(x[0] for x in res[b]) * 1000
    wall = statistics.median(x[1] for x in res[b]) * 1000
    print(f"{b}: cpu {cpu:.1f} ms  wall {wall:.1f} ms")
