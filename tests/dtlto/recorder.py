#!/usr/bin/env python3
# A DTLTO distributor written only from LLVM's documented contract (llvm/docs/DTLTO.rst, "JSON
# Schema"): it is run as `<distributor> [args...] <job file>` in the linker's working directory,
# reads the JSON job file named by its last argument, and runs `common.args + job.args` for every
# job, in parallel, in its own working directory. Everything else is the linker's business.
#
# It exists twice over:
# * run as is (`CONFIG = {}`), it is a stand-in local distributor, e.g. for the differential
#   harness before dtld-distribute exists:
#   `DTLD_DISTRIBUTOR=$PWD/tests/dtlto/recorder.py cargo test -p dtld-tests --test differential -- dtlto`;
# * tests/dtlto writes a copy with CONFIG filled in: `log` (a directory) makes it record every
#   invocation (one JSON line per call in `<log>/calls.jsonl`: argv, cwd, pid, the name of a
#   copy of the job file, and the names in the job file's directory when the distributor
#   started), and `mode` makes it misbehave on purpose (see MODES).
#
# The log lives outside the directory the tests compare before and after a link.
import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import sys
import time

CONFIG = {}

MODES = {
    "run": "run every job (the contract)",
    "exit3": "run nothing and exit with status 3",
    "sigkill": "run nothing and die by SIGKILL",
    "nothing": "run nothing and exit 0",
    "empty": "create every output as an empty file and exit 0",
    "garbage": "write non-ELF bytes to every output and exit 0",
    "sleep": "sleep 5 s first (exit 130 on SIGINT, 1 if the job file is gone by then), then run",
    "keep": "run every job, then copy each job's shard and object into <log>/kept/",
}


def record(log, argv):
    os.makedirs(log, exist_ok=True)
    copy = "%d-%d.json" % (os.getpid(), time.monotonic_ns())
    shutil.copyfile(argv[-1], os.path.join(log, copy))
    staged = sorted(os.listdir(os.path.dirname(argv[-1]) or "."))
    line = json.dumps({"argv": argv, "cwd": os.getcwd(), "pid": os.getpid(), "copy": copy, "staged": staged})
    # One write of one line with O_APPEND: concurrent distributors do not interleave.
    fd = os.open(os.path.join(log, "calls.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def run_job(common, job):
    argv = common["args"] + job["args"]
    done = subprocess.run(argv)
    return job, done.returncode


def run_jobs(jobs_file):
    with open(jobs_file, encoding="utf-8") as f:
        data = json.load(f)
    common, jobs = data["common"], data["jobs"]
    failed = []
    workers = max(1, os.cpu_count() or 1)
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        for job, rc in pool.map(lambda j: run_job(common, j), jobs):
            if rc != 0:
                failed.append((job, rc))
    for job, rc in failed:
        print("recorder.py: job for %s failed with exit status %d" % (job["args"][0], rc),
              file=sys.stderr)
    return 1 if failed else 0


def outputs(jobs_file):
    with open(jobs_file, encoding="utf-8") as f:
        return [job["outputs"][0] for job in json.load(f)["jobs"]]


def main():
    argv = sys.argv
    if len(argv) < 2:
        print("usage: recorder.py [args...] <job file>", file=sys.stderr)
        return 2
    jobs_file = argv[-1]
    mode = CONFIG.get("mode", "run")
    if mode not in MODES:
        print("recorder.py: unknown mode %r" % mode, file=sys.stderr)
        return 2
    if CONFIG.get("log"):
        record(CONFIG["log"], argv)
    if mode == "exit3":
        return 3
    if mode == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "nothing":
        return 0
    if mode in ("empty", "garbage"):
        for out in outputs(jobs_file):
            with open(out, "wb") as f:
                if mode == "garbage":
                    f.write(b"this is not an ELF object\n" * 8)
        return 0
    if mode == "sleep":
        try:
            time.sleep(5)
        except KeyboardInterrupt:
            return 130
        if not os.path.exists(jobs_file):
            return 1
    rc = run_jobs(jobs_file)
    if mode == "keep":
        kept = os.path.join(CONFIG["log"], "kept")
        os.makedirs(kept, exist_ok=True)
        with open(jobs_file, encoding="utf-8") as f:
            for job in json.load(f)["jobs"]:
                for p in job["inputs"] + job["outputs"]:
                    if p.endswith(".thinlto.bc") or p in job["outputs"]:
                        shutil.copyfile(p, os.path.join(kept, os.path.basename(p)))
    return rc


if __name__ == "__main__":
    sys.exit(main())
