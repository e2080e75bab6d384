#!/usr/bin/env python3
"""REAPI benchmark: DTLTO links through dtld-reapi on a real engine against the local distributor.

Why this exists: remote execution trades a per-action overhead (upload, scheduling, sandbox,
download) for parallelism and a shared action cache. This measures both sides on one machine,
with buildbox-casd in local-execution mode as the engine (scripts/buildbox.sh installs it), so the
numbers are the engine's and the client's overheads, not a network's. A benchmark script, not a
timed test.

Reported (medians of --runs runs):
  per-action overhead   distributor time per job, remote (-j1, every action executed) minus local
                        (dtld-distribute -j1), from the distributors' own timings
  per-hit cost          distributor time per job when every action hits the action cache
  local                 the whole link (clang driver, dtld, thin link, backends) with dtld-distribute
  remote cold           the same with dtld-reapi on an engine with an empty cache
  remote warm           relink of the same output: every action hits
  remote warm, other dir  the link from a different directory (same output name): every action hits

Workloads: a synthetic ThinLTO program (scripts/bench.py's generator, --modules x --funcs), and
Lua 5.4 when scripts/real-programs/lua.sh has built its ThinLTO objects.

Usage: scripts/bench-remote.py [--runs N] [--modules M] [--funcs F]
Results: printed, and written to target/bench/remote.md.
"""

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import ROOT, OUT, CLANG, generate, compile_all, sh  # noqa: E402


class Engine:
    """buildbox-casd serving REAPI with local execution on a free loopback port; stop() kills it
    by PID and removes its cache."""

    def __init__(self, bbdir):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.cache = tempfile.mkdtemp(prefix="dtld-bench-casd.")
        runner = [f"--runner-arg=--ro-bind-mount={m}" for m in ("/usr:/usr", "/usr/lib:/lib", "/usr/lib64:/lib64", "/usr/bin:/bin")]
        self.proc = subprocess.Popen(
            [os.path.join(bbdir, "buildbox-casd"), f"--bind=127.0.0.1:{self.port}", f"--buildbox-run={os.path.join(bbdir, 'buildbox-run')}",
             f"--jobs={os.cpu_count() or 2}", "--cache-failures=false", "--log-level=warning", *runner, self.cache],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError("buildbox-casd exited at start")
                time.sleep(0.02)
        raise RuntimeError("buildbox-casd did not start")

    def endpoint(self):
        return f"grpc://127.0.0.1:{self.port}"

    def stop(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        shutil.rmtree(self.cache, ignore_errors=True)


def link(dtld, dist, objs, cwd, out, env=None, xargs=()):
    """One DTLTO link through the clang driver; returns (wall seconds, stderr)."""
    os.makedirs(cwd, exist_ok=True)
    cmd = [CLANG, "-flto=thin", "-pie", f"-fuse-ld={dtld}", f"-fthinlto-distributor={dist}"]
    cmd += [f"-Xthinlto-distributor={a}" for a in xargs] + objs + ["-lm", "-o", out]
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    if r.returncode != 0:
        raise RuntimeError(f"link failed: {' '.join(cmd)}\n{r.stderr[-3000:]}")
    return wall, r.stderr


def counts(stderr):
    m = re.findall(r"^dtld-reapi: summary: (.*)$", stderr, re.M)
    if not m:
        raise RuntimeError(f"no dtld-reapi summary in:\n{stderr[-2000:]}")
    kv = dict(p.split("=", 1) for p in m[-1].split())
    kv["time"] = float(kv["time"].rstrip("s"))
    return kv


def local_time(stderr):
    m = re.search(r"^dtld-distribute: (\d+) jobs, total ([0-9.]+) s", stderr, re.M)
    return int(m.group(1)), float(m.group(2))


def bench(name, objs, dtld, dist, reapi, bbdir, runs, rows):
    work = os.path.join(OUT, "remote", name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    med = statistics.median
    loc, loc_j1 = [], []
    for i in range(runs):
        loc.append(link(dtld, dist, objs, work, "prog-local")[0])
        loc_j1.append(local_time(link(dtld, dist, objs, work, "prog-local", xargs=["-j1", "--verbose"])[1]))
    jobs = loc_j1[0][0]
    cold, warm, other, cold_j1_dist, warm_dist, hits_other = [], [], [], [], [], []
    for i in range(runs):
        e = Engine(bbdir)
        try:
            env = {"DTLD_REAPI_ENDPOINT": e.endpoint(), "DTLD_REAPI_PROGRESS": "never"}
            w, err = link(dtld, reapi, objs, work, "prog", env)
            c = counts(err)
            assert c["executed"] == str(jobs), c
            cold.append(w)
            w, err = link(dtld, reapi, objs, work, "prog", env)
            c = counts(err)
            assert c["cache_hits"] == str(jobs), c
            warm.append(w)
            warm_dist.append(c["time"])
            # Another directory, the same output name: the temporaries' relative paths (and so
            # the Actions) are the same. A different output name gives different paths.
            w, err = link(dtld, reapi, objs, os.path.join(work, "elsewhere", "deeper"), "prog", env)
            other.append(w)
            hits_other.append(int(counts(err)["cache_hits"]))
        finally:
            e.stop()
        e = Engine(bbdir)
        try:
            env = {"DTLD_REAPI_ENDPOINT": e.endpoint(), "DTLD_REAPI_PROGRESS": "never"}
            cold_j1_dist.append(counts(link(dtld, reapi, objs, work, "prog", env, xargs=["-j1"])[1])["time"])
        finally:
            e.stop()
    overhead = (med(cold_j1_dist) - med(t for _, t in loc_j1)) / jobs
    rows.append((name, jobs, overhead * 1000, med(warm_dist) / jobs * 1000, med(loc), med(cold), med(warm), med(other), f"{min(hits_other)}/{jobs}"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--modules", type=int, default=64)
    ap.add_argument("--funcs", type=int, default=40)
    a = ap.parse_args()
    rel = os.path.join(ROOT, "target", "release")
    dtld = os.environ.get("DTLD", os.path.join(rel, "dtld"))
    dist = os.environ.get("DTLD_DISTRIBUTOR", os.path.join(rel, "dtld-distribute"))
    reapi = os.environ.get("DTLD_REAPI", os.path.join(rel, "dtld-reapi"))
    for tool in (dtld, dist, reapi):
        if not os.access(tool, os.X_OK):
            sys.exit(f"bench-remote: {tool} not found; run cargo build --release --workspace --bins")
    bbdir = sh(["bash", os.path.join(ROOT, "scripts", "buildbox.sh"), "install"]).stdout.strip()
    if not shutil.which("bwrap"):
        sys.exit("bench-remote: bwrap missing (apt-get install bubblewrap)")
    src = os.path.join(OUT, f"src-{a.modules}x{a.funcs}")
    generate(src, a.modules, a.funcs)
    workloads = [(f"synthetic {a.modules}x{a.funcs}", compile_all(src, os.path.join(OUT, f"obj-{a.modules}x{a.funcs}-thin"), ["-fPIE", "-flto=thin"]))]
    lua = os.path.join(ROOT, "target", "real-programs", "lua", "obj-pic-lto-thin")
    if os.path.exists(os.path.join(lua, "liblua.a")):
        workloads.append(("lua 5.4", [os.path.join(lua, "lua.o"), os.path.join(lua, "liblua.a"), "-ldl"]))
    rows = []
    for name, objs in workloads:
        print(f"bench-remote: {name} ...", flush=True)
        bench(name.replace(" ", "-"), objs, dtld, dist, reapi, bbdir, a.runs, rows)
    head = ("workload", "jobs", "per-action overhead (ms)", "per-hit cost (ms)", "local (s)", "remote cold (s)", "remote warm (s)", "remote warm, other dir (s)", "hits, other dir")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append(f"| {r[0]} | {r[1]} | {r[2]:.0f} | {r[3]:.1f} | {r[4]:.2f} | {r[5]:.2f} | {r[6]:.2f} | {r[7]:.2f} | {r[8]} |")
    text = "\n".join(lines) + f"\n\n{os.cpu_count()} cores; engine: buildbox-casd local execution on 127.0.0.1; medians of {a.runs} runs.\n"
    print(text)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "remote.md"), "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
