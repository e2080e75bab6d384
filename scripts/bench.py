#!/usr/bin/env python3
"""Link-time and memory benchmark: dtld side by side with ld.lld-22 and mold, in one run.

Why this exists: speed and memory are measured here, never in timed tests. Every linker links
the same inputs in the same run, several times (the linker command from `clang -###`, run
directly), and the report gives the median wall time, the peak RSS (of the largest process of
the link: the linker, or a child such as dtld's llvm-lto2 or a backend compile) and the ratio to
ld.lld-22.

Workloads (generated into target/bench/, so the script needs nothing but clang-22):
  native-pie     a synthetic program of many C modules, PIE, no LTO
  native-static  the same, -static
  thinlto        the same as ThinLTO bitcode, in-process ThinLTO (-flto=thin)
  dtlto          the same through DTLTO with dtld-distribute (dtld and ld.lld-22 only)
  lua-*          Lua 5.4 from Debian's sources, when scripts/real-programs/lua.sh has built its
                 objects (target/real-programs/lua/obj-pic): native PIE and ThinLTO

Usage: scripts/bench.py [--runs N] [--modules M] [--only name,...]
Results: printed, and written to target/bench/results.md.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
OUT = os.path.join(ROOT, "target", "bench")
CLANG = "clang-22"


def sh(cmd, cwd=None, env=None):
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"command failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    return r


def generate(dirname, modules, funcs):
    """A program of `modules` C files with `funcs` functions each, calling across modules."""
    os.makedirs(dirname, exist_ok=True)
    for m in range(modules):
        path = os.path.join(dirname, f"m{m}.c")
        if os.path.exists(path):
            continue
        nxt = (m + 1) % modules
        lines = ["#include <string.h>", f"int m{nxt}_f0(int);", f"static const char tbl{m}[] = \"module {m} table\";"]
        for f in range(funcs):
            call = f"m{nxt}_f0(x - 1)" if f == 0 else f"m{m}_f{f - 1}(x ^ {f})"
            lines.append(f"int m{m}_f{f}(int x) {{ if (x <= 0) return (int)strlen(tbl{m}); return {call} + {f}; }}")
        with open(path, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    main = os.path.join(dirname, "main.c")
    with open(main, "w") as fh:
        fh.write("#include <stdio.h>\nint m0_f0(int);\nint main(void){ printf(\"%d\\n\", m0_f0(3)); return 0; }\n")


def compile_all(src, dst, flags):
    os.makedirs(dst, exist_ok=True)
    objs = []
    todo = []
    for name in sorted(os.listdir(src)):
        if not name.endswith(".c"):
            continue
        o = os.path.join(dst, name[:-2] + ".o")
        objs.append(o)
        if not os.path.exists(o):
            todo.append([CLANG, "-O2", "-c", *flags, os.path.join(src, name), "-o", o])
    procs = []
    for cmd in todo:
        procs.append(subprocess.Popen(cmd))
        if len(procs) >= (os.cpu_count() or 2):
            procs.pop(0).wait()
    for p in procs:
        p.wait()
    return objs


def link_command(driver_cmd, cwd):
    """The linker's own command line, from `clang -###`, so the clang driver's memory and start-up
    are not measured."""
    import shlex
    r = sh([*driver_cmd, "-###"], cwd=cwd)
    lines = [l for l in r.stderr.splitlines() if l.startswith(" \"")]
    return shlex.split(lines[-1])


def run_isolated(cmd, cwd):
    """Wall time and peak RSS (KiB) of one link, the linker and all its children: measured in a
    fresh Python process, so RUSAGE_CHILDREN covers this link only."""
    code = (
        "import subprocess,sys,time,resource,json\n"
        "t=time.perf_counter()\n"
        f"r=subprocess.run({cmd!r},cwd={cwd!r},stdout=subprocess.DEVNULL,stderr=subprocess.PIPE)\n"
        "w=time.perf_counter()-t\n"
        "print(json.dumps([r.returncode,w,resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,r.stderr.decode(errors='replace')[-2000:]]))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    import json
    rc, wall, rss, err = json.loads(r.stdout)
    if rc != 0:
        raise RuntimeError(f"link failed ({rc}): {' '.join(cmd)}\n{err}")
    return wall, rss


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--modules", type=int, default=300)
    ap.add_argument("--funcs", type=int, default=40)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    dtld = os.environ.get("DTLD", os.path.join(ROOT, "target", "release", "dtld"))
    dist = os.environ.get("DTLD_DISTRIBUTOR", os.path.join(ROOT, "target", "release", "dtld-distribute"))
    for tool in (dtld, dist):
        if not os.access(tool, os.X_OK):
            sys.exit(f"bench: {tool} not found; run cargo build --release --workspace --bins")
    linkers = [("dtld", dtld), ("ld.lld-22", "lld")]
    if shutil.which("mold"):
        linkers.append(("mold", "mold"))
    src = os.path.join(OUT, f"src-{a.modules}x{a.funcs}")
    generate(src, a.modules, a.funcs)
    native = compile_all(src, os.path.join(OUT, f"obj-{a.modules}x{a.funcs}-pic"), ["-fPIE"])
    thin = compile_all(src, os.path.join(OUT, f"obj-{a.modules}x{a.funcs}-thin"), ["-fPIE", "-flto=thin"])
    work = os.path.join(OUT, "work")
    os.makedirs(work, exist_ok=True)

    workloads = [
        ("native-pie", native, ["-pie"], True),
        ("native-static", native, ["-static-pie"], True),
        ("thinlto", thin, ["-pie", "-flto=thin"], True),
        ("dtlto", thin, ["-pie", "-flto=thin", f"-fthinlto-distributor={dist}"], False),
    ]
    lua = os.path.join(ROOT, "target", "real-programs", "lua")
    for kind, flags in (("obj-pic", ["-pie"]), ("obj-pic-lto-thin", ["-pie", "-flto=thin"])):
        d = os.path.join(lua, kind)
        if os.path.isdir(d):
            objs = [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".o") and f != "luac.o"]
            workloads.append((f"lua-{'thinlto' if 'lto' in kind else 'native-pie'}", objs, flags + ["-lm"], True))
    only = set(x for x in a.only.split(",") if x)

    rows = []
    for name, objs, flags, with_mold in workloads:
        if only and name not in only:
            continue
        results = {}
        for lname, l in linkers:
            if lname == "mold" and not with_mold:
                continue
            cmd = link_command([CLANG, f"-fuse-ld={l}", *flags, *objs, "-o", os.path.join(work, f"{name}.{lname}")], work)
            run_isolated(cmd, work)  # warm-up (page cache, LTO staging)
            walls, rsss = [], []
            for _ in range(a.runs):
                w, r = run_isolated(cmd, work)
                walls.append(w)
                rsss.append(r)
            results[lname] = (statistics.median(walls), max(rsss))
        base = results.get("ld.lld-22")
        for lname, (w, r) in results.items():
            ratio = f"{w / base[0]:.2f}x" if base else "-"
            mratio = f"{r / base[1]:.2f}x" if base else "-"
            rows.append((name, lname, w, r, ratio, mratio))
            print(f"{name:16} {lname:10} {w * 1000:9.1f} ms  {r / 1024:8.1f} MiB  time {ratio:>6}  rss {mratio:>6}", flush=True)

    with open(os.path.join(OUT, "results.md"), "w") as fh:
        fh.write(f"# dtld benchmark ({a.runs} runs each, median wall time, peak RSS incl. children; ratios to ld.lld-22)\n\n")
        fh.write(f"Synthetic program: {a.modules} modules x {a.funcs} functions. Machine: {os.cpu_count()} cores.\n\n")
        fh.write("| workload | linker | time (ms) | peak RSS (MiB) | time / lld | RSS / lld |\n|---|---|---|---|---|---|\n")
        for name, lname, w, r, ratio, mratio in rows:
            fh.write(f"| {name} | {lname} | {w * 1000:.1f} | {r / 1024:.1f} | {ratio} | {mratio} |\n")
    print(f"bench: results in {os.path.relpath(os.path.join(OUT, 'results.md'), ROOT)}")


if __name__ == "__main__":
    main()
