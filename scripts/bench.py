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
Results: printed, and written to target/bench/results.md (--pe: target/bench/results-pe.md), with
a chart of the ratios next to it (results.svg, results-pe.svg; scripts/bench_chart.py).
"""

import argparse
import os
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
    import shlex
    r = sh([*driver_cmd, "-###"], cwd=cwd)
    lines = [l for l in r.stderr.splitlines() if l.startswith(" \"")]
    return shlex.split(lines[-1])


def run_isolated(cmd, cwd, env=None):
    """Wall time and peak RSS (KiB) of one link, the linker and all its children: measured in a
    fresh Python process (after `sync`), so RUSAGE_CHILDREN covers this link only. The wall time ends when the
    linker's process has exited and its stderr pipe closed, which is what a build system waits
    for. mold and dtld finish in a forked child that outlives that moment (dtld's releases its
    stdio first, mold's does not); the measuring process is a subreaper (PR_SET_CHILD_SUBREAPER)
    and reaps such orphans after the clock stops, so their peak RSS counts."""
    code = (
        "import subprocess,sys,time,resource,json,os,ctypes\n"
        "ctypes.CDLL(None, use_errno=True).prctl(36,1,0,0,0)\n"
        "t=time.perf_counter()\n"
        f"r=subprocess.run({cmd!r},cwd={cwd!r},stdout=subprocess.DEVNULL,stderr=subprocess.PIPE)\n"
        "w=time.perf_counter()-t\n"
        "while True:\n"
        "    try: os.wait()\n"
        "    except ChildProcessError: break\n"
        "print(json.dumps([r.returncode,w,resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,r.stderr.decode(errors='replace')[-2000:]]))\n"
    )
    # What the previous link wrote (lld's DTLTO: 3,000 files) is flushed first, so that its
    # writeback does not fall on the next linker's run.
    os.sync()
    r = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    import json
    rc, wall, rss, err = json.loads(r.stdout)
    if rc != 0:
        raise RuntimeError(f"link failed ({rc}): {' '.join(cmd)}\n{err}")
    return wall, rss


def measure(links, runs):
    """{linker: (median wall time, largest peak RSS)} of `runs` links by each linker, after one
    warm-up link each (page cache, LTO staging). `links` is {linker: (cmd, cwd, env)}, where cmd
    may be a function of the run number (0 is the warm-up) for workloads whose inputs change
    from run to run; the linkers take turns run by run, so a load that comes and goes on a
    shared machine falls on all of them alike."""
    def argv(cmd, k):
        return cmd(k) if callable(cmd) else cmd
    for cmd, cwd, env in links.values():
        run_isolated(argv(cmd, 0), cwd, env)
    walls, rsss = {l: [] for l in links}, {l: [] for l in links}
    for k in range(runs):
        for l, (cmd, cwd, env) in links.items():
            w, r = run_isolated(argv(cmd, k + 1), cwd, env)
            walls[l].append(w)
            rsss[l].append(r)
    return {l: (statistics.median(walls[l]), max(rsss[l])) for l in links}


def report(rows, name, results, base, base_name="ld.lld-22"):
    """Rows for one workload; `base` is the (wall, rss) of `base_name`, the reference linker the
    ratios are to, or None."""
    for lname, (w, r) in results.items():
        ratio = f"{w / base[0]:.2f}x" if base else "-"
        mratio = f"{r / base[1]:.2f}x" if base else "-"
        rows.append((name, lname, w, r, ratio, mratio, base_name))
        print(f"{name:16} {lname:10} {w * 1000:9.1f} ms  {r / 1024:8.1f} MiB  time {ratio:>6}  rss {mratio:>6}", flush=True)


def write_results(path, a, rows, notes=""):
    """The Markdown table at `path`, and its chart (scripts/bench_chart.py) next to it as .svg."""
    svg = os.path.splitext(path)[0] + ".svg"
    # The load of other jobs skews absolute times (a shared machine); record it with the run.
    machine = f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end, {time.strftime('%Y-%m-%d')}"
    drawn = bench_chart.write_svg(
        svg, rows, "dtld: link time and peak memory relative to the reference linker",
        f"scripts/bench.py: {a.runs} runs each (median time, peak RSS incl. children); synthetic program "
        f"{a.modules} modules x {a.funcs} functions; {machine}")
    with open(path, "w") as fh:
        fh.write(f"# dtld benchmark ({a.runs} runs each, median wall time, peak RSS incl. children; ratios to ld.lld-22, or to GNU ld for gcc-lto workloads)\n\n")
        fh.write(f"Synthetic program: {a.modules} modules x {a.funcs} functions. Machine: {machine}.\n\n{notes}")
        if drawn:
            fh.write(f"![time and memory ratios to the reference linker]({os.path.basename(svg)})\n\n")
        fh.write("| workload | linker | time (ms) | peak RSS (MiB) | time / ref | RSS / ref |\n|---|---|---|---|---|---|\n")
        for name, lname, w, r, ratio, mratio, _ in rows:
            fh.write(f"| {name} | {lname} | {w * 1000:.1f} | {r / 1024:.1f} | {ratio} | {mratio} |\n")
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
                results[name] = measure({lname: cmds[(name, lname)] for lname, _ in linkers}, a.runs)
                report(rows, name, results[name], results.get(f"pe-{base}-{step}", {}).get("ld.lld-22"),
                       "ld.lld-22" if base == kind else f"ld.lld-22's pe-{base}-{step}")
        verify("after timing")
    finally:
        wine.stop()
    notes = ("PE/COFF (x86_64-w64-mingw32, clang-22's MinGW driver). mold has no PE/COFF support. "
             "pe-dtlto-* is dtld only (ld.lld-22's MinGW driver has no DTLTO); its ratios are to ld.lld-22's in-process "
             "pe-thinlto-* link. All EXEs ran under wine with the same output before and after timing.\n\n")
    write_results(os.path.join(OUT, "results-pe.md"), a, rows, notes)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--modules", type=int, default=300)
    ap.add_argument("--funcs", type=int, default=40)
    ap.add_argument("--only", default="")
    ap.add_argument("--pe", action="store_true", help="the PE/COFF (MinGW) workloads instead of the ELF ones")
    ap.add_argument("--prepare", action="store_true",
                    help="build what the native real-program and DTLTO end-to-end workloads need (scripts/bench_native.py), then run")
    ap.add_argument("--openssl", default=os.path.join(ROOT, "target", "openssl", "src"),
                    help="a ThinLTO build of OpenSSL for the openssl-* workloads (see --help)")
    a = ap.parse_args()
    dtld = os.environ.get("DTLD", os.path.join(ROOT, "target", "release", "dtld"))
    dist = os.environ.get("DTLD_DISTRIBUTOR", os.path.join(ROOT, "target", "release", "dtld-distribute"))
    for tool in (dtld, dist):
        if not os.access(tool, os.X_OK):
            sys.exit(f"bench: {tool} not found; run cargo build --release --workspace --bins")
    if a.pe:
        return pe_main(a, dtld, dist)
    linkers = [("dtld", dtld), ("ld.lld-22", "lld")]
    if os.environ.get("DTLD_BEFORE"):
        # Another dtld (e.g. main's, before a change) in the same run, for before/after numbers.
        linkers.insert(1, ("dtld-before", os.environ["DTLD_BEFORE"]))
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
    if a.prepare:
        # Before any workload is looked for, so that what is built now is measured in this run
        # (the ThinLTO tree of the openssl-* relink workloads too); `--runs 0` only prepares.
        bench_native.prepare(only, os.environ.get("DTLD", os.path.join(ROOT, "target", "release", "dtld")), lambda m: print(m, flush=True))
        if a.runs == 0:
            print("bench: prepared; --runs 0 measures nothing", flush=True)
            return

    rows = []
    for name, objs, flags, with_mold in workloads:
        if only and name not in only:
            continue
        links = {}
        for lname, l in linkers:
            if lname == "mold" and not with_mold:
                continue
            cmd = link_command([CLANG, f"-fuse-ld={l}", *flags, *objs, "-o", os.path.join(work, f"{name}.{lname}")], work)
            links[lname] = (cmd, work, None)
        results = measure(links, a.runs)
        report(rows, name, results, results.get("ld.lld-22"))

    rows.extend(relink_workloads(a, linkers, dist, only))
    rows.extend(real_native_workloads(a, linkers, dist, only))

    notes = ""
    if shutil.which("gcc") and (not only or only & {"gcc-lto", "lua-gcc-lto"}):
        rows.extend(gcc_lto(a, dtld, src, only))
        notes = ("gcc-lto workloads: the whole `gcc -flto=auto` link is timed (GCC's LTO runs inside it: plugin, "
                 "lto-wrapper, lto1), peak RSS is the largest process (lto1), ratios are to GNU ld.\n\n")
    write_results(os.path.join(OUT, "results.md"), a, rows, notes)


def real_native_workloads(a, linkers, dist, only):
    """openssl-native, openssl-native-g, large-debug and lua-dtlto-e2e (scripts/bench_native.py):
    built by --prepare, measured when present."""
    if a.prepare:
        bench_native.prepare(only, os.environ.get("DTLD", os.path.join(ROOT, "target", "release", "dtld")), lambda m: print(m, flush=True))
    rows = []
    work = bench_native.native_workloads(linkers, only, link_command, CLANG)
    work += bench_native.dtlto_e2e_workloads(linkers, dist, only, link_command, CLANG)
    for name, links in work:
        results = measure(links, a.runs)
        report(rows, name, results, results.get("ld.lld-22"))
    return rows


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
            links = {}
            for lname, l in linkers:
                lto_dtlto = kind.startswith("dtlto")
                if lname == "mold" and (kind == "thin-link" or lto_dtlto or prog == "openssl"):
                    continue  # mold has no index-only mode and no DTLTO; OpenSSL: see below
                d = os.path.join(work, name, lname)
                shutil.rmtree(d, ignore_errors=True)
                os.makedirs(d)
                # The unchanged and changed relinks of a mode share a linker's cache: the first
                # link of the program (all backends compiled) is paid once per linker and mode.
                # dtld-before shares dtld's in-process cache (the same LLVM cache entries).
                cache_owner = "dtld" if lname == "dtld-before" and not lto_dtlto else lname
                cache = os.path.join(work, f"{prog}-{'dtlto' if lto_dtlto else 'in-process'}-cache", cache_owner)
                os.makedirs(cache, exist_ok=True)
                out = os.path.join(d, prog)
                flags = ["-flto=thin", "-pie"]
                if kind == "thin-link":
                    flags += [f"-Wl,--thinlto-index-only={d}/linked.txt", f"-Wl,--thinlto-prefix-replace={cwd}/;{d}/idx/"]
                    ins = [i if i.startswith("-") or os.path.isabs(i) else os.path.join(cwd, i) for i in inputs]
                elif lname == "mold":
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
            report(rows, name, results, results.get("ld.lld-22"))
    return rows


def gcc_lto(a, dtld, src, only):
    """The GCC LTO workloads: see the module docstring."""
    tools = os.path.join(OUT, "gcc-tools")
    os.makedirs(tools, exist_ok=True)
    with open(os.path.join(tools, "ld"), "w") as fh:
        fh.write(f"#!/bin/sh\nexec {dtld} \"$@\"\n")
    os.chmod(os.path.join(tools, "ld"), 0o755)
    linkers = [("dtld", f"-B{tools}/"), ("ld.bfd", "-fuse-ld=bfd")]
    if shutil.which("mold"):
        linkers.append(("mold", "-fuse-ld=mold"))
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
        links = {}
        for lname, sel in linkers:
            out = os.path.join(work, f"{name}.{lname}")
            links[lname] = (["gcc", "-flto=auto", sel, "-pie", *objs, *libs, "-o", out], work, None)
        # Every program must work, and alike, before anything is timed.
        outs = {}
        for lname, (cmd, cwd, env) in links.items():
            run_isolated(cmd, cwd, env)
            outs[lname] = sh([os.path.join(work, f"{name}.{lname}"), "-v" if name.startswith("lua") else "--"], cwd=work).stdout.strip()
        if len(set(outs.values())) != 1:
            raise RuntimeError(f"bench: the {name} programs disagree: {outs}")
        results = measure(links, a.runs)
        report(rows, name, results, results.get("ld.bfd"), "ld.bfd")
    return rows


if __name__ == "__main__":
    main()
