#!/usr/bin/env python3
"""Link-time and memory benchmark: dtld side by side with ld.lld-22, mold and wild, in one run.

Why this exists: speed and memory are measured here, never in timed tests. Every linker links
the same inputs in the same run, in interleaved rounds (the linker command from `clang -###`, run
directly), every output is checked (run, or for clang-static `check.sh`), and the report gives,
per workload and linker, medians of the rounds:
  wall time   as a build system sees it: the default mode (mold, wild and dtld fork, and the
              parent exits when the output is complete), the linker's stdout and stderr pipes
              read to their end
  CPU time    user + system of the one-process run (`--no-fork` for mold, wild and dtld; lld
              and GNU ld as they are), of the linker and all its children (rusage of the child
              tree, so llvm-lto2 or a backend compile counts)
  peak RSS    the largest process of that one-process run (the linker, or a child such as
              dtld's llvm-lto2 or a backend compile)
with the ratios to ld.lld-22 and to the fastest of the peers mold 3.0 and wild 0.10 ("dtld /
fastest peer"). A linker that fails a link or whose output fails its check is reported as
"fails: <first line of its stderr>" (or "fails check: ...") in the table, never left out.

Linkers: dtld ($DTLD, default target/release/dtld), ld.lld-22, Debian's mold (1.10, when
`mold` is on PATH), $DTLD_BEFORE (another dtld, e.g. main's before a change), and the peers
mold 3.0 and wild 0.10 (--mold3 PATH / $MOLD3, --wild PATH / $WILD; default
$BENCH_ROOT/peers/mold3/mold and $BENCH_ROOT/peers/wild/bin/wild, where ../shared/peers/fetch.sh
installs them; BENCH_ROOT defaults to ~/.cache/dtld-bench). Labels carry the version each prints
for --version ("mold 3.0", "wild 0.10"). The peers take part in the native links (native-*,
lua-native-pie, openssl-native*, large-debug, clang-static), not in the LTO ones.

Workloads (generated into target/bench/, so the script needs nothing but clang-22):
  native-pie     a synthetic program of many C modules, PIE, no LTO
  native-static  the same, -static
  thinlto        the same as ThinLTO bitcode, in-process ThinLTO (-flto=thin)
  dtlto          the same through DTLTO with dtld-distribute (dtld and ld.lld-22 only)
  lua-*          Lua 5.4 from Debian's sources, when scripts/real-programs/lua.sh has built its
                 objects (target/real-programs/lua/obj-pic): native PIE and ThinLTO
  gcc-lto        the synthetic program compiled with gcc -O2 -flto (GCC IR), linked by
                 `gcc -flto=auto` through dtld (-B<dir> holding ld -> dtld), GNU ld (-fuse-ld=bfd)
                 and mold: the whole gcc link (driver, linker, GCC's plugin, lto-wrapper, lto1) is
                 timed, since GCC's LTO runs inside the link; ratios are to GNU ld (ld.lld cannot
                 link GCC IR). The three programs must print the same.
  lua-gcc-lto    the same for Lua 5.4, when scripts/real-programs/lua-gcc-lto.sh has built its
                 objects (target/real-programs/lua-gcc-lto/obj-pic)

The edit-compile-relink loop of ThinLTO, for Lua (target/real-programs/lua/obj-pic-lto-thin) and
for OpenSSL's `openssl` program when its ThinLTO build is present (--openssl DIR: a built
OpenSSL tree, configured with CC=clang-22 CFLAGS="-O2 -flto=thin -fPIE" and `make build_libs
build_programs`; default target/openssl/src; see docs/bench.md). Every linker has its own cache
directory, warmed by the warm-up link:
  X-thin-link          the thin link only: --thinlto-index-only=FILE (the serial part of a
                       distributed build); --thinlto-prefix-replace sends each linker's index
                       files to a directory of its own
  X-relink-unchanged   in-process ThinLTO relink, nothing changed, --thinlto-cache-dir (ld.lld
                       reruns its thin link; dtld reuses its previous result)
  X-relink-changed     the same after one module changed: every run links a new version of a
                       small extra module (bench_variant_N.o, numbered after those on disk, so
                       never linked before), so the thin link reruns and that module's backend
                       compiles; everything else comes from the cache
  X-dtlto-unchanged    DTLTO relink with dtld-distribute, nothing changed, --thinlto-cache-dir
                       (dtld and ld.lld-22)
  X-dtlto-changed      DTLTO relink after one module changed, as X-relink-changed
mold takes part in the in-process Lua relinks (through LLVMgold.so, cache-dir= plugin option);
for OpenSSL it is left out of the ThinLTO workloads, as its first link (every backend compiled,
once per linker) would add minutes to the run. A linker's cache is shared by the unchanged and
changed relinks of the same mode.

Native real programs and DTLTO against LLVM's own distributor (scripts/bench_native.py, built
once by --prepare into target/bench/, measured when present):
  openssl-native       OpenSSL's `openssl` program, clang-22 -O2 -fPIE, no LTO, archive-heavy
  openssl-native-g     the same with -O2 -g
  large-debug          dtld-reapi's debug build, its link replayed from an ld.lld-22 --reproduce tar
  clang-static         clang-22 itself linked statically from Debian's LLVM/clang archives (the
                       big link: 5 objects, 241 archives, a 230 MB PIE with 84k dynamic symbols),
                       from ../shared/workloads/clang-static (--workloads DIR): --prepare runs its
                       build.sh into $BENCH_ROOT/build/clang-static; every linked clang runs its
                       check.sh. SKIPPED, with the reason, without Debian's LLVM dev packages
                       (libclang-22-dev llvm-22-dev libpolly-22-dev)
  lua-dtlto-e2e        Lua through DTLTO, no cache: dtld + dtld-distribute against ld.lld-22 +
                       LLVM's llvm/utils/dtlto/local.py (and ld.lld-22 + dtld-distribute)

PE/COFF workloads (--pe, instead of the ELF ones; the same generated program compiled for
x86_64-w64-mingw32, linked through clang-22's MinGW driver, against ld.lld-22's MinGW driver;
mold has no PE/COFF support, so it is not measured). Each program is a DLL and an EXE using it:
  pe-native-dll   the first half of the modules as objects plus the second half in an archive
                  (pulled in through the archive symbol table), -shared with MinGW auto-export
                  and --out-implib
  pe-native-exe   main.o against that import library (each linker against its own)
  pe-thinlto-*    the same as ThinLTO bitcode (a bitcode archive), in-process ThinLTO
  pe-dtlto-*      the same through DTLTO with dtld-distribute: dtld only (ld.lld-22's MinGW driver
                  has no DTLTO), its ratio is to ld.lld-22's in-process pe-thinlto-* link
Before and after timing, every EXE runs under wine (WINEPREFIX, default /tmp/wineprefix-bench,
created on first use; DTLD_WINE, default /usr/lib/wine/wine64) next to its own DLL, and all must
print the same output: a benchmark of a broken link is worthless.

Usage: scripts/bench.py [--runs N] [--modules M] [--funcs F] [--only name,...] [--pe] [--prepare]
                       [--mold3 PATH] [--wild PATH] [--workloads DIR]
Results: printed, and written to target/bench/results.md (--pe: target/bench/results-pe.md): a
table per workload and linker, then the wall time, CPU time and peak RSS of every linker side by
side with dtld's ratios; a chart of the ratios next to it (results.svg, results-pe.svg;
scripts/bench_chart.py). The exit status is 1 when dtld or the reference linker failed a link or
a check (a peer's failure is reported only).
"""

import argparse
import collections
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

import bench_chart
import bench_native

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


def compile_all(src, dst, flags, compiler=CLANG):
    os.makedirs(dst, exist_ok=True)
    objs = []
    todo = []
    for name in sorted(os.listdir(src)):
        if not name.endswith(".c"):
            continue
        o = os.path.join(dst, name[:-2] + ".o")
        objs.append(o)
        if not os.path.exists(o):
            todo.append([compiler, "-O2", "-c", *flags, os.path.join(src, name), "-o", o])
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
    r = sh([*driver_cmd, "-###"], cwd=cwd)
    lines = [l for l in r.stderr.splitlines() if l.startswith(" \"")]
    return shlex.split(lines[-1])


# What each linker is ("dtld", "lld", "mold" for Debian's, "peer" for mold 3.0 and wild, "bfd"),
# by its label; filled by main(). Labels not in it (ld.lld-22+dtld-distribute) are taken as lld.
KIND = {}
# The linkers that fork by default (the parent exits when the output is complete) and take
# --no-fork for the one-process run.
FORKING = {"dtld", "mold", "peer"}
# Failures of these kinds fail the run (exit status 1); the others' are reported only.
SUBJECTS = {"dtld", "lld"}


class Result(collections.namedtuple("Result", "wall cpu rss wall1")):
    """Medians of one linker's rounds of one workload: the wall time (s) of the default mode,
    then the CPU time (s, user + system) and the peak RSS (KiB) of the one-process run, and that
    run's wall time (the default run for linkers that do not fork). A linker that failed has a
    string, "fails: ..." or "fails check: ...", in its place."""


class LinkFailed(RuntimeError):
    pass


def one_process(lname, cmd):
    """The one-process form of linker `lname`'s command `cmd`, or None when its default run is
    already one process."""
    return cmd + ["--no-fork"] if KIND.get(lname) in FORKING else None


def first_line(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return lines[0] if lines else ""


def run_isolated(cmd, cwd, env=None):
    """(wall s, CPU s, peak RSS KiB) of one link, the linker and all its children: measured in a
    fresh Python process (after `sync`), so RUSAGE_CHILDREN covers this link only. The wall time
    ends when the linker's process has exited and its stdout and stderr pipes are read to their
    end, which is what a build system waits for. mold, wild and dtld finish in a forked child
    that outlives that moment (dtld's releases its stdio first, mold's does not); the measuring
    process is a subreaper (PR_SET_CHILD_SUBREAPER) and reaps such orphans after the clock stops,
    so their CPU time and peak RSS count. Raises LinkFailed with the first line of the linker's
    stderr when it fails."""
    code = (
        "import subprocess,sys,time,resource,json,os,ctypes\n"
        "ctypes.CDLL(None, use_errno=True).prctl(36,1,0,0,0)\n"
        "t=time.perf_counter()\n"
        f"r=subprocess.run({cmd!r},cwd={cwd!r},stdout=subprocess.PIPE,stderr=subprocess.PIPE)\n"
        "w=time.perf_counter()-t\n"
        "while True:\n"
        "    try: os.wait()\n"
        "    except ChildProcessError: break\n"
        "u=resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "e=(r.stderr or r.stdout).decode(errors='replace')\n"
        "print(json.dumps([r.returncode,w,u.ru_utime+u.ru_stime,u.ru_maxrss,e[:2000],e[-2000:]]))\n"
    )
    # What the previous link wrote (lld's DTLTO: 3,000 files; clang-static: 230 MB) is flushed
    # first, so that its writeback does not fall on the next linker's run.
    os.sync()
    r = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    rc, wall, cpu, rss, head, tail = json.loads(r.stdout)
    if rc != 0:
        line = shlex.join(cmd)
        print(f"bench: link failed ({rc}): {line[:400]}{' ...' if len(line) > 400 else ''}\n{tail}", flush=True)
        raise LinkFailed(first_line(head) or f"exit status {rc}")
    return wall, cpu, rss


def measure(links, runs, solo=one_process):
    """{linker: Result or "fails: ..."} of `runs` rounds, after one warm-up round (page cache, LTO
    staging, the link cache of relinks). `links` is {linker: (cmd, cwd, env)}, where cmd may be a
    function of a run number for workloads whose inputs change from run to run (every run of a
    linker, warm-up and one-process runs included, gets a number of its own). A round runs each
    linker in turn, its one-process run (`solo(linker, cmd)`, None for linkers that do not fork)
    and then its default run, so that the output left on disk is the default mode's; the linkers
    take turns run by run, so a load that comes and goes on a shared machine falls on all of them
    alike. A linker whose link fails is reported as failing and not run again."""
    numbers = dict.fromkeys(links, 0)
    failed = {}
    default, single = {l: [] for l in links}, {l: [] for l in links}

    def run(l, one):
        cmd, cwd, env = links[l]
        argv = cmd(numbers[l]) if callable(cmd) else cmd
        numbers[l] += 1
        if one:
            argv = solo(l, argv)
        try:
            return run_isolated(argv, cwd, env)
        except LinkFailed as e:
            failed[l] = f"fails: {e}"
            return None

    for k in range(runs + 1):  # round 0 is the warm-up
        for l in links:
            if l in failed:
                continue
            if solo(l, []) is not None:
                r = run(l, True)
                if r is None:
                    continue
                if k:
                    single[l].append(r)
            r = run(l, False)
            if r is not None and k:
                default[l].append(r)
    results = {}
    for l in links:
        if l in failed:
            results[l] = failed[l]
            continue
        one = single[l] or default[l]
        results[l] = Result(statistics.median(w for w, _, _ in default[l]), statistics.median(c for _, c, _ in one),
                            statistics.median(m for _, _, m in one), statistics.median(w for w, _, _ in one))
    return results


# How a workload's outputs are run for their check: [(arguments, stdin)] by workload name prefix;
# the generated program takes no arguments. Every output must exit 0, print something and print
# what the reference linker's output prints.
LUA_CHECK = "local t = {} for i = 1, 100 do t[i] = i * i end print(string.format('%d %s %.3f', #t, ('ab'):rep(3), math.sqrt(t[100])))"
PROGRAM_CHECKS = {
    "lua": [(["-e", LUA_CHECK], None)],
    "openssl": [(["version"], None), (["dgst", "-sha256"], b"dtld bench\n")],
    "large-debug": [(["--version"], None), (["--help"], None)],
}
FAILED = []  # (workload, linker, why) of the run: the exit status and the summary


def check_programs(name, results, outs, base_name="ld.lld-22"):
    """Runs every linker's output of workload `name` (`outs`: {linker: path}) as PROGRAM_CHECKS
    says, with the same argv[0] for all (a program may print its name). An output that does not
    run, or prints other than the reference linker's output (than most outputs when the
    reference failed), turns its linker's result into "fails check: ..."."""
    runs = next((v for k, v in PROGRAM_CHECKS.items() if name.startswith(k)), [([], None)])
    printed = {}
    for l, path in outs.items():
        if not isinstance(results.get(l), Result):
            continue
        got = []
        for args, stdin in runs:
            shown = " ".join([os.path.basename(path), *args])[:60]
            try:
                r = subprocess.run(["prog", *args], executable=path, input=stdin, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, timeout=300)
            except (OSError, subprocess.TimeoutExpired) as e:
                results[l] = f"fails check: `{shown}`: {e}"
                break
            if r.returncode != 0 or not r.stdout.strip():
                results[l] = f"fails check: `{shown}` exits {r.returncode}: {first_line(r.stderr.decode(errors='replace'))}"
                break
            got.append(r.stdout)
        else:
            printed[l] = tuple(got)
    if printed:
        ref = printed.get(base_name) or collections.Counter(printed.values()).most_common(1)[0][0]
        def show(p):
            return repr(first_line(b"".join(p).decode(errors="replace"))[:60])
        for l, p in printed.items():
            if p != ref:
                results[l] = f"fails check: prints {show(p)}, not {show(ref)} as {base_name}'s output"
    linked = [l for l in outs if isinstance(results.get(l), Result) or str(results.get(l)).startswith("fails check")]
    print(f"bench: {name}: {sum(isinstance(results[l], Result) for l in linked)} of {len(linked)} linked programs run alike", flush=True)


def ratio(x, base):
    return x / base if x is not None and base else None


def fx(r):
    return f"{r:.2f}x" if r is not None else "-"


def report(rows, name, results, base, base_name="ld.lld-22"):
    """Rows for one workload; `base` is the Result of `base_name`, the reference linker the
    ratios are to, or None. The ratios to the fastest peer are to the lowest wall time and CPU
    time among mold 3.0 and wild."""
    if not isinstance(base, Result):
        base = None
    peers = [r for l, r in results.items() if KIND.get(l) == "peer" and isinstance(r, Result)]
    fast = min((r.wall for r in peers), default=None)
    low = min((r.cpu for r in peers), default=None)
    for lname, r in results.items():
        if not isinstance(r, Result):
            rows.append(bench_chart.Row(name, lname, None, None, None, None, base_name, None, None, None, None, None, r))
            print(f"{name:18} {lname:10} {r}", flush=True)
            if KIND.get(lname, "lld") in SUBJECTS:
                FAILED.append((name, lname, r))
            continue
        row = bench_chart.Row(name, lname, r.wall, r.cpu, r.rss, r.wall1, base_name,
                              ratio(r.wall, base and base.wall), ratio(r.cpu, base and base.cpu), ratio(r.rss, base and base.rss),
                              ratio(r.wall, fast), ratio(r.cpu, low), None)
        rows.append(row)
        print(f"{name:18} {lname:10} {r.wall * 1000:9.1f} ms  cpu {r.cpu * 1000:9.1f} ms  {r.rss / 1024:8.1f} MiB  "
              f"/ref: time {fx(row.t):>6} cpu {fx(row.c):>6} rss {fx(row.m):>6}  /peer: time {fx(row.tf):>6} cpu {fx(row.cf):>6}", flush=True)


def fmt_time(s):
    return f"{s:.2f} s" if s >= 1 else f"{s * 1000:.1f} ms"


def fmt_rss(kib):
    return f"{kib / 1024:,.0f} MiB" if kib >= 100 * 1024 else f"{kib / 1024:.1f} MiB"


def side_by_side(rows):
    """The Markdown tables of wall time, CPU time and peak RSS, a row per workload and a column
    per linker (the lowest in bold), with dtld's ratios to the reference and to the fastest peer."""
    workloads, linkers = [], []
    for r in rows:
        if r.workload not in workloads:
            workloads.append(r.workload)
        if r.linker not in linkers:
            linkers.append(r.linker)
    by = {(r.workload, r.linker): r for r in rows}
    peers = [l for l in linkers if KIND.get(l) == "peer"]
    out = []
    for title, field, rfield, fmt in (("Wall time (default mode, as a build system sees it)", "wall", "t", fmt_time),
                                      ("CPU time (user + system, one process)", "cpu", "c", fmt_time),
                                      ("Peak RSS (one process)", "rss", "m", fmt_rss)):
        out.append(f"### {title}\n\n| workload | {' | '.join(linkers)} | dtld / ref | dtld / {'fastest' if field == 'wall' else 'lowest'} peer |\n"
                   f"|---|{'---|' * len(linkers)}---|---|\n")
        for w in workloads:
            vals = {l: getattr(by[(w, l)], field) for l in linkers if (w, l) in by and by[(w, l)].fails is None}
            best = min(vals.values(), default=None)
            cells = []
            for l in linkers:
                if (w, l) not in by:
                    cells.append("")
                elif l not in vals:
                    cells.append("fails")
                else:
                    cells.append(f"**{fmt(vals[l])}**" if vals[l] == best and len(vals) > 1 else fmt(vals[l]))
            d = by.get((w, "dtld"))
            peer = min((vals[l] for l in peers if l in vals), default=None)
            to_ref = fx(getattr(d, rfield)) if d and d.fails is None else "-"
            to_peer = fx(ratio(vals.get("dtld"), peer))
            out.append(f"| {w} | {' | '.join(cells)} | {to_ref} | {to_peer} |\n")
        out.append("\n")
    return "".join(out)


def cell(text):
    return text.replace("|", "\\|")


def write_results(path, a, rows, notes=""):
    """The Markdown tables at `path`, and the chart (scripts/bench_chart.py) next to it as .svg."""
    svg = os.path.splitext(path)[0] + ".svg"
    # The load of other jobs skews absolute times (a shared machine); record it with the run.
    machine = f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end, {time.strftime('%Y-%m-%d')}"
    drawn = bench_chart.write_svg(
        svg, rows, "dtld: wall time, CPU time and peak memory relative to the reference linker",
        f"scripts/bench.py: medians of {a.runs} rounds (wall: default mode; CPU, peak RSS: one process); synthetic program "
        f"{a.modules} modules x {a.funcs} functions; {machine}")
    with open(path, "w") as fh:
        fh.write(f"# dtld benchmark ({a.runs} rounds, medians; ratios to ld.lld-22, or to GNU ld for gcc-lto workloads, "
                 "and to the fastest peer, mold 3.0 or wild)\n\n")
        fh.write(f"Synthetic program: {a.modules} modules x {a.funcs} functions. Machine: {machine}.\n")
        fh.write(f"Linkers: {'; '.join(LINKERS_SEEN)}.\n\n")
        fh.write("Wall time: the default mode, as a build system sees it (the linker's stdout and stderr read to "
                 "their end); CPU time (user + system, the linker and its children) and peak RSS (the largest "
                 "process): the one-process run (`--no-fork` for mold, wild and dtld).\n\n" + notes)
        if drawn:
            fh.write(f"![time and memory ratios to the reference linker]({os.path.basename(svg)})\n\n")
        fh.write("| workload | linker | wall (ms) | CPU (ms) | peak RSS (MiB) | 1-process wall (ms) | wall / ref | CPU / ref "
                 "| RSS / ref | wall / fastest peer | CPU / lowest peer |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            if r.fails is not None:
                fh.write(f"| {r.workload} | {r.linker} | {cell(r.fails)} | | | | | | | | |\n")
                continue
            fh.write(f"| {r.workload} | {r.linker} | {r.wall * 1000:.1f} | {r.cpu * 1000:.1f} | {r.rss / 1024:.1f} | "
                     f"{r.wall1 * 1000:.1f} | {fx(r.t)} | {fx(r.c)} | {fx(r.m)} | {fx(r.tf)} | {fx(r.cf)} |\n")
        fh.write("\n" + side_by_side(rows))
    print(side_by_side(rows), end="")
    print(f"bench: results in {os.path.relpath(path, ROOT)}" + (f", chart in {os.path.relpath(svg, ROOT)}" if drawn else ""))


MINGW = "--target=x86_64-w64-mingw32"


class Wine:
    """wine64 in a prefix of its own (created on first use); stop() ends that prefix's
    wineserver only."""

    def __init__(self):
        self.wine = os.environ.get("DTLD_WINE", "/usr/lib/wine/wine64")
        if not os.access(self.wine, os.X_OK):
            sys.exit(f"bench: wine's loader {self.wine} is missing (scripts/setup.sh installs wine64)")
        self.env = {**os.environ, "WINEPREFIX": os.environ.get("WINEPREFIX", "/tmp/wineprefix-bench"),
                    "WINEDEBUG": "-all", "WINEDLLOVERRIDES": "mscoree,mshtml="}
        self.env.pop("DISPLAY", None)
        if not os.path.exists(os.path.join(self.env["WINEPREFIX"], "system.reg")):
            print(f"bench: creating the wine prefix {self.env['WINEPREFIX']}", flush=True)
            subprocess.run([self.wine, "wineboot", "-i"], env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)

    def run(self, exe, cwd):
        r = subprocess.run([self.wine, exe], cwd=cwd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        return r.returncode, r.stdout

    def stop(self):
        server = os.path.join(os.path.dirname(self.wine), "wineserver")
        subprocess.run([server, "-k"], env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def pe_main(a, dtld, dist):
    """The PE/COFF section (--pe): see the module docstring."""
    src = os.path.join(OUT, f"src-{a.modules}x{a.funcs}")
    generate(src, a.modules, a.funcs)
    ar = shutil.which("llvm-ar-22") or sys.exit("bench: llvm-ar-22 missing")
    variants = []  # (kind, lto flags, linkers, workload whose ld.lld-22 result is the base)
    only = set(x for x in a.only.split(",") if x)
    lld = ("ld.lld-22", "lld")
    KIND.update({"dtld": "dtld", "ld.lld-22": "lld"})
    LINKERS_SEEN.extend([f"dtld ({os.path.abspath(dtld)})", f"ld.lld-22 ({shutil.which('ld.lld-22')})"])
    for kind, cflags, lflags, linkers, base in (
        ("native", [], [], [("dtld", dtld), lld], "native"),
        ("thinlto", ["-flto=thin"], ["-flto=thin"], [("dtld", dtld), lld], "thinlto"),
        ("dtlto", ["-flto=thin"], ["-flto=thin", f"-fthinlto-distributor={dist}"], [("dtld", dtld)], "thinlto"),
    ):
        if only and not any(f"pe-{k}-{step}" in only for k in (kind, "dtlto" if kind == "thinlto" else "") for step in ("dll", "exe")):
            continue
        objdir = os.path.join(OUT, f"obj-{a.modules}x{a.funcs}-mingw{'-thin' if cflags else ''}")
        objs = compile_all(src, objdir, [MINGW, *cflags])
        main_o = os.path.join(objdir, "main.o")
        mods = sorted((o for o in objs if o != main_o), key=lambda o: int(os.path.basename(o)[1:-2]))
        half = len(mods) // 2
        lib = os.path.join(objdir, "libhi.a")
        if not os.path.exists(lib):
            sh([ar, "rcs", lib, *mods[half:]])
        dll = [MINGW, *lflags, "-shared", *mods[:half], lib, "-o", "mods.dll", "-Wl,--out-implib,libmods.dll.a"]
        exe = [MINGW, *lflags, main_o, "libmods.dll.a", "-o", "prog.exe"]
        variants.append((kind, linkers, base, dll, exe))

    # Link every variant once with every linker, and run the EXEs under wine: all must agree.
    work = os.path.join(OUT, "work-pe")
    cmds = {}  # (workload, linker) -> (cmd, cwd)
    wine = Wine()
    try:
        def verify(when):
            outs = {}
            for kind, linkers, _, _, _ in variants:
                for lname, _ in linkers:
                    d = os.path.join(work, f"{kind}-{lname}")
                    rc, out = wine.run("prog.exe", d)
                    if rc != 0 or not out.strip():
                        raise RuntimeError(f"bench: {d}/prog.exe under wine ({when}): exit {rc}, output {out!r}")
                    outs[f"{kind}/{lname}"] = out.strip()
            if len(set(outs.values())) != 1:
                raise RuntimeError(f"bench: the EXEs disagree under wine ({when}): {outs}")
            print(f"bench: wine {when}: {len(outs)} EXEs print {next(iter(outs.values()))!r} ({', '.join(outs)})", flush=True)

        for kind, linkers, _, dll, exe in variants:
            for lname, l in linkers:
                d = os.path.join(work, f"{kind}-{lname}")
                shutil.rmtree(d, ignore_errors=True)
                os.makedirs(d)
                for step, args in (("dll", dll), ("exe", exe)):
                    cmd = link_command([CLANG, f"-fuse-ld={l}", *args], d)
                    env = None
                    if lname == "dtld" and "-plugin" in cmd and not os.environ.get("DTLD_LLVM_DIR"):
                        # dtld's MinGW driver ignores the `-plugin <llvm>/lib/LLVMgold.so` clang
                        # passes and finds LLVM through its parent clang, which this direct run
                        # lacks: name the plugin's LLVM instead (what the clang-driven link uses).
                        plugin = os.path.realpath(cmd[cmd.index("-plugin") + 1])
                        env = {**os.environ, "DTLD_LLVM_DIR": os.path.dirname(os.path.dirname(plugin))}
                    cmds[(f"pe-{kind}-{step}", lname)] = (cmd, d, env)
                    run_isolated(cmd, d, env)
        verify("before timing")

        print("bench: mold has no PE/COFF support: PE workloads compare dtld with ld.lld-22 only", flush=True)
        # pe-dtlto-X needs pe-thinlto-X's ld.lld-22 time as its base: time both.
        timed = only | {x.replace("dtlto", "thinlto") for x in only if x.startswith("pe-dtlto-")}
        rows, results = [], {}
        for kind, linkers, base, _, _ in variants:
            for step in ("dll", "exe"):  # the EXE's import library is the DLL link's output
                name = f"pe-{kind}-{step}"
                if only and name not in timed:
                    continue
                # One run each (default mode) gives the CPU time and peak RSS too: dtld's MinGW
                # driver is not asked to change its mode.
                results[name] = measure({lname: cmds[(name, lname)] for lname, _ in linkers}, a.runs, lambda l, cmd: None)
                report(rows, name, results[name], results.get(f"pe-{base}-{step}", {}).get("ld.lld-22"),
                       "ld.lld-22" if base == kind else f"ld.lld-22's pe-{base}-{step}")
        verify("after timing")
    finally:
        wine.stop()
    notes = ("PE/COFF (x86_64-w64-mingw32, clang-22's MinGW driver). mold has no PE/COFF support. "
             "pe-dtlto-* is dtld only (ld.lld-22's MinGW driver has no DTLTO); its ratios are to ld.lld-22's in-process "
             "pe-thinlto-* link. All EXEs ran under wine with the same output before and after timing.\n\n")
    write_results(os.path.join(OUT, "results-pe.md"), a, rows, notes)
    if FAILED:
        sys.exit("bench: failed: " + "; ".join(f"{w} {l}: {why}" for w, l, why in FAILED))


BENCH_ROOT = bench_native.BENCH_ROOT  # $BENCH_ROOT, default ~/.cache/dtld-bench
LINKERS_SEEN = []  # "label: path" of every linker of the run, for the report


def version_label(name, exe):
    """"mold 3.0" from `exe --version` ("mold 3.0.0 (compatible with GNU ld)", "Wild 0.10.0 ..."),
    or None when it does not run."""
    try:
        r = subprocess.run([exe, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    except OSError:
        return None
    m = re.search(r"(\d+)\.(\d+)", r.stdout)
    return f"{name} {m.group(1)}.{m.group(2)}" if r.returncode == 0 and m else None


def add_linker(linkers, label, selector, kind, path=None):
    KIND[label] = kind
    linkers.append((label, selector))
    LINKERS_SEEN.append(f"{label} ({path or shutil.which(selector) or selector})")


def peers(a):
    """[(label, path)] of mold 3.0 and wild: --mold3/--wild, else $MOLD3/$WILD, else where
    ../shared/peers/fetch.sh installs them under $BENCH_ROOT/peers; an empty path leaves one out."""
    found = []
    for name, given, default in (("mold", a.mold3, os.path.join(BENCH_ROOT, "peers", "mold3", "mold")),
                                 ("wild", a.wild, os.path.join(BENCH_ROOT, "peers", "wild", "bin", "wild"))):
        path = given if given is not None else default
        if not path:
            continue
        label = version_label(name, path) if os.access(path, os.X_OK) else None
        if label is None:
            print(f"bench: peer {name} not found or not running at {path} (../shared/peers/fetch.sh installs mold 3.0 and "
                  f"wild 0.10 into $BENCH_ROOT/peers; or give --mold3/--wild PATH): left out", flush=True)
            continue
        found.append((label, os.path.abspath(path)))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="rounds of links measured after the warm-up round (default 5)")
    ap.add_argument("--modules", type=int, default=300)
    ap.add_argument("--funcs", type=int, default=40)
    ap.add_argument("--only", default="", help="comma-separated workload names (e.g. clang-static,large-debug,openssl-native,lua-native-pie)")
    ap.add_argument("--pe", action="store_true", help="the PE/COFF (MinGW) workloads instead of the ELF ones")
    ap.add_argument("--prepare", action="store_true",
                    help="build what the native real-program, clang-static and DTLTO end-to-end workloads need (scripts/bench_native.py), then run")
    ap.add_argument("--openssl", default=os.path.join(ROOT, "target", "openssl", "src"),
                    help="a ThinLTO build of OpenSSL for the openssl-* workloads (see --help)")
    ap.add_argument("--mold3", default=os.environ.get("MOLD3"),
                    help="mold 3.0 (default $MOLD3, else $BENCH_ROOT/peers/mold3/mold; '' leaves it out)")
    ap.add_argument("--wild", default=os.environ.get("WILD"),
                    help="wild 0.10 (default $WILD, else $BENCH_ROOT/peers/wild/bin/wild; '' leaves it out)")
    ap.add_argument("--workloads", default=os.environ.get("DTLD_WORKLOADS", os.path.normpath(os.path.join(ROOT, "..", "shared", "workloads"))),
                    help="the shared workloads (clang-static/build.sh and check.sh; default $DTLD_WORKLOADS, else ../shared/workloads)")
    a = ap.parse_args()
    dtld = os.environ.get("DTLD", os.path.join(ROOT, "target", "release", "dtld"))
    dist = os.environ.get("DTLD_DISTRIBUTOR", os.path.join(ROOT, "target", "release", "dtld-distribute"))
    for tool in (dtld, dist):
        if not os.access(tool, os.X_OK):
            sys.exit(f"bench: {tool} not found; run cargo build --release --workspace --bins")
    if a.runs < 1 and not a.prepare:
        sys.exit("bench: --runs must be at least 1 (--runs 0 only with --prepare)")
    if a.pe:
        return pe_main(a, dtld, dist)
    linkers = []
    add_linker(linkers, "dtld", dtld, "dtld", os.path.abspath(dtld))
    if os.environ.get("DTLD_BEFORE"):
        # Another dtld (e.g. main's, before a change) in the same run, for before/after numbers.
        add_linker(linkers, "dtld-before", os.environ["DTLD_BEFORE"], "dtld", os.path.abspath(os.environ["DTLD_BEFORE"]))
    add_linker(linkers, "ld.lld-22", "lld", "lld", shutil.which("ld.lld-22"))
    if shutil.which("mold"):
        add_linker(linkers, version_label("mold", "mold") or "mold", "mold", "mold")
    for label, path in peers(a):
        add_linker(linkers, label, path, "peer", path)
    src = os.path.join(OUT, f"src-{a.modules}x{a.funcs}")
    generate(src, a.modules, a.funcs)
    native = compile_all(src, os.path.join(OUT, f"obj-{a.modules}x{a.funcs}-pic"), ["-fPIE"])
    thin = compile_all(src, os.path.join(OUT, f"obj-{a.modules}x{a.funcs}-thin"), ["-fPIE", "-flto=thin"])
    work = os.path.join(OUT, "work")
    os.makedirs(work, exist_ok=True)

    # (name, objects, flags, with Debian's mold, with the peers)
    workloads = [
        ("native-pie", native, ["-pie"], True, True),
        ("native-static", native, ["-static-pie"], True, True),
        ("thinlto", thin, ["-pie", "-flto=thin"], True, False),
        ("dtlto", thin, ["-pie", "-flto=thin", f"-fthinlto-distributor={dist}"], False, False),
    ]
    lua = os.path.join(ROOT, "target", "real-programs", "lua")
    for kind, flags in (("obj-pic", ["-pie"]), ("obj-pic-lto-thin", ["-pie", "-flto=thin"])):
        d = os.path.join(lua, kind)
        if os.path.isdir(d):
            objs = [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".o") and f != "luac.o"]
            workloads.append((f"lua-{'thinlto' if 'lto' in kind else 'native-pie'}", objs, flags + ["-lm"], True, "lto" not in kind))
    only = set(x for x in a.only.split(",") if x)
    if a.prepare:
        # Before any workload is looked for, so that what is built now is measured in this run
        # (the ThinLTO tree of the openssl-* relink workloads too); `--runs 0` only prepares.
        bench_native.prepare(only, dtld, lambda m: print(m, flush=True), a.workloads)
        if a.runs == 0:
            print("bench: prepared; --runs 0 measures nothing", flush=True)
            return

    rows = []
    for name, objs, flags, with_mold, with_peers in workloads:
        if only and name not in only:
            continue
        links, outs = {}, {}
        for lname, l in linkers:
            if (KIND[lname] == "mold" and not with_mold) or (KIND[lname] == "peer" and not with_peers):
                continue
            outs[lname] = os.path.join(work, f"{name}.{bench_native.slug(lname)}")
            cmd = link_command([CLANG, f"-fuse-ld={l}", *flags, *objs, "-o", outs[lname]], work)
            links[lname] = (cmd, work, None)
        results = measure(links, a.runs)
        check_programs(name, results, outs)
        report(rows, name, results, results.get("ld.lld-22"))

    rows.extend(relink_workloads(a, linkers, dist, only))
    notes = ""
    native_rows, skipped = real_native_workloads(a, linkers, dist, only)
    rows.extend(native_rows)
    for name, why in skipped:
        notes += f"**{name}: SKIPPED**, {why}.\n\n"

    if shutil.which("gcc") and (not only or only & {"gcc-lto", "lua-gcc-lto"}):
        rows.extend(gcc_lto(a, dtld, src, only, linkers))
        notes += ("gcc-lto workloads: the whole `gcc -flto=auto` link is timed (GCC's LTO runs inside it: plugin, "
                  "lto-wrapper, lto1), peak RSS is the largest process (lto1), ratios are to GNU ld.\n\n")
    write_results(os.path.join(OUT, "results.md"), a, rows, notes)
    for name, why in skipped:
        print(f"bench: {name} SKIPPED: {why}", flush=True)
    if FAILED:
        sys.exit("bench: failed: " + "; ".join(f"{w} {l}: {why}" for w, l, why in FAILED))


def check_clang_static(results, outs, check_sh):
    """Runs check.sh of the clang-static workload on every linker's clang at once (each prints
    its version, compiles and runs C and C++ programs and must produce the system clang-22's
    objects); a clang without "NAME: OK" turns its linker's result into "fails check: ..."."""
    todo = {l: p for l, p in outs.items() if isinstance(results.get(l), Result)}
    if not todo:
        return
    print(f"bench: clang-static: {check_sh} on {len(todo)} linked clangs", flush=True)
    r = subprocess.run(["bash", check_sh, *todo.values()], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=3600)
    verdicts = dict(line.split(": ", 1) for line in r.stdout.splitlines() if ": " in line)
    for l, p in todo.items():
        v = verdicts.get(os.path.basename(p))
        if v != "OK":
            results[l] = f"fails check: check.sh: {v or 'no verdict: ' + first_line(r.stdout[-500:])}"
    print(r.stdout.rstrip(), flush=True)


def real_native_workloads(a, linkers, dist, only):
    """openssl-native, openssl-native-g, large-debug, clang-static and lua-dtlto-e2e
    (scripts/bench_native.py): built by --prepare, measured when present. Returns the rows and
    [(workload, why)] of those skipped."""
    rows = []
    work, skipped = bench_native.native_workloads(linkers, only, link_command, CLANG, a.workloads)
    work += bench_native.dtlto_e2e_workloads(linkers, dist, only, link_command, CLANG)
    for name, links, outs in work:
        results = measure(links, a.runs)
        if name == "clang-static":
            check_clang_static(results, outs, bench_native.clang_static_check(a.workloads))
        else:
            check_programs(name, results, outs)
        report(rows, name, results, results.get("ld.lld-22"))
    return rows, skipped


def thin_programs(a):
    """(name, cwd, inputs) of the ThinLTO programs present: Lua and OpenSSL's `openssl`."""
    progs = []
    lua = os.path.join(ROOT, "target", "real-programs", "lua", "obj-pic-lto-thin")
    if os.path.isdir(lua):
        objs = [os.path.join(lua, f) for f in sorted(os.listdir(lua)) if f.endswith(".o") and f != "luac.o"]
        progs.append(("lua", lua, objs + ["-lm"]))
    ossl = os.path.abspath(a.openssl)
    if os.path.isfile(os.path.join(ossl, "libcrypto.a")) and os.path.isdir(os.path.join(ossl, "apps")):
        apps = os.path.join(ossl, "apps")
        objs = sorted(os.path.join("apps", f) for f in os.listdir(apps) if f.startswith("openssl-bin-") and f.endswith(".o"))
        objs.append("apps/lib/openssl-bin-cmp_mock_srv.o")
        progs.append(("openssl", ossl, objs + ["-L.", "apps/libapps.a", "-lssl", "-lcrypto", "-ldl", "-pthread"]))
    return progs


def variant_object(work, k):
    """bench_variant_<k>.o: a small ThinLTO module that differs in every run (one changed
    source file, as in an edit-compile-relink loop)."""
    d = os.path.join(work, "variants")
    os.makedirs(d, exist_ok=True)
    o = os.path.join(d, f"bench_variant_{k}.o")
    if not os.path.exists(o):
        c = os.path.join(d, f"bench_variant_{k}.c")
        with open(c, "w") as fh:
            fh.write(f"int bench_variant_{k}(int x) {{ return x * {k + 3} + {k}; }}\n"
                     f"int bench_variant_table_{k}[{k % 7 + 1}] = {{ {k} }};\n")
        sh([CLANG, "-O2", "-fPIE", "-flto=thin", "-c", c, "-o", o])
    return o


def relink_workloads(a, linkers, dist, only):
    """The ThinLTO relink and thin-link workloads (see the module docstring)."""
    rows = []
    work = os.path.join(OUT, "work-relink")
    for prog, cwd, inputs in thin_programs(a):
        for kind in ("thin-link", "relink-unchanged", "relink-changed", "dtlto-unchanged", "dtlto-changed"):
            name = f"{prog}-{kind}"
            if only and name not in only:
                continue
            vdir = os.path.join(work, "variants")
            first_variant = 1 + max([int(f[len("bench_variant_"):-2]) for f in os.listdir(vdir)
                                     if f.startswith("bench_variant_") and f.endswith(".o")] if os.path.isdir(vdir) else [0], default=0)
            links, outs = {}, {}
            for lname, l in linkers:
                lto_dtlto = kind.startswith("dtlto")
                if KIND[lname] == "peer":
                    continue  # the peers take part in the native links only
                if KIND[lname] == "mold" and (kind == "thin-link" or lto_dtlto or prog == "openssl"):
                    continue  # mold has no index-only mode and no DTLTO; OpenSSL: see below
                d = os.path.join(work, name, bench_native.slug(lname))
                shutil.rmtree(d, ignore_errors=True)
                os.makedirs(d)
                # The unchanged and changed relinks of a mode share a linker's cache: the first
                # link of the program (all backends compiled) is paid once per linker and mode.
                # dtld-before shares dtld's in-process cache (the same LLVM cache entries).
                cache_owner = "dtld" if lname == "dtld-before" and not lto_dtlto else bench_native.slug(lname)
                cache = os.path.join(work, f"{prog}-{'dtlto' if lto_dtlto else 'in-process'}-cache", cache_owner)
                os.makedirs(cache, exist_ok=True)
                out = outs[lname] = os.path.join(d, prog)
                flags = ["-flto=thin", "-pie"]
                if kind == "thin-link":
                    flags += [f"-Wl,--thinlto-index-only={d}/linked.txt", f"-Wl,--thinlto-prefix-replace={cwd}/;{d}/idx/"]
                    ins = [i if i.startswith("-") or os.path.isabs(i) else os.path.join(cwd, i) for i in inputs]
                elif KIND[lname] == "mold":
                    flags.append(f"-Wl,-plugin-opt=cache-dir={cache}")
                    ins = inputs
                else:
                    flags.append(f"-Wl,--thinlto-cache-dir={cache}")
                    ins = inputs
                if lto_dtlto:
                    flags.append(f"-fthinlto-distributor={dist}")
                base = link_command([CLANG, f"-fuse-ld={l}", *flags, *ins, "-o", out], cwd)
                if kind.endswith("-changed"):
                    # The extra module goes right before the program's first object. Variants
                    # never linked before (numbered after those on disk): a variant an earlier
                    # bench run linked would let dtld reuse that link's result (its link cache).
                    cut = base.index(ins[0])
                    links[lname] = ((lambda k, base=base, cut=cut: base[:cut] + [variant_object(work, first_variant + k)] + base[cut:]), cwd, None)
                else:
                    links[lname] = (base, cwd, None)
            results = measure(links, a.runs)
            if kind == "thin-link":
                # No program: the index-only link must have written its list of objects to link.
                for lname, out in outs.items():
                    if isinstance(results[lname], Result) and not os.path.isfile(os.path.join(os.path.dirname(out), "linked.txt")):
                        results[lname] = "fails check: no --thinlto-index-only list written"
                print(f"bench: {name}: checked that every index-only link wrote its list of objects", flush=True)
            else:
                check_programs(name, results, outs)
            report(rows, name, results, results.get("ld.lld-22"))
    return rows


def gcc_lto(a, dtld, src, only, elf_linkers):
    """The GCC LTO workloads: see the module docstring."""
    tools = os.path.join(OUT, "gcc-tools")
    os.makedirs(tools, exist_ok=True)
    with open(os.path.join(tools, "ld"), "w") as fh:
        fh.write(f"#!/bin/sh\nexec {dtld} \"$@\"\n")
    os.chmod(os.path.join(tools, "ld"), 0o755)
    linkers = [("dtld", f"-B{tools}/"), ("ld.bfd", "-fuse-ld=bfd")]
    KIND["ld.bfd"] = "bfd"
    LINKERS_SEEN.append(f"ld.bfd ({shutil.which('ld.bfd')}, gcc-lto only)")
    # Debian's mold, under the label of the ELF workloads ("mold 1.10"): gcc finds it as ld.mold.
    linkers += [(lname, "-fuse-ld=mold") for lname, _ in elf_linkers if KIND[lname] == "mold"]
    workloads = [("gcc-lto", compile_all(src, os.path.join(OUT, f"obj-{a.modules}x{a.funcs}-gcc-lto"), ["-fPIE", "-flto"], "gcc"), [])]
    lua = os.path.join(ROOT, "target", "real-programs", "lua-gcc-lto", "obj-pic")
    if os.path.isdir(lua):
        objs = [os.path.join(lua, f) for f in sorted(os.listdir(lua)) if f.endswith(".o") and f != "luac.o" and "debug.temp" not in f]
        workloads.append(("lua-gcc-lto", objs, ["-lm", "-ldl"]))
    work = os.path.join(OUT, "work-gcc")
    os.makedirs(work, exist_ok=True)
    rows = []
    for name, objs, libs in workloads:
        if only and name not in only:
            continue
        links, outs = {}, {}
        for lname, sel in linkers:
            outs[lname] = os.path.join(work, f"{name}.{bench_native.slug(lname)}")
            links[lname] = (["gcc", "-flto=auto", sel, "-pie", *objs, *libs, "-o", outs[lname]], work, None)
        # The one-process run: --no-fork through gcc's collect2.
        results = measure(links, a.runs, lambda l, cmd: cmd + ["-Wl,--no-fork"] if KIND.get(l) in FORKING else None)
        # Every program must work, and alike.
        check_programs(name, results, outs, "ld.bfd")
        report(rows, name, results, results.get("ld.bfd"), "ld.bfd")
    return rows


if __name__ == "__main__":
    main()
